package executor

import (
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/sql/catalog"
	"github.com/shoaldb/shoal/types"
)

// TIMESTAMP columns are stored in UTC and travel through plans in the
// session's time zone (types/timezone.go). The conversions happen where
// rows and keys meet storage: decoding a row or an index entry
// (fromStoredTime), encoding a row value, a handle or an index key, and
// turning a range or point bound into a key (toStoredTime). Everything in
// between (filters, joins, expressions, results) sees session-zone
// values, as MySQL's do.

// zone is the statement's time zone.
func (ctx *Context) zone() *types.TimeZone { return ctx.Eval.Zone() }

// toStoredTime converts a TIMESTAMP column's value from zone to UTC; any
// other value is returned as is.
func toStoredTime(d types.Datum, ft *types.FieldType, zone *types.TimeZone) types.Datum {
	if ft.Tp != mysql.TypeTimestamp || d.Kind() != types.KindTime || zone.IsUTC() {
		return d
	}
	utc, _ := zone.ToUTC(d.TimeFields(), d.Fold())
	return types.NewTimeFromPacked(utc.Pack(), d.TimeType(), d.Fsp())
}

// fromStoredTime converts a stored TIMESTAMP value to zone, marking the
// later instant of an overlap so that writing it back keeps it.
func fromStoredTime(d types.Datum, zone *types.TimeZone) types.Datum {
	if d.Kind() != types.KindTime || zone.IsUTC() {
		return d
	}
	local, fold := zone.FromUTC(d.TimeFields())
	return types.NewTimeFromPacked(local.Pack(), d.TimeType(), d.Fsp()).WithFold(fold)
}

// rowFromStored converts a decoded full-width row's TIMESTAMP columns to
// zone in place.
func (tc *tableCodec) rowFromStored(row types.Row, zone *types.TimeZone) {
	if zone.IsUTC() {
		return
	}
	for _, off := range tc.timestampOffsets {
		row[off] = fromStoredTime(row[off], zone)
	}
}

// castTimestamp finishes storing v, d as a TIMESTAMP column's type, into
// c: the instant it names in the session's zone must lie in TIMESTAMP's
// range ('1970-01-01 00:00:01' to '2038-01-19 03:14:07.999999' UTC), else
// 1292 in strict mode or a warning and the zero value. A local time in a
// DST gap does not exist: 1292 in strict mode, else warning 1299 and the
// first instant after the gap (MySQL's rule). A value that carries the
// overlap mark (a TIMESTAMP read, NOW() in an overlap) keeps it.
func castTimestamp(ctx *Context, d, v types.Datum, c *catalog.ColumnInfo, row int, incorrect func() *errno.SQLError) (types.Datum, error) {
	zone := ctx.zone()
	fold := d.Kind() == types.KindTime && d.Fold()
	utc, gap := zone.ToUTC(v.TimeFields(), fold)
	zero := types.NewTime(types.TimeFields{}, v.TimeType(), v.Fsp())
	if !types.TimestampInRange(utc) {
		if err := castFail(ctx, ctx.StrictMode, incorrect()); err != nil {
			return d, err
		}
		return zero, nil
	}
	if gap {
		if ctx.StrictMode {
			return d, incorrect()
		}
		ctx.Eval.AppendWarning(errno.New(mysql.ErrWarnInvalidTimestamp, "Invalid TIMESTAMP value in column '%s' at row %d", c.Name, row))
		local, _ := zone.FromUTC(utc)
		return types.NewTimeFromPacked(local.Pack(), v.TimeType(), v.Fsp()), nil
	}
	return v.WithFold(fold), nil
}

package executor

import (
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/sql/catalog"
	"github.com/shoaldb/shoal/sql/expression"
	"github.com/shoaldb/shoal/tablecodec"
	"github.com/shoaldb/shoal/types"
)

// What sql/ddl needs from the executor's row handling: an index backfill
// decodes rows and builds their index entries exactly as the writers do,
// and ADD COLUMN fills defaults as INSERT would.

// DecodeRecord decodes the stored row value of handle h of t, full width
// (every column of t, in order), in its stored form (TIMESTAMP columns in
// UTC, which IndexValues expects).
func DecodeRecord(t *catalog.TableInfo, h tablecodec.Handle, value []byte) (types.Row, error) {
	return codecOf(t).decodeRow(t, h, value, !t.PKIsHandle && !t.CommonHandle)
}

// IndexValues are the values row stores in idx's entry (folded for _ci
// columns, as writers store them).
func IndexValues(t *catalog.TableInfo, idx *catalog.IndexInfo, row types.Row) []types.Datum {
	return indexValues(t, idx, row)
}

// DuplicateEntry is the 1062 error for row's key in idx of t.
func DuplicateEntry(t *catalog.TableInfo, idx *catalog.IndexInfo, row types.Row) error {
	return ErrDupEntry(t, idx, displayValues(idx, row))
}

// ZeroValue is the implicit default of a NOT NULL column without one.
func ZeroValue(c *catalog.ColumnInfo) types.Datum { return zeroValue(c) }

// IsCurrentTimestamp reports whether a stored DEFAULT is CURRENT_TIMESTAMP
// (or a synonym), evaluated per statement.
func IsCurrentTimestamp(def string) bool { return isCurrentTimestamp(def) }

// GeneratedValue computes generated column c of row number rowNum (as decoded under a
// schema with c or without it) as a strict-mode write would: NULL into a
// NOT NULL column is 1048, a value c cannot hold its cast's error.
func GeneratedValue(e expression.Expr, c *catalog.ColumnInfo, row types.Row, rowNum int) (types.Datum, error) {
	ctx := &Context{Eval: &expression.Context{Strict: true}, StrictMode: true}
	v, err := e.Eval(ctx.Eval, row)
	if err != nil {
		return types.Datum{}, err
	}
	if v, err = CastToColumn(ctx, v, c, rowNum); err != nil {
		return types.Datum{}, err
	}
	if v.IsNull() && c.Type.NotNull() {
		return types.Datum{}, errno.NewStd(mysql.ErrBadNull, c.Name)
	}
	return v, nil
}

// StoredValue is column c's value d (in zone, as statements see it) in
// its stored form: a TIMESTAMP in UTC, anything else unchanged.
func StoredValue(d types.Datum, c *catalog.ColumnInfo, zone *types.TimeZone) types.Datum {
	return toStoredTime(d, &c.Type, zone)
}

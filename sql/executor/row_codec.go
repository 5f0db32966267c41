package executor

import (
	"sync"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/sql/catalog"
	"github.com/shoaldb/shoal/sql/expression"
	"github.com/shoaldb/shoal/sql/planner"
	"github.com/shoaldb/shoal/tablecodec"
	"github.com/shoaldb/shoal/types"
)

// evalCtxNoWarn evaluates stored defaults, which were checked when
// declared, with no statement to take warnings.
var evalCtxNoWarn expression.Context

// tableCodec caches, per table schema version (TableInfo pointer), what
// reading and writing its rows needs.
type tableCodec struct {
	decoder *tablecodec.RowDecoder
	// valueCols are the columns stored in the row value (all but an integer
	// handle column and delete-only columns).
	valueColIDs  []int64
	valueOffsets []int
	handleOffset int // -1 unless PKIsHandle
	pkOffsets    []int
	// onRead are the generated columns readers compute (GeneratedOnRead),
	// in table order; onReadErr is why they could not be compiled.
	onRead    []planner.ColumnExpr
	onReadErr error
	// timestampOffsets are the TIMESTAMP columns (stored in UTC).
	timestampOffsets []int
}

var codecCache sync.Map // *catalog.TableInfo -> *tableCodec

func codecOf(t *catalog.TableInfo) *tableCodec {
	if c, ok := codecCache.Load(t); ok {
		return c.(*tableCodec)
	}
	tc := &tableCodec{handleOffset: -1}
	if t.PKIsHandle {
		tc.handleOffset = t.HandleColumn().Offset
	}
	if t.CommonHandle {
		for _, ic := range t.PrimaryIndex().Columns {
			tc.pkOffsets = append(tc.pkOffsets, ic.Offset)
		}
	}
	cols := make([]tablecodec.RowColumn, len(t.Columns))
	for i, c := range t.Columns {
		rc := tablecodec.RowColumn{ID: c.ID, Type: &c.Type, FromHandle: i == tc.handleOffset}
		if c.OriginNull {
			// Rows from before the column was added read NULL.
		} else if c.OriginDefault != nil {
			rc.Default = staticDefault(c, *c.OriginDefault)
		} else if c.Default != nil {
			rc.Default = staticDefault(c, *c.Default)
		}
		cols[i] = rc
		if c.Type.Tp == mysql.TypeTimestamp {
			tc.timestampOffsets = append(tc.timestampOffsets, i)
		}
		// A delete-only column is not written: nodes that do not know it
		// yet (or any more) share the table, and rows read it as its
		// default.
		if i != tc.handleOffset && c.State != catalog.StateDeleteOnly {
			tc.valueColIDs = append(tc.valueColIDs, c.ID)
			tc.valueOffsets = append(tc.valueOffsets, i)
		}
	}
	tc.decoder = tablecodec.NewRowDecoder(cols)
	for _, c := range t.Columns {
		if c.GeneratedOnRead {
			e, err := planner.CompileRowExprText(t, c.GeneratedExpr)
			if err != nil {
				tc.onReadErr = err
				break
			}
			tc.onRead = append(tc.onRead, planner.ColumnExpr{Offset: c.Offset, Col: c, Expr: e})
		}
	}
	actual, _ := codecCache.LoadOrStore(t, tc)
	return actual.(*tableCodec)
}

// staticDefault converts a column's literal default without a session (for
// rows written before the column existed).
func staticDefault(c *catalog.ColumnInfo, literal string) types.Datum {
	ctx := &Context{Eval: &evalCtxNoWarn}
	d, err := CastToColumn(ctx, types.NewString(literal), c, 0)
	if err != nil {
		return types.Datum{}
	}
	return d.Clone()
}

// decodeRow decodes a row value (copied: it may come from an engine
// iterator, whose memory is reused) into a new full-width row in its
// stored form (TIMESTAMP columns in UTC), for DDL backfills and checks
// that write it back as it was.
func (tc *tableCodec) decodeRow(t *catalog.TableInfo, h tablecodec.Handle, val []byte, extraHandle bool) (types.Row, error) {
	return tc.decodeOwnedRow(t, h, append([]byte(nil), val...), extraHandle, types.UTC)
}

// decodeOwnedRow decodes a row value nothing changes (a Get, BatchGet or
// kv.Iterator result): the row's datums alias it, no copy. TIMESTAMP
// columns are converted to zone.
func (tc *tableCodec) decodeOwnedRow(t *catalog.TableInfo, h tablecodec.Handle, owned []byte, extraHandle bool, zone *types.TimeZone) (types.Row, error) {
	return tc.decodeOwnedRowIn(nil, t, h, owned, extraHandle, zone)
}

// decodeOwnedRowIn is decodeOwnedRow with the row carved from a (nil: a
// row of its own).
func (tc *tableCodec) decodeOwnedRowIn(a *rowAlloc, t *catalog.TableInfo, h tablecodec.Handle, owned []byte, extraHandle bool, zone *types.TimeZone) (types.Row, error) {
	width := len(t.Columns)
	if extraHandle {
		width++
	}
	var row types.Row
	if a != nil {
		row = a.row(width)
	} else {
		row = make(types.Row, width)
	}
	if err := tc.decodeInto(row, h, owned, extraHandle, zone); err != nil {
		return nil, err
	}
	return row, nil
}

// rowAlloc carves rows out of shared chunks: one allocation per chunk of
// rows rather than one per row, on the paths that produce a row per key
// read. A chunk lives as long as any of its rows is held. The first chunk
// holds one row and each next one twice as many, up to rowAllocChunk
// datums, so a point read allocates no more than before.
type rowAlloc struct {
	free []types.Datum
	next int // datums in the next chunk (0: one row's worth)
}

// rowAllocChunk is the largest chunk, in datums (rows wider than that get
// a chunk of their own size).
const rowAllocChunk = 256

// row returns a zeroed row of width datums, capped at its width so an
// append never writes into a neighbour.
func (a *rowAlloc) row(width int) types.Row {
	if len(a.free) < width {
		n := max(a.next, width)
		a.free = make([]types.Datum, n)
		a.next = min(2*n, max(rowAllocChunk, width))
	}
	r := a.free[:width:width]
	a.free = a.free[width:]
	return r
}

// decodeInto decodes a row value into row, a full-width row (plus the
// handle when extraHandle), TIMESTAMP columns converted to zone; its datums
// alias val.
func (tc *tableCodec) decodeInto(row types.Row, h tablecodec.Handle, val []byte, extraHandle bool, zone *types.TimeZone) error {
	if err := tc.decoder.Decode(val, h, row); err != nil {
		return err
	}
	tc.rowFromStored(row, zone)
	if extraHandle {
		row[len(row)-1] = types.NewInt(h.IntValue())
	}
	if tc.onRead != nil || tc.onReadErr != nil {
		return tc.computeOnRead(row)
	}
	return nil
}

// computeOnRead sets the generated columns readers compute, as writers
// would have (non-strict: a value the column cannot hold is clipped).
func (tc *tableCodec) computeOnRead(row types.Row) error {
	if tc.onReadErr != nil {
		return tc.onReadErr
	}
	ctx := &Context{Eval: &expression.Context{}}
	for _, g := range tc.onRead {
		v, err := g.Expr.Eval(ctx.Eval, row)
		if err != nil {
			return err
		}
		if row[g.Offset], err = CastToColumn(ctx, v, g.Col, 0); err != nil {
			return err
		}
	}
	return nil
}

// encodeRowValue encodes the stored columns of a full-width row whose
// TIMESTAMP columns are in zone.
func (tc *tableCodec) encodeRowValue(buf []byte, t *catalog.TableInfo, row types.Row, zone *types.TimeZone) []byte {
	vals := make([]types.Datum, len(tc.valueOffsets))
	for i, off := range tc.valueOffsets {
		vals[i] = row[off]
		if off < len(t.Columns) {
			vals[i] = toStoredTime(vals[i], &t.Columns[off].Type, zone)
		}
	}
	return tablecodec.EncodeRow(buf, tc.valueColIDs, vals)
}

// handleOf returns the handle of a full-width row whose TIMESTAMP columns
// are in zone (extra is the hidden row id for tables without a clustered
// key).
func (tc *tableCodec) handleOf(t *catalog.TableInfo, row types.Row, zone *types.TimeZone) (tablecodec.Handle, error) {
	switch {
	case tc.handleOffset >= 0:
		return intHandle(row[tc.handleOffset]), nil
	case t.CommonHandle:
		vals := make([]types.Datum, len(tc.pkOffsets))
		for i, off := range tc.pkOffsets {
			ft := &t.Columns[off].Type
			vals[i] = types.CollationKey(toStoredTime(row[off], ft, zone), ft)
		}
		h, _, err := tablecodec.EncodeCommonHandle(nil, vals)
		return h, err
	default:
		return tablecodec.IntHandle(row[len(t.Columns)].Int()), nil
	}
}

// indexValues extracts the values of idx's columns from a full-width row
// in its stored form (TIMESTAMP columns in UTC).
func indexValues(t *catalog.TableInfo, idx *catalog.IndexInfo, row types.Row) []types.Datum {
	return indexValuesIn(t, idx, row, types.UTC)
}

// indexValuesIn extracts the key values of idx's columns from a full-width
// row whose TIMESTAMP columns are in zone.
func indexValuesIn(t *catalog.TableInfo, idx *catalog.IndexInfo, row types.Row, zone *types.TimeZone) []types.Datum {
	vals := make([]types.Datum, len(idx.Columns))
	for i, ic := range idx.Columns {
		ft := &t.Columns[ic.Offset].Type
		v := toStoredTime(row[ic.Offset], ft, zone)
		// A prefix counts characters of the value, not of its sort key.
		if ic.Length > 0 && !v.IsNull() {
			b := v.Bytes()
			b = truncateChars(b, min(ic.Length, len(b)), v.Kind() == types.KindBytes)
			if v.Kind() == types.KindBytes {
				v = types.NewBytes(b)
			} else {
				v = types.NewStringBytes(b)
			}
		}
		vals[i] = types.CollationKey(v, ft)
	}
	return vals
}

// displayValues are the values of idx's columns as written, for messages.
func displayValues(idx *catalog.IndexInfo, row types.Row) []types.Datum {
	vals := make([]types.Datum, len(idx.Columns))
	for i, ic := range idx.Columns {
		vals[i] = row[ic.Offset]
	}
	return vals
}

package executor

import (
	"errors"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/sql/catalog"
	"github.com/shoaldb/shoal/sql/planner"
	"github.com/shoaldb/shoal/tablecodec"
	"github.com/shoaldb/shoal/types"
)

// writer maintains a table's row and index entries in the transaction.
//
// Indexes under an online schema change are maintained as their state
// says (see catalog.SchemaState): a delete-only index loses the entries of
// deleted and changed rows and gains none; a write-only one is maintained
// like a public one, its uniqueness checked too (public nodes may share
// the table with this one). Rows written before an ADD INDEX reached
// write-only have no entry in it until the backfill: a unique key of a
// non-public index is deleted only when it points at the row at hand, as
// another row with the same value may own it.
type writer struct {
	ctx *Context
	t   *catalog.TableInfo
	tc  *tableCodec
	idx []*catalog.IndexInfo // stored indexes, in any state
}

func newWriter(ctx *Context, t *catalog.TableInfo) *writer {
	return &writer{ctx: ctx, t: t, tc: codecOf(t), idx: t.WritableIndices()}
}

// adds reports whether writes add entries to idx (public or write-only).
func adds(idx *catalog.IndexInfo) bool { return idx.State != catalog.StateDeleteOnly }

func (w *writer) rowKey(h tablecodec.Handle) kv.Key {
	return tablecodec.EncodeRecordKey(nil, w.t.ID, h)
}

// exists reports whether k has a value as this statement reads.
func (w *writer) exists(k kv.Key) ([]byte, bool, error) {
	v, err := w.ctx.Txn.Get(w.ctx.Ctx, k)
	if errors.Is(err, kv.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return v, true, nil
}

// dupError is a duplicate found while adding a row: the conflicting
// existing row's handle and the key that clashed.
type dupError struct {
	handle tablecodec.Handle
	err    error
}

func (d *dupError) Error() string { return d.err.Error() }
func (d *dupError) Unwrap() error { return d.err }

// uniqueKeys returns the keys whose absence adding row requires: the row key
// and each unique index key without NULLs.
func (w *writer) uniqueKeys(row types.Row, h tablecodec.Handle) ([]kv.Key, []*catalog.IndexInfo) {
	keys := []kv.Key{w.rowKey(h)}
	owners := []*catalog.IndexInfo{nil}
	for _, idx := range w.idx {
		if !idx.Unique || !adds(idx) {
			continue
		}
		vals := indexValuesIn(w.t, idx, row, w.ctx.zone())
		if tablecodec.IndexKeyHasHandle(true, vals) {
			continue
		}
		keys = append(keys, tablecodec.EncodeIndexKey(nil, w.t.ID, idx.ID, vals, tablecodec.Handle{}))
		owners = append(owners, idx)
	}
	return keys, owners
}

// prefetchUnique reads, in one request, the keys whose absence inserting
// rows needs, so that their duplicate checks (checkDup, one row at a time)
// find them in the transaction's snapshot cache instead of each making a
// round trip. A pessimistic transaction locks them all at once (it would
// lock each row's as it went; the order of locks within a statement does
// not matter).
func (w *writer) prefetchUnique(rows []types.Row) error {
	var keys []kv.Key
	for _, row := range rows {
		h, err := w.tc.handleOf(w.t, row, w.ctx.zone())
		if err != nil {
			return nil // insertOne reports it
		}
		ks, _ := w.uniqueKeys(row, h)
		keys = append(keys, ks...)
	}
	var err error
	if w.ctx.Pessimistic {
		_, err = w.ctx.lockAndGet(keys)
	} else {
		_, err = w.ctx.Txn.BatchGet(w.ctx.Ctx, keys)
	}
	return err
}

// checkDup looks for an existing row clashing with row on its handle or a
// unique index; it returns a *dupError naming it.
func (w *writer) checkDup(row types.Row, h tablecodec.Handle, skipHandle bool) error {
	keys, owners := w.uniqueKeys(row, h)
	// A pessimistic transaction locks the keys and reads them in one go.
	var locked map[string][]byte
	if w.ctx.Pessimistic {
		var err error
		if locked, err = w.ctx.lockAndGet(keys); err != nil {
			return err
		}
	}
	for i, k := range keys {
		if i == 0 && skipHandle {
			continue
		}
		var v []byte
		var ok bool
		if locked != nil {
			v, ok = locked[string(k)]
		} else {
			var err error
			if v, ok, err = w.exists(k); err != nil {
				return err
			}
		}
		if !ok {
			continue
		}
		var other tablecodec.Handle
		if i == 0 {
			other = h
		} else {
			var err error
			if other, err = tablecodec.DecodeIndexValue(v); err != nil {
				return err
			}
			if other.Equal(h) && skipHandle {
				continue
			}
		}
		var vals []types.Datum
		if owners[i] == nil {
			vals = w.handleDatums(row)
		} else {
			vals = displayValues(owners[i], row)
		}
		return &dupError{handle: other, err: ErrDupEntry(w.t, owners[i], vals)}
	}
	return nil
}

func (w *writer) handleDatums(row types.Row) []types.Datum {
	if w.tc.handleOffset >= 0 {
		return []types.Datum{row[w.tc.handleOffset]}
	}
	if w.t.CommonHandle {
		vals := make([]types.Datum, len(w.tc.pkOffsets))
		for i, off := range w.tc.pkOffsets {
			vals[i] = row[off]
		}
		return vals
	}
	return []types.Datum{row[len(w.t.Columns)]}
}

// addRow writes a new row and its index entries; the caller has checked
// uniqueness.
func (w *writer) addRow(row types.Row, h tablecodec.Handle) error {
	rk := w.rowKey(h)
	if err := w.ctx.Txn.Set(rk, w.tc.encodeRowValue(nil, w.t, row, w.ctx.zone())); err != nil {
		return err
	}
	for _, idx := range w.idx {
		if !adds(idx) {
			continue
		}
		if err := w.addIndexEntry(idx, row, h); err != nil {
			return err
		}
	}
	return nil
}

func (w *writer) addIndexEntry(idx *catalog.IndexInfo, row types.Row, h tablecodec.Handle) error {
	vals := indexValuesIn(w.t, idx, row, w.ctx.zone())
	k, v := tablecodec.EncodeIndexEntry(nil, nil, w.t.ID, idx.ID, idx.Unique, vals, h)
	if err := w.ctx.Txn.Set(k, v); err != nil {
		return err
	}
	return nil
}

func (w *writer) deleteIndexEntry(idx *catalog.IndexInfo, row types.Row, h tablecodec.Handle) error {
	vals := indexValuesIn(w.t, idx, row, w.ctx.zone())
	k, _ := tablecodec.EncodeIndexEntry(nil, nil, w.t.ID, idx.ID, idx.Unique, vals, h)
	if idx.Unique && !idx.Public() && !tablecodec.IndexKeyHasHandle(true, vals) {
		// Not yet backfilled, this row may have no entry while another
		// row with its value owns the key.
		v, ok, err := w.exists(k)
		if err != nil || !ok {
			return err
		}
		if owner, err := tablecodec.DecodeIndexValue(v); err != nil || !owner.Equal(h) {
			return err
		}
	}
	return w.ctx.Txn.Delete(k)
}

// removeRow deletes a row and its index entries.
func (w *writer) removeRow(row types.Row, h tablecodec.Handle) error {
	if err := w.ctx.Txn.Delete(w.rowKey(h)); err != nil {
		return err
	}
	for _, idx := range w.idx {
		if err := w.deleteIndexEntry(idx, row, h); err != nil {
			return err
		}
	}
	return nil
}

// updateRow replaces old by new (both full-width).
func (w *writer) updateRow(old, new types.Row) error {
	oh, err := w.tc.handleOf(w.t, old, w.ctx.zone())
	if err != nil {
		return err
	}
	nh, err := w.tc.handleOf(w.t, new, w.ctx.zone())
	if err != nil {
		return err
	}
	handleChanged := !oh.Equal(nh)
	if err := w.checkChangedUniques(old, new, nh, handleChanged); err != nil {
		return err
	}
	if handleChanged {
		if err := w.ctx.Txn.Delete(w.rowKey(oh)); err != nil {
			return err
		}
	}
	for _, idx := range w.idx {
		changed := handleChanged
		for _, ic := range idx.Columns {
			if !sameDatum(old[ic.Offset], new[ic.Offset]) {
				changed = true
				break
			}
		}
		if !changed {
			continue
		}
		if err := w.deleteIndexEntry(idx, old, oh); err != nil {
			return err
		}
		if !adds(idx) {
			continue
		}
		if err := w.addIndexEntry(idx, new, nh); err != nil {
			return err
		}
	}
	return w.ctx.Txn.Set(w.rowKey(nh), w.tc.encodeRowValue(nil, w.t, new, w.ctx.zone()))
}

// checkChangedUniques checks that the keys an update moves to are free.
func (w *writer) checkChangedUniques(old, new types.Row, nh tablecodec.Handle, handleChanged bool) error {
	var keys []kv.Key
	var owners []*catalog.IndexInfo
	if handleChanged {
		keys = append(keys, w.rowKey(nh))
		owners = append(owners, nil)
	}
	for _, idx := range w.idx {
		if !idx.Unique || !adds(idx) {
			continue
		}
		changed := false
		for _, ic := range idx.Columns {
			if !sameDatum(old[ic.Offset], new[ic.Offset]) {
				changed = true
			}
		}
		vals := indexValuesIn(w.t, idx, new, w.ctx.zone())
		if !changed || tablecodec.IndexKeyHasHandle(true, vals) {
			continue
		}
		keys = append(keys, tablecodec.EncodeIndexKey(nil, w.t.ID, idx.ID, vals, tablecodec.Handle{}))
		owners = append(owners, idx)
	}
	if len(keys) == 0 {
		return nil
	}
	if w.ctx.Pessimistic {
		if err := w.ctx.lockKeys(keys...); err != nil {
			return err
		}
	}
	for i, k := range keys {
		v, ok, err := w.exists(k)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if owners[i] != nil {
			if other, err := tablecodec.DecodeIndexValue(v); err == nil && other.Equal(nh) {
				continue
			}
			return ErrDupEntry(w.t, owners[i], displayValues(owners[i], new))
		}
		return ErrDupEntry(w.t, nil, w.handleDatums(new))
	}
	return nil
}

func sameDatum(a, b types.Datum) bool {
	if a.IsNull() || b.IsNull() {
		return a.IsNull() == b.IsNull()
	}
	if a.Kind() != b.Kind() {
		return false
	}
	return types.Compare(a, b) == 0
}

// fetchRow reads the current row of handle h.
func (w *writer) fetchRow(h tablecodec.Handle) (types.Row, error) {
	k := w.rowKey(h)
	v, ok, err := w.exists(k)
	if err != nil || !ok {
		if err == nil {
			err = errno.New(mysql.ErrUnknown, "row of handle %s vanished", h.String())
		}
		return nil, err
	}
	return w.tc.decodeOwnedRow(w.t, h.Clone(), v, !w.t.PKIsHandle && !w.t.CommonHandle, w.ctx.zone())
}

// ExecDML runs an INSERT, UPDATE or DELETE plan.
func ExecDML(ctx *Context, p planner.Plan) error {
	switch x := p.(type) {
	case *planner.Insert:
		return execInsert(ctx, x)
	case *planner.Update:
		return execUpdate(ctx, x)
	case *planner.Delete:
		return execDelete(ctx, x)
	}
	return errUnsupportedPlan(p)
}

func drainPlan(ctx *Context, p planner.Plan) ([]types.Row, error) {
	e, err := Build(ctx, p)
	if err != nil {
		return nil, err
	}
	return Drain(e)
}

func execDelete(ctx *Context, p *planner.Delete) error {
	rows, err := drainPlan(ctx, p.Source)
	if err != nil {
		return err
	}
	w := newWriter(ctx, p.Table)
	for _, row := range rows {
		h, err := w.tc.handleOf(p.Table, row, w.ctx.zone())
		if err != nil {
			return err
		}
		if err := w.removeRow(row, h); err != nil {
			return err
		}
		ctx.AffectedRows++
	}
	return nil
}

func execUpdate(ctx *Context, p *planner.Update) error {
	rows, err := drainPlan(ctx, p.Source)
	if err != nil {
		return err
	}
	w := newWriter(ctx, p.Table)
	for i, old := range rows {
		nrow := append(types.Row(nil), old...)
		if err := applyAssignments(ctx, p.Table, p.Assignments, nrow, nrow, i+1); err != nil {
			return err
		}
		if rowsEqual(old, nrow) {
			continue
		}
		if err := touchOnUpdate(ctx, p.Table, p.Assignments, nrow, i+1); err != nil {
			return err
		}
		if err := w.updateRow(old, nrow); err != nil {
			if p.Ignore {
				var se *errno.SQLError
				if errors.As(err, &se) && se.Code == mysql.ErrDupEntry {
					ctx.Eval.AppendWarning(err)
					continue
				}
			}
			return err
		}
		ctx.AffectedRows++
	}
	return nil
}

// applyAssignments evaluates assignments over evalRow, writing into row in
// order (a later assignment sees earlier ones when evalRow is row).
func applyAssignments(ctx *Context, t *catalog.TableInfo, as []planner.Assignment, evalRow, row types.Row, rowNum int) error {
	for _, a := range as {
		var v types.Datum
		var err error
		c := t.Columns[a.Offset]
		if a.Expr == nil {
			v, err = DefaultValue(ctx, c, rowNum)
		} else {
			v, err = a.Expr.Eval(ctx.Eval, evalRow)
		}
		if err != nil {
			return err
		}
		if v, err = CastToColumn(ctx, v, c, rowNum); err != nil {
			return err
		}
		if v.IsNull() && c.Type.NotNull() {
			if ctx.StrictMode {
				return errno.NewStd(mysql.ErrBadNull, c.Name)
			}
			ctx.Eval.AppendWarning(errno.NewStd(mysql.ErrBadNull, c.Name))
			v = zeroValue(c)
		}
		row[a.Offset] = v
	}
	return nil
}

func rowsEqual(a, b types.Row) bool {
	for i := range a {
		if !sameDatum(a[i], b[i]) {
			return false
		}
	}
	return true
}

func execInsert(ctx *Context, p *planner.Insert) error {
	t := p.Table
	w := newWriter(ctx, t)
	hidden := !t.PKIsHandle && !t.CommonHandle
	width := len(t.Columns)
	if hidden {
		width++
	}
	var srcRows []types.Row
	if p.Select != nil {
		var err error
		if srcRows, err = drainPlan(ctx, p.Select); err != nil {
			return err
		}
	}
	n := len(p.Rows)
	if p.Select != nil {
		n = len(srcRows)
	}
	assigned := make([]bool, len(t.Columns))
	for _, off := range p.Targets {
		assigned[off] = true
	}
	// Rows are built a batch at a time, then the keys whose absence they
	// need are read in one request (the duplicate checks then find them in
	// the transaction's snapshot cache), then they are inserted in order.
	// A row that cannot be built ends the statement after the rows before
	// it went in, as if the rows were handled one by one.
	batch := make([]types.Row, 0, min(n, insertBatch))
	for first := 0; first < n; first += insertBatch {
		batch = batch[:0]
		var buildErr error
		for i := first; i < min(n, first+insertBatch); i++ {
			row, err := buildInsertRow(ctx, p, srcRows, assigned, width, hidden, n, i)
			if err != nil {
				buildErr = err
				break
			}
			batch = append(batch, row)
		}
		if len(batch) > 1 {
			if err := w.prefetchUnique(batch); err != nil {
				return err
			}
		}
		for j, row := range batch {
			if err := insertOne(ctx, w, p, row, first+j+1); err != nil {
				return err
			}
		}
		if buildErr != nil {
			return buildErr
		}
	}
	if ctx.InsertID != 0 {
		ctx.LastInsertID = ctx.InsertID
	}
	return nil
}

// insertBatch is how many rows of a multi-row INSERT are built and have
// their duplicate checks prefetched together.
const insertBatch = 256

// buildInsertRow evaluates row i of an INSERT: the given values (or the
// source row), defaults, auto-increment and the hidden row id.
func buildInsertRow(ctx *Context, p *planner.Insert, srcRows []types.Row, assigned []bool, width int, hidden bool, n, i int) (types.Row, error) {
	t := p.Table
	row := make(types.Row, width)
	rowNum := i + 1
	for j, off := range p.Targets {
		c := t.Columns[off]
		var v types.Datum
		var err error
		if p.Select != nil {
			v = srcRows[i][j]
		} else if e := p.Rows[i][j]; e == nil {
			v, err = DefaultValue(ctx, c, rowNum)
		} else {
			v, err = e.Eval(ctx.Eval, nil)
		}
		if err != nil {
			return nil, err
		}
		if v, err = CastToColumn(ctx, v, c, rowNum); err != nil {
			return nil, err
		}
		row[off] = v
	}
	for off, c := range t.Columns {
		if !assigned[off] {
			var v types.Datum
			var err error
			if c.Public() {
				v, err = DefaultValue(ctx, c, rowNum)
			} else {
				v = nonPublicDefault(ctx, c, rowNum)
			}
			if err != nil {
				return nil, err
			}
			row[off] = v
		}
	}
	if err := fillAutoInc(ctx, t, row); err != nil {
		return nil, err
	}
	for off, c := range t.Columns {
		if row[off].IsNull() && c.Type.NotNull() && c.Public() {
			err := errno.NewStd(mysql.ErrBadNull, c.Name)
			if ctx.StrictMode || n == 1 {
				return nil, err
			}
			ctx.Eval.AppendWarning(err)
			row[off] = zeroValue(c)
		}
	}
	if hidden {
		id, err := ctx.Catalog.AllocAutoID(ctx.Ctx, t.ID, 1)
		if err != nil {
			return nil, err
		}
		row[width-1] = types.NewInt(id)
	}
	return row, nil
}

// nonPublicDefault is what an insert writes into a column readers do not
// see: its default, else NULL, or the type's zero value for a NOT NULL
// column (a column being dropped may have no default); never an error,
// as the statement could not have named the column.
func nonPublicDefault(ctx *Context, c *catalog.ColumnInfo, row int) types.Datum {
	if c.Default != nil {
		if v, err := DefaultValue(ctx, c, row); err == nil && !(v.IsNull() && c.Type.NotNull()) {
			return v
		}
	}
	if c.Type.NotNull() {
		return zeroValue(c)
	}
	return types.Datum{}
}

func fillAutoInc(ctx *Context, t *catalog.TableInfo, row types.Row) error {
	if t.AutoIncOffset < 0 {
		return nil
	}
	v := row[t.AutoIncOffset]
	zero := v.IsNull() || (v.Kind() == types.KindInt64 && v.Int() == 0) || (v.Kind() == types.KindUint64 && v.Uint() == 0)
	c := t.Columns[t.AutoIncOffset]
	if !zero {
		iv, _ := v.ToInt()
		if v.Kind() == types.KindUint64 {
			iv = int64(v.Uint())
		}
		if iv > 0 {
			return ctx.Catalog.RebaseAutoID(ctx.Ctx, t.ID, iv)
		}
		return nil
	}
	id, err := ctx.Catalog.AllocAutoID(ctx.Ctx, t.ID, 1)
	if err != nil {
		return err
	}
	d, err := CastToColumn(ctx, types.NewInt(id), c, 0)
	if err != nil {
		return err
	}
	row[t.AutoIncOffset] = d
	if ctx.InsertID == 0 {
		ctx.InsertID = uint64(id)
	}
	return nil
}

func insertOne(ctx *Context, w *writer, p *planner.Insert, row types.Row, rowNum int) error {
	t := p.Table
	h, err := w.tc.handleOf(t, row, w.ctx.zone())
	if err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		err := w.checkDup(row, h, false)
		var dup *dupError
		if err == nil {
			if err := w.addRow(row, h); err != nil {
				return err
			}
			ctx.AffectedRows++
			return nil
		}
		if !errors.As(err, &dup) {
			return err
		}
		switch {
		case p.Replace && attempt < 64:
			old, err := w.fetchRow(dup.handle)
			if err != nil {
				return err
			}
			if err := w.removeRow(old, dup.handle); err != nil {
				return err
			}
			ctx.AffectedRows++
			continue
		case len(p.OnDup) > 0:
			old, err := w.fetchRow(dup.handle)
			if err != nil {
				return err
			}
			evalRow := make(types.Row, 0, 2*len(t.Columns))
			evalRow = append(append(evalRow, old[:len(t.Columns)]...), row[:len(t.Columns)]...)
			nrow := append(types.Row(nil), old...)
			for _, a := range p.OnDup {
				v, err := a.Expr.Eval(ctx.Eval, evalRow)
				if err != nil {
					return err
				}
				c := t.Columns[a.Offset]
				if v, err = CastToColumn(ctx, v, c, rowNum); err != nil {
					return err
				}
				nrow[a.Offset] = v
				evalRow[a.Offset] = v
			}
			if rowsEqual(old, nrow) {
				return nil
			}
			if err := touchOnUpdate(ctx, t, p.OnDup, nrow, rowNum); err != nil {
				return err
			}
			if err := w.updateRow(old, nrow); err != nil {
				return err
			}
			ctx.AffectedRows += 2
			return nil
		case p.Ignore:
			ctx.Eval.AppendWarning(dup.err)
			return nil
		}
		return dup.err
	}
}

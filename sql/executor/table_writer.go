package executor

import (
	"errors"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/sql/catalog"
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

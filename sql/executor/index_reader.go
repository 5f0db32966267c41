package executor

import (
	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/tablecodec"
	"github.com/shoaldb/shoal/types"
)

// nextIndex returns the next row of an index range scan: built from the
// index entry when it covers the query, else fetched in lookup batches.
func (r *tableReader) nextIndex() (types.Row, error) {
	t, idx := r.ts.Table, r.ts.Index
	var handles []kv.Key
	for {
		if r.it == nil {
			if r.cur >= len(r.ranges) {
				break
			}
			it, err := r.openRange()
			if err != nil {
				return nil, err
			}
			r.it = it
		}
		if !r.it.Valid() {
			r.it.Close()
			r.it = nil
			continue
		}
		if r.ts.Cover {
			row, err := r.coverRow(r.it.Key(), r.it.Value())
			if err != nil {
				return nil, err
			}
			if err := r.it.Next(); err != nil {
				return nil, err
			}
			return row, nil
		}
		h, err := tablecodec.DecodeIndexHandle(r.it.Key(), r.it.Value(), len(idx.Columns))
		if err != nil {
			return nil, err
		}
		handles = append(handles, tablecodec.EncodeRecordKey(nil, t.ID, h))
		if err := r.it.Next(); err != nil {
			return nil, err
		}
		if len(handles) >= lookupBatch {
			break
		}
	}
	if len(handles) == 0 {
		r.done = true
		return nil, nil
	}
	got, err := r.ctx.Txn.BatchGet(r.ctx.Ctx, handles)
	if err != nil {
		return nil, err
	}
	r.buf, r.pos = r.buf[:0], 0
	for _, k := range handles {
		if v, ok := got[string(k)]; ok {
			row, err := r.decodeKV(k, v)
			if err != nil {
				return nil, err
			}
			r.buf = append(r.buf, row)
		}
	}
	return r.next()
}

// coverRow builds a full-width row holding only the index columns and the
// handle columns.
func (r *tableReader) coverRow(key, val []byte) (types.Row, error) {
	t, idx := r.ts.Table, r.ts.Index
	width := len(t.Columns)
	if r.ts.ExtraHandle {
		width++
	}
	row := make(types.Row, width)
	vals := make([]types.Datum, len(idx.Columns))
	h, _, err := tablecodec.DecodeIndexKV(append([]byte(nil), key...), append([]byte(nil), val...), vals, nil)
	if err != nil {
		return nil, err
	}
	for i, ic := range idx.Columns {
		row[ic.Offset] = fixKind(vals[i], &t.Columns[ic.Offset].Type)
	}
	if r.tc.handleOffset >= 0 {
		row[r.tc.handleOffset] = fixKind(types.NewInt(h.IntValue()), &t.Columns[r.tc.handleOffset].Type)
	} else if t.CommonHandle {
		pk, err := h.Datums(make([]types.Datum, 0, len(r.tc.pkOffsets)))
		if err != nil {
			return nil, err
		}
		for i, off := range r.tc.pkOffsets {
			row[off] = pk[i]
		}
	}
	if r.ts.ExtraHandle {
		row[width-1] = types.NewInt(h.IntValue())
	}
	r.tc.rowFromStored(row, r.ctx.zone())
	return row, nil
}

// fixKind makes an int handle read back as unsigned for unsigned columns.
func fixKind(d types.Datum, ft *types.FieldType) types.Datum {
	if ft.IsUnsigned() && d.Kind() == types.KindInt64 {
		return types.NewUint(uint64(d.Int()))
	}
	return d
}

// clustered reports whether the scan's index is the clustered primary key.
func (r *tableReader) clustered() bool {
	return r.ts.Index != nil && r.ts.Index.Primary && r.ts.Table.CommonHandle
}

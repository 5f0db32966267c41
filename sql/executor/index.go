package executor

import (
	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/tablecodec"
	"github.com/shoaldb/shoal/tablecodec/codec"
	"github.com/shoaldb/shoal/types"
)

// indexRanges appends to out (their bytes to buf) the key ranges of the
// scan's index value ranges under the current parameters and join slots,
// sorted and merged. It reads nothing.
func (r *tableReader) indexRanges(buf []byte, out []keyRange) ([]byte, []keyRange, error) {
	t, idx := r.ts.Table, r.ts.Index
	first := len(out)
next:
	for _, rg := range r.ts.Ranges {
		keyStart := len(buf)
		if r.clustered() {
			// A clustered primary key has no index entries: its values are
			// the record keys themselves.
			buf = tablecodec.AppendRecordPrefix(buf, t.ID)
		} else {
			buf = tablecodec.AppendIndexPrefix(buf, t.ID, idx.ID)
		}
		for i, e := range rg.Eq {
			v, err := e.Eval(r.ctx.Eval, nil)
			if err != nil {
				return buf[:keyStart], out, err
			}
			ft := &t.Columns[idx.Columns[i].Offset].Type
			d, exact, ok := keyDatum(v, ft)
			if !ok || !exact {
				buf = buf[:keyStart]
				continue next
			}
			buf = codec.AppendDatum(buf, toStoredTime(d, ft, r.ctx.zone()))
		}
		key := keyFrom(buf, keyStart)
		if rg.Low == nil && rg.High == nil {
			var end kv.Key
			buf, end = appendPrefixNext(buf, key)
			out = append(out, keyRange{start: key, end: end})
			continue
		}
		ft := &t.Columns[idx.Columns[len(rg.Eq)].Offset].Type
		var start, end kv.Key
		if rg.Low != nil {
			v, err := rg.Low.Eval(r.ctx.Eval, nil)
			if err != nil {
				return buf[:keyStart], out, err
			}
			d, exact, ok := keyDatum(v, ft)
			if !ok { // NULL, or beyond the column's kind
				buf = buf[:keyStart]
				continue
			}
			s := len(buf)
			buf = codec.AppendDatum(append(buf, key...), toStoredTime(d, ft, r.ctx.zone()))
			start = keyFrom(buf, s)
			if rg.LowExcl || (!exact && types.Compare(d, v) < 0) {
				buf, start = appendPrefixNext(buf[:s], start) // in place
			}
		} else {
			// Skip NULLs: a range bound never matches them.
			s := len(buf)
			buf = codec.AppendDatum(append(buf, key...), types.Datum{})
			buf, start = appendPrefixNext(buf[:s], buf[s:]) // in place
		}
		if rg.High != nil {
			v, err := rg.High.Eval(r.ctx.Eval, nil)
			if err != nil {
				return buf[:keyStart], out, err
			}
			d, exact, ok := keyDatum(v, ft)
			if !ok {
				buf = buf[:keyStart]
				continue
			}
			s := len(buf)
			buf = codec.AppendDatum(append(buf, key...), toStoredTime(d, ft, r.ctx.zone()))
			end = keyFrom(buf, s)
			if !(rg.HighExcl || (!exact && types.Compare(d, v) > 0)) {
				buf, end = appendPrefixNext(buf[:s], end) // in place
			}
		} else {
			buf, end = appendPrefixNext(buf, key)
		}
		if string(start) < string(end) {
			out = append(out, keyRange{start: start, end: end})
		} else {
			buf = buf[:keyStart]
		}
	}
	merged := mergeRanges(out[first:])
	return buf, out[:first+len(merged)], nil
}

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

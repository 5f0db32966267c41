package executor

import (
	"bytes"
	"errors"
	"slices"

	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/sql/expression"
	"github.com/shoaldb/shoal/tablecodec"
	"github.com/shoaldb/shoal/types"
)

// getPoints reads keys; a locking read in a pessimistic transaction locks
// them and gets their values in one request.
func (r *tableReader) getPoints(keys []kv.Key) (map[string][]byte, error) {
	if r.ts.Lock && r.ctx.Pessimistic {
		return r.ctx.lockAndGet(keys)
	}
	return r.ctx.Txn.BatchGet(r.ctx.Ctx, keys)
}

// readPoints fetches the rows of point lookups (handles or unique keys).
func (r *tableReader) readPoints() error {
	_, keys, err := r.pointKeys(nil, nil)
	if err != nil || len(keys) == 0 {
		return err
	}
	if r.ts.Index != nil {
		got, err := r.getPoints(keys)
		if err != nil {
			return err
		}
		if _, keys, err = r.recordKeysVia(nil, nil, keys, got); err != nil || len(keys) == 0 {
			return err
		}
	}
	if len(keys) == 1 && !(r.ts.Lock && r.ctx.Pessimistic) {
		v, err := r.ctx.Txn.Get(r.ctx.Ctx, keys[0])
		if errors.Is(err, kv.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		row, err := r.decodeKV(keys[0], v)
		if err != nil {
			return err
		}
		r.buf = append(r.buf, row)
		return nil
	}
	got, err := r.getPoints(keys)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if v, ok := got[string(k)]; ok {
			row, err := r.decodeKV(k, v)
			if err != nil {
				return err
			}
			r.buf = append(r.buf, row)
		}
	}
	return nil
}

// pointKeys appends to keys (their bytes to buf) the keys the scan's
// points name under the current parameters and join slots, in point order
// without repeats: record keys for handle points, unique-index keys for
// index points (whose record keys recordKeysVia finds). It reads nothing.
func (r *tableReader) pointKeys(buf []byte, keys []kv.Key) ([]byte, []kv.Key, error) {
	t, idx := r.ts.Table, r.ts.Index
	if r.pointCols == nil {
		if idx == nil {
			r.pointCols = r.tc.keyColumns()
		} else {
			r.pointCols = make([]int, len(idx.Columns))
			for i, ic := range idx.Columns {
				r.pointCols[i] = ic.Offset
			}
		}
	}
	r.dedup.reset(len(keys))
	for _, pt := range r.ts.Points {
		vals, ok, err := r.pointValues(pt, r.pointCols)
		if err != nil {
			return buf, keys, err
		}
		if !ok {
			continue
		}
		start := len(buf)
		switch {
		case idx != nil:
			buf = tablecodec.EncodeIndexKey(buf, t.ID, idx.ID, vals, tablecodec.Handle{})
		case t.PKIsHandle:
			buf = tablecodec.EncodeRecordKey(buf, t.ID, intHandle(vals[0]))
		default:
			if _, buf, err = tablecodec.EncodeCommonHandle(tablecodec.AppendRecordPrefix(buf, t.ID), vals); err != nil {
				return buf[:start], keys, err
			}
		}
		var added bool
		if keys, added = r.dedup.add(keys, buf[start:len(buf):len(buf)]); !added {
			buf = buf[:start]
		}
	}
	return buf, keys, nil
}

// recordKeysVia appends to keys (their bytes to buf) the record keys that
// the unique-index entries idxKeys hold in got, in idxKeys' order without
// repeats; entries absent from got match no row.
func (r *tableReader) recordKeysVia(buf []byte, keys []kv.Key, idxKeys []kv.Key, got map[string][]byte) ([]byte, []kv.Key, error) {
	r.dedup.reset(len(keys))
	for _, k := range idxKeys {
		v, ok := got[string(k)]
		if !ok {
			continue
		}
		h, err := tablecodec.DecodeIndexValue(v)
		if err != nil {
			return buf, keys, err
		}
		start := len(buf)
		buf = tablecodec.EncodeRecordKey(buf, r.ts.Table.ID, h)
		var added bool
		if keys, added = r.dedup.add(keys, buf[start:len(buf):len(buf)]); !added {
			buf = buf[:start]
		}
	}
	return buf, keys, nil
}

// keyDedup drops repeated keys from the keys one lookup appends: a linear
// search while they are few, a map once they are many (a long IN list).
type keyDedup struct {
	first int
	m     map[string]struct{}
	inMap bool
}

// dedupLinearMax is how many keys keyDedup searches linearly.
const dedupLinearMax = 16

// reset starts a lookup whose keys begin at keys[first].
func (d *keyDedup) reset(first int) {
	d.first, d.inMap = first, false
	clear(d.m)
}

// add appends k to keys unless this lookup already added it.
func (d *keyDedup) add(keys []kv.Key, k kv.Key) ([]kv.Key, bool) {
	if !d.inMap && len(keys)-d.first < dedupLinearMax {
		for _, o := range keys[d.first:] {
			if bytes.Equal(o, k) {
				return keys, false
			}
		}
		return append(keys, k), true
	}
	if !d.inMap {
		if d.m == nil {
			d.m = make(map[string]struct{})
		}
		for _, o := range keys[d.first:] {
			d.m[string(o)] = struct{}{}
		}
		d.inMap = true
	}
	if _, ok := d.m[string(k)]; ok {
		return keys, false
	}
	d.m[string(k)] = struct{}{}
	return append(keys, k), true
}

func intHandle(v types.Datum) tablecodec.Handle {
	if v.Kind() == types.KindUint64 {
		return tablecodec.IntHandle(int64(v.Uint()))
	}
	return tablecodec.IntHandle(v.Int())
}

// keyColumns are the offsets of the clustered key's columns.
func (tc *tableCodec) keyColumns() []int {
	if tc.handleOffset >= 0 {
		return []int{tc.handleOffset}
	}
	return tc.pkOffsets
}

// pointValues evaluates a point's values and converts them to the key kinds
// of the given columns; ok is false if the point can match nothing. The
// values are valid until the next call.
func (r *tableReader) pointValues(pt []expression.Expr, cols []int) ([]types.Datum, bool, error) {
	vals := slices.Grow(r.vals[:0], len(pt))[:len(pt)]
	r.vals = vals
	for i, e := range pt {
		v, err := e.Eval(r.ctx.Eval, nil)
		if err != nil {
			return nil, false, err
		}
		ft := &r.ts.Table.Columns[cols[i]].Type
		d, exact, ok := keyDatum(v, ft)
		if !ok || !exact {
			return nil, false, nil
		}
		vals[i] = toStoredTime(d, ft, r.ctx.zone())
	}
	return vals, true, nil
}

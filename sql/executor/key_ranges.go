package executor

import (
	"bytes"
	"math"
	"slices"

	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/tablecodec"
	"github.com/shoaldb/shoal/tablecodec/codec"
	"github.com/shoaldb/shoal/types"
)

// keyRange is [start, end).
// keyRange is a range of keys to scan; maxKeys, when non-zero, bounds how
// many keys it can hold (an integer-handle range), so its first fetch can
// take it whole (kv.IterSized).
type keyRange struct {
	start, end kv.Key
	maxKeys    int
}

// sizedRangeMax: integer-handle ranges up to this width carry a size.
const sizedRangeMax = 1 << 14

// handleRanges appends to out (their bytes to buf) the record key ranges of
// the scan's handle ranges under the current parameters and join slots,
// sorted and merged. It reads nothing.
func (r *tableReader) handleRanges(buf []byte, out []keyRange) ([]byte, []keyRange, error) {
	t := r.ts.Table
	ft := &t.HandleColumn().Type
	first := len(out)
	for _, rg := range r.ts.Ranges {
		lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
		if rg.Low != nil {
			v, err := rg.Low.Eval(r.ctx.Eval, nil)
			if err != nil {
				return buf, out, err
			}
			b, ok := intBound(v, ft, true, rg.LowExcl)
			if !ok {
				continue
			}
			lo = b
		}
		if rg.High != nil {
			v, err := rg.High.Eval(r.ctx.Eval, nil)
			if err != nil {
				return buf, out, err
			}
			b, ok := intBound(v, ft, false, rg.HighExcl)
			if !ok {
				continue
			}
			hi = b
		}
		if lo > hi {
			continue
		}
		var kr keyRange
		start := len(buf)
		buf = tablecodec.EncodeIntHandleKey(buf, t.ID, lo)
		kr.start = keyFrom(buf, start)
		if hi == math.MaxInt64 {
			start = len(buf)
			buf = tablecodec.AppendRecordPrefix(buf, t.ID)
			buf, kr.end = appendPrefixNext(buf[:start], buf[start:]) // in place
		} else {
			start = len(buf)
			buf = tablecodec.EncodeIntHandleKey(buf, t.ID, hi+1)
			kr.end = keyFrom(buf, start)
		}
		if hi-lo >= 0 && hi-lo < sizedRangeMax {
			kr.maxKeys = int(hi-lo) + 1
		}
		out = append(out, kr)
	}
	merged := mergeRanges(out[first:])
	return buf, out[:first+len(merged)], nil
}

// keyFrom returns buf[start:] as a key that later appends to buf cannot
// overwrite.
func keyFrom(buf []byte, start int) kv.Key {
	return kv.Key(buf[start:len(buf):len(buf)])
}

// appendPrefixNext appends kv.Key(k).PrefixNext() to buf (nil, appending
// nothing, when k is all 0xff).
func appendPrefixNext(buf []byte, k []byte) ([]byte, kv.Key) {
	start := len(buf)
	buf = append(buf, k...)
	for i := len(buf) - 1; i >= start; i-- {
		buf[i]++
		if buf[i] != 0 {
			buf = buf[:i+1]
			return buf, keyFrom(buf, start)
		}
	}
	return buf[:start], nil
}

// intBound converts a range bound to an inclusive int64 bound.
func intBound(v types.Datum, ft *types.FieldType, low, excl bool) (int64, bool) {
	if v.IsNull() {
		return 0, false
	}
	var f float64
	switch v.Kind() {
	case types.KindInt64:
		x := v.Int()
		if excl {
			if low {
				if x == math.MaxInt64 {
					return 0, false
				}
				x++
			} else {
				if x == math.MinInt64 {
					return 0, false
				}
				x--
			}
		}
		return x, true
	case types.KindUint64:
		if v.Uint() > math.MaxInt64 {
			if low {
				return 0, false
			}
			return math.MaxInt64, true
		}
		return intBound(types.NewInt(int64(v.Uint())), ft, low, excl)
	default:
		f = v.ToFloat()
	}
	var x float64
	if low {
		x = math.Ceil(f)
		if excl && x == f {
			x++
		}
	} else {
		x = math.Floor(f)
		if excl && x == f {
			x--
		}
	}
	if x >= 9.223372036854775807e18 {
		if low {
			return 0, false
		}
		return math.MaxInt64, true
	}
	if x < -9.223372036854775807e18 {
		if !low {
			return 0, false
		}
		return math.MinInt64, true
	}
	return int64(x), true
}

func mergeRanges(rs []keyRange) []keyRange {
	if len(rs) < 2 {
		return rs
	}
	sortRanges(rs)
	out := rs[:1]
	for _, r := range rs[1:] {
		last := &out[len(out)-1]
		if string(r.start) <= string(last.end) {
			if string(r.end) > string(last.end) {
				last.end = r.end
			}
			if last.maxKeys > 0 && r.maxKeys > 0 {
				last.maxKeys += r.maxKeys
			} else {
				last.maxKeys = 0
			}
			continue
		}
		out = append(out, r)
	}
	return out
}

func sortRanges(rs []keyRange) {
	slices.SortFunc(rs, func(a, b keyRange) int { return bytes.Compare(a.start, b.start) })
}

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

package tablecodec

import (
	"bytes"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/shoaldb/shoal/types"
)

func mustCommon(t testing.TB, pk ...types.Datum) Handle {
	t.Helper()
	h, _, err := EncodeCommonHandle(nil, pk)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestRecordKeyRoundTrip(t *testing.T) {
	for _, tid := range []int64{1, 42, math.MaxInt64} {
		for _, hv := range []int64{math.MinInt64, -1, 0, 1, math.MaxInt64} {
			key := EncodeIntHandleKey(nil, tid, hv)
			if len(key) != RecordRowKeyLen || !bytes.Equal(key, EncodeRecordKey(nil, tid, IntHandle(hv))) {
				t.Fatalf("int handle key %x", key)
			}
			gt, h, err := DecodeRecordKey(key)
			if err != nil || gt != tid || !h.IsInt() || h.IntValue() != hv {
				t.Fatalf("DecodeRecordKey(%x) = %d %v %v", key, gt, h, err)
			}
			if !bytes.HasPrefix(key, RecordPrefix(tid)) || !bytes.HasPrefix(key, TablePrefix(tid)) || DecodeTableID(key) != tid {
				t.Fatalf("prefix mismatch for %x", key)
			}
			if !IsRecordKey(key) || IsIndexKey(key) {
				t.Fatal("key classification")
			}
		}
	}
	// Common handles.
	for _, pk := range [][]types.Datum{
		{types.NewString("a")},
		{types.NewString("")},
		{types.NewInt(1), types.NewInt(2)},
		{types.NewString("abcdefghij"), types.NewFloat(2.5), types.NewUint(7)},
	} {
		h := mustCommon(t, pk...)
		key := EncodeRecordKey(nil, 5, h)
		tid, got, err := DecodeRecordKey(key)
		if err != nil || tid != 5 || !got.IsCommon() || !got.Equal(h) {
			t.Fatalf("common %v: got %v %v", h, got, err)
		}
		ds, err := got.Datums(nil)
		if err != nil || len(ds) != len(pk) {
			t.Fatalf("Datums: %v %v", ds, err)
		}
		for i := range pk {
			if ds[i].Kind() != pk[i].Kind() || ds[i].String() != pk[i].String() {
				t.Fatalf("pk col %d: %v want %v", i, ds[i], pk[i])
			}
		}
	}
	if _, _, err := EncodeCommonHandle(nil, []types.Datum{types.NewInt(1), types.NewNull()}); err == nil {
		t.Fatal("NULL primary key accepted")
	}
	if _, _, err := DecodeRecordKey(append(RecordPrefix(1), 1, 2, 3)); err == nil {
		t.Fatal("short handle accepted")
	}
	if _, _, err := DecodeRecordKey(IndexPrefix(1, 2)); err == nil {
		t.Fatal("index key decoded as record key")
	}
}

func TestKeyOrder(t *testing.T) {
	// Record keys order by (table, handle); index keys by (table, index,
	// values, handle). Each range is contiguous under its prefix.
	r := rand.New(rand.NewPCG(3, 4))
	type ent struct {
		tid, h int64
		key    []byte
	}
	var ents []ent
	for i := 0; i < 2000; i++ {
		tid, h := r.Int64N(5)-1, r.Int64()-r.Int64()
		ents = append(ents, ent{tid, h, EncodeIntHandleKey(nil, tid, h)})
	}
	sort.Slice(ents, func(i, j int) bool { return bytes.Compare(ents[i].key, ents[j].key) < 0 })
	for i := 1; i < len(ents); i++ {
		a, b := ents[i-1], ents[i]
		if a.tid > b.tid || (a.tid == b.tid && a.h > b.h) {
			t.Fatalf("record keys out of order: (%d,%d) before (%d,%d)", a.tid, a.h, b.tid, b.h)
		}
	}
	// Index keys with handle: (values, handle) order; NULL first.
	vals := []types.Datum{types.NewNull(), types.NewInt(-5), types.NewInt(0), types.NewInt(9)}
	var prev []byte
	for _, v := range vals {
		for _, h := range []int64{-1, 0, 3} {
			k := EncodeIndexKey(nil, 7, 2, []types.Datum{v}, IntHandle(h))
			if prev != nil && bytes.Compare(prev, k) >= 0 {
				t.Fatalf("index keys out of order at %v/%d", v, h)
			}
			if !bytes.HasPrefix(k, IndexPrefix(7, 2)) || bytes.Compare(k, PrefixNext(IndexPrefix(7, 2))) >= 0 {
				t.Fatal("index key outside its prefix range")
			}
			prev = k
		}
	}
}

func TestIndexEntries(t *testing.T) {
	cases := []struct {
		name       string
		unique     bool
		values     []types.Datum
		h          Handle
		handleInKy bool
	}{
		{"unique int handle", true, []types.Datum{types.NewString("bob"), types.NewInt(3)}, IntHandle(99), false},
		{"unique with NULL", true, []types.Datum{types.NewNull(), types.NewInt(3)}, IntHandle(-4), true},
		{"non-unique", false, []types.Datum{types.NewFloat(1.25)}, IntHandle(math.MaxInt64), true},
		{"non-unique common", false, []types.Datum{types.NewUint(5)}, mustCommon(t, types.NewString("pk"), types.NewInt(1)), true},
		{"unique common", true, []types.Datum{types.NewBytes([]byte{0, 1, 2})}, mustCommon(t, types.NewString("pk-longer-than-8")), false},
	}
	for _, c := range cases {
		key, val := EncodeIndexEntry(nil, nil, 11, 3, c.unique, c.values, c.h)
		tid, iid, rest, err := DecodeIndexPrefix(key)
		if err != nil || tid != 11 || iid != 3 || len(rest) == 0 || !IsIndexKey(key) || IsRecordKey(key) {
			t.Fatalf("%s: prefix %d %d %v", c.name, tid, iid, err)
		}
		if IndexKeyHasHandle(c.unique, c.values) != c.handleInKy {
			t.Fatalf("%s: IndexKeyHasHandle", c.name)
		}
		vh, err := DecodeIndexValue(val)
		if err != nil || vh.IsValid() == c.handleInKy {
			t.Fatalf("%s: index value handle %v %v", c.name, vh, err)
		}
		values := make([]types.Datum, len(c.values))
		kh, _, err := DecodeIndexKey(key, values, nil)
		if err != nil || kh.IsValid() != c.handleInKy {
			t.Fatalf("%s: key handle %v %v", c.name, kh, err)
		}
		values2 := make([]types.Datum, len(c.values))
		h, _, err := DecodeIndexKV(key, val, values2, nil)
		if err != nil || !h.Equal(c.h) {
			t.Fatalf("%s: DecodeIndexKV handle %v want %v (%v)", c.name, h, c.h, err)
		}
		for i := range c.values {
			if values[i].Kind() != c.values[i].Kind() || values[i].String() != c.values[i].String() || values2[i].String() != c.values[i].String() {
				t.Fatalf("%s: value %d = %v want %v", c.name, i, values[i], c.values[i])
			}
		}
		h2, err := DecodeIndexHandle(key, val, len(c.values))
		if err != nil || !h2.Equal(c.h) {
			t.Fatalf("%s: DecodeIndexHandle %v %v", c.name, h2, err)
		}
	}
	// A unique entry without its value has no handle anywhere.
	key := EncodeIndexKey(nil, 1, 1, []types.Datum{types.NewInt(1)}, Handle{})
	if _, err := DecodeIndexHandle(key, []byte{'0'}, 1); err == nil {
		t.Fatal("handle-less index entry accepted")
	}
	if _, err := DecodeIndexValue(nil); err == nil {
		t.Fatal("empty index value accepted")
	}
}

func TestHandleHelpers(t *testing.T) {
	var zero Handle
	if zero.IsValid() || zero.String() != "<no handle>" || zero.EncodedLen() != 0 {
		t.Fatal("zero handle")
	}
	a, b := IntHandle(1), IntHandle(2)
	if a.Compare(b) >= 0 || b.Compare(a) <= 0 || a.Compare(a) != 0 || a.Equal(b) || a.String() != "1" {
		t.Fatal("int handle compare")
	}
	c1, c2 := mustCommon(t, types.NewString("a")), mustCommon(t, types.NewString("b"))
	if c1.Compare(c2) >= 0 || c1.String() != "{a}" || c1.EncodedLen() != len(c1.Encoded()) {
		t.Fatal("common handle compare")
	}
	cl := c1.Clone()
	c1.Encoded()[1] = 'z'
	if cl.Equal(c1) {
		t.Fatal("Clone aliases")
	}
}

func TestPrefixNext(t *testing.T) {
	if got := PrefixNext([]byte{1, 2, 0xFF}); !bytes.Equal(got, []byte{1, 3}) {
		t.Fatalf("got %x", got)
	}
	if PrefixNext([]byte{0xFF, 0xFF}) != nil || PrefixNext(nil) != nil {
		t.Fatal("all-0xFF prefix has no successor")
	}
}

func BenchmarkEncodeIndexKey(b *testing.B) {
	vals := []types.Datum{types.NewInt(123456), types.NewString("some-customer-last-name")}
	buf := make([]byte, 0, 128)
	b.ReportAllocs()
	for b.Loop() {
		buf = EncodeIndexKey(buf[:0], 100, 2, vals, IntHandle(987654321))
	}
}

func BenchmarkDecodeIndexHandle(b *testing.B) {
	vals := []types.Datum{types.NewInt(123456), types.NewString("some-customer-last-name")}
	key, val := EncodeIndexEntry(nil, nil, 100, 2, false, vals, IntHandle(987654321))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeIndexHandle(key, val, 2); err != nil {
			b.Fatal(err)
		}
	}
}

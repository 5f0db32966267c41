package codec

import (
	"bytes"
	"cmp"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/shoaldb/shoal/types"
)

func kindFlag(k types.Kind) byte {
	switch k {
	case types.KindNull:
		return NilFlag
	case types.KindInt64:
		return IntFlag
	case types.KindUint64:
		return UintFlag
	case types.KindFloat64:
		return FloatFlag
	case types.KindString:
		return StringFlag
	default:
		return BytesFlag
	}
}

// compareDatum is the order the encoding must reproduce: by kind flag, then
// by value within a kind.
func compareDatum(a, b types.Datum) int {
	if c := cmp.Compare(kindFlag(a.Kind()), kindFlag(b.Kind())); c != 0 {
		return c
	}
	switch a.Kind() {
	case types.KindNull:
		return 0
	case types.KindInt64:
		return cmp.Compare(a.Int(), b.Int())
	case types.KindUint64:
		return cmp.Compare(a.Uint(), b.Uint())
	case types.KindFloat64:
		return cmp.Compare(a.Float(), b.Float()) // -0 == +0 here too
	default:
		return bytes.Compare(a.Bytes(), b.Bytes())
	}
}

func compareTuple(a, b []types.Datum) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if c := compareDatum(a[i], b[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}

var edgeInts = []int64{math.MinInt64, math.MinInt64 + 1, -256, -1, 0, 1, 255, math.MaxInt64 - 1, math.MaxInt64}
var edgeFloats = []float64{math.Inf(-1), -math.MaxFloat64, -1.5, -math.SmallestNonzeroFloat64, 0, math.SmallestNonzeroFloat64, 1, 1.5, math.MaxFloat64, math.Inf(1)}

func randBytes(r *rand.Rand) []byte {
	n := r.IntN(20)
	b := make([]byte, n)
	for i := range b {
		// A small alphabet including 0x00 and 0xFF makes prefixes and
		// padding-like content common.
		b[i] = []byte{0x00, 0x01, 'a', 'b', 0xF7, 0xFF}[r.IntN(6)]
	}
	return b
}

func randDatum(r *rand.Rand, kind types.Kind) types.Datum {
	switch kind {
	case types.KindNull:
		return types.NewNull()
	case types.KindInt64:
		if r.IntN(4) == 0 {
			return types.NewInt(edgeInts[r.IntN(len(edgeInts))])
		}
		return types.NewInt(r.Int64N(2000) - 1000)
	case types.KindUint64:
		if r.IntN(4) == 0 {
			return types.NewUint(math.MaxUint64 - uint64(r.IntN(3)))
		}
		return types.NewUint(r.Uint64() >> r.IntN(64))
	case types.KindFloat64:
		if r.IntN(4) == 0 {
			return types.NewFloat(edgeFloats[r.IntN(len(edgeFloats))])
		}
		return types.NewFloat((r.Float64() - 0.5) * math.Pow(10, float64(r.IntN(40)-20)))
	case types.KindString:
		return types.NewStringBytes(randBytes(r))
	default:
		return types.NewBytes(randBytes(r))
	}
}

func randKind(r *rand.Rand) types.Kind { return types.Kind(r.IntN(int(types.KindBytes) + 1)) }

func sameDatum(a, b types.Datum) bool {
	if a.Kind() != b.Kind() {
		return false
	}
	if a.Kind() == types.KindFloat64 {
		return a.Float() == b.Float()
	}
	return compareDatum(a, b) == 0
}

func TestRoundTripEveryKind(t *testing.T) {
	ds := []types.Datum{types.NewNull(), types.NewString(""), types.NewBytes(nil), types.NewBytes([]byte{0, 0, 0, 0, 0, 0, 0, 0}),
		types.NewString("hello, world, this is long"), types.NewUint(math.MaxUint64), types.NewUint(0), types.NewFloat(math.Copysign(0, -1))}
	for _, v := range edgeInts {
		ds = append(ds, types.NewInt(v))
	}
	for _, v := range edgeFloats {
		ds = append(ds, types.NewFloat(v))
	}
	enc := EncodeKey(nil, ds...)
	got, err := DecodeKey(enc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(ds) {
		t.Fatalf("decoded %d datums, want %d", len(got), len(ds))
	}
	for i := range ds {
		if !sameDatum(ds[i], got[i]) {
			t.Errorf("datum %d: got %v (kind %d), want %v (kind %d)", i, got[i], got[i].Kind(), ds[i], ds[i].Kind())
		}
	}
	// SkipDatums agrees with the decoder.
	rest, err := SkipDatums(enc, len(ds))
	if err != nil || len(rest) != 0 {
		t.Fatalf("SkipDatums: rest %d, err %v", len(rest), err)
	}
}

func TestOrderPreservingProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 50000; i++ {
		n := 1 + r.IntN(3)
		a := make([]types.Datum, n)
		b := make([]types.Datum, n)
		for j := 0; j < n; j++ {
			k := randKind(r)
			a[j] = randDatum(r, k)
			if r.IntN(5) != 0 {
				b[j] = randDatum(r, k) // same kind mostly
			} else {
				b[j] = randDatum(r, randKind(r))
			}
			if r.IntN(4) == 0 {
				b[j] = a[j] // force ties on the prefix
			}
		}
		ea, eb := EncodeKey(nil, a...), EncodeKey(nil, b...)
		want := compareTuple(a, b)
		if got := bytes.Compare(ea, eb); got != want {
			t.Fatalf("%v vs %v: bytes.Compare = %d, want %d\n%x\n%x", a, b, got, want, ea, eb)
		}
		da, err := DecodeKey(ea, nil)
		if err != nil {
			t.Fatal(err)
		}
		for j := range a {
			if !sameDatum(a[j], da[j]) {
				t.Fatalf("round trip %v -> %v", a[j], da[j])
			}
		}
	}
}

func TestBytesPrefixUnambiguous(t *testing.T) {
	// "ab" < "ab\x00" < "ab\x00\x00..." < "abc" and no encoding is a prefix
	// of another.
	vals := [][]byte{{}, {0}, []byte("ab"), []byte("ab\x00"), []byte("ab\x00\x00\x00\x00\x00\x00"), []byte("ab\x00\x00\x00\x00\x00\x00\x00"), []byte("abc"), []byte("abcdefgh"), []byte("abcdefgh\x00")}
	for i := range vals {
		for j := range vals {
			ei, ej := AppendBytes(nil, vals[i]), AppendBytes(nil, vals[j])
			if got, want := bytes.Compare(ei, ej), bytes.Compare(vals[i], vals[j]); got != want {
				t.Errorf("%q vs %q: %d want %d", vals[i], vals[j], got, want)
			}
			if i != j && bytes.HasPrefix(ej, ei) {
				t.Errorf("%q encoding is a prefix of %q's", vals[i], vals[j])
			}
		}
		if got := len(AppendBytes(nil, vals[i])); got != EncodedBytesLen(len(vals[i])) {
			t.Errorf("EncodedBytesLen(%d) = %d, encoded %d", len(vals[i]), EncodedBytesLen(len(vals[i])), got)
		}
	}
}

func TestCorruptInput(t *testing.T) {
	bad := [][]byte{{}, {IntFlag, 1, 2}, {0x77}, {StringFlag, 'a', 0, 0, 0, 0, 0, 0, 0}, {StringFlag, 'a', 0, 0, 0, 0, 0, 0, 0, 0x10},
		{BytesFlag, 'a', 0, 0, 0, 0, 0, 0, 1, 0xF9}}
	for _, b := range bad {
		if _, _, err := DecodeOne(b); err == nil {
			t.Errorf("DecodeOne(%x) accepted corrupt input", b)
		}
		if _, err := PeekLength(b); err == nil && len(b) > 0 && b[0] != BytesFlag {
			t.Errorf("PeekLength(%x) accepted corrupt input", b)
		}
	}
}

func TestVarint(t *testing.T) {
	for _, v := range append(edgeInts, 63, 64, -64, -65, 1<<20) {
		b := AppendVarint(nil, v)
		if len(b) != VarintLen(v) {
			t.Errorf("VarintLen(%d) = %d, encoded %d", v, VarintLen(v), len(b))
		}
		got, rest, err := DecodeVarint(b)
		if err != nil || got != v || len(rest) != 0 {
			t.Errorf("varint %d -> %d %v", v, got, err)
		}
		u := uint64(v)
		b = AppendUvarint(nil, u)
		if len(b) != UvarintLen(u) {
			t.Errorf("UvarintLen(%d) = %d, encoded %d", u, UvarintLen(u), len(b))
		}
		gu, _, err := DecodeUvarint(b)
		if err != nil || gu != u {
			t.Errorf("uvarint %d -> %d %v", u, gu, err)
		}
	}
	if _, _, err := DecodeUvarint([]byte{0x80}); err == nil {
		t.Error("truncated uvarint accepted")
	}
}

func TestDecodeOneBufNoAlloc(t *testing.T) {
	enc := EncodeKey(nil, types.NewString("some string value"), types.NewInt(7), types.NewBytes([]byte("xyz")))
	buf := make([]byte, 0, 64)
	allocs := testing.AllocsPerRun(100, func() {
		b, buf2 := enc, buf[:0]
		var err error
		for len(b) > 0 {
			_, b, buf2, err = DecodeOneBuf(b, buf2)
			if err != nil {
				t.Fatal(err)
			}
		}
	})
	if allocs != 0 {
		t.Errorf("DecodeOneBuf allocs = %v, want 0", allocs)
	}
}

func BenchmarkEncodeKey(b *testing.B) {
	ds := []types.Datum{types.NewInt(42), types.NewString("customer-name-0001"), types.NewFloat(3.5)}
	buf := make([]byte, 0, 128)
	b.ReportAllocs()
	for b.Loop() {
		buf = EncodeKey(buf[:0], ds...)
	}
}

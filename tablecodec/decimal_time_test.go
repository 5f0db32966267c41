package tablecodec

import (
	"bytes"
	"math/rand/v2"
	"sort"
	"strconv"
	"testing"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/tablecodec/codec"
	"github.com/shoaldb/shoal/types"
)

func mustDecimal(t testing.TB, s string) types.Datum {
	d, err := types.ParseDecimal(s)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return d
}

func TestRowDecimalTimeRoundTrip(t *testing.T) {
	decFt := &types.FieldType{Tp: mysql.TypeNewDecimal, Flen: 12, Decimal: 2}
	bigFt := &types.FieldType{Tp: mysql.TypeNewDecimal, Flen: 65, Decimal: 10}
	dtFt := &types.FieldType{Tp: mysql.TypeDatetime, Decimal: 6}
	dateFt := &types.FieldType{Tp: mysql.TypeDate}
	durFt := &types.FieldType{Tp: mysql.TypeDuration, Decimal: 3}
	dt, _ := types.ParseTime("2024-01-02 03:04:05.123456", mysql.TypeDatetime, 6)
	day, _ := types.ParseTime("2024-02-29", mysql.TypeDate, 0)
	dur, _ := types.ParseDuration("-838:59:58.125", 3)
	vals := []types.Datum{mustDecimal(t, "-1234567890.25"), mustDecimal(t, "123456789012345678901234567890.0123456789"), dt, day, dur}
	ids := []int64{1, 2, 3, 4, 5}
	row := EncodeRow(nil, ids, vals)
	dec := NewRowDecoder([]RowColumn{{ID: 1, Type: decFt}, {ID: 2, Type: bigFt}, {ID: 3, Type: dtFt}, {ID: 4, Type: dateFt}, {ID: 5, Type: durFt}})
	out := make([]types.Datum, 5)
	if err := dec.Decode(row, Handle{}, out); err != nil {
		t.Fatal(err)
	}
	for i := range vals {
		if out[i].Kind() != vals[i].Kind() || types.Compare(out[i], vals[i]) != 0 || out[i].String() != vals[i].String() {
			t.Errorf("col %d: got %s (%d) want %s", i, out[i], out[i].Kind(), vals[i])
		}
	}
	if len(row) > 90 {
		t.Errorf("row is %d bytes", len(row))
	}
	// Values written as text before the kinds existed.
	legacy := EncodeRow(nil, []int64{1, 3, 4, 5}, []types.Datum{types.NewString("12.50"), types.NewString("2024-01-02 03:04:05"), types.NewString("2024-01-02"), types.NewString("10:11:12")})
	ldec := NewRowDecoder([]RowColumn{{ID: 1, Type: decFt}, {ID: 3, Type: dtFt}, {ID: 4, Type: dateFt}, {ID: 5, Type: durFt}})
	if err := ldec.Decode(legacy, Handle{}, out); err != nil {
		t.Fatal(err)
	}
	if out[0].String() != "12.50" || out[1].Kind() != types.KindTime || out[2].String() != "2024-01-02" || out[3].Kind() != types.KindDuration {
		t.Errorf("legacy: %v", out[:4])
	}
	if DatumKindOf(decFt) != types.KindDecimal || DatumKindOf(dtFt) != types.KindTime || DatumKindOf(durFt) != types.KindDuration ||
		DatumKindOf(&types.FieldType{Tp: mysql.TypeTimestamp, Charset: "binary"}) != types.KindTime {
		t.Error("DatumKindOf")
	}
}

func randDecimal(r *rand.Rand) types.Datum {
	var s string
	switch r.IntN(4) {
	case 0:
		s = strconv.FormatInt(r.Int64N(2000)-1000, 10)
	case 1:
		s = strconv.FormatFloat((r.Float64()-0.5)*1e6, 'f', r.IntN(6), 64)
	case 2:
		digits := make([]byte, 1+r.IntN(40))
		for i := range digits {
			digits[i] = byte('0' + r.IntN(10))
		}
		p := r.IntN(len(digits) + 1)
		s = string(digits[:p]) + "." + string(digits[p:])
		if p == 0 {
			s = "0" + s
		}
		if r.IntN(2) == 0 {
			s = "-" + s
		}
	default:
		s = strconv.FormatInt(r.Int64N(100), 10) + "." + strconv.Itoa(r.IntN(100)) + "000"[:r.IntN(4)]
	}
	d, err := types.ParseDecimal(s)
	if err != nil {
		panic(s)
	}
	return d
}

func TestDecimalKeyOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	vals := make([]types.Datum, 3000)
	for i := range vals {
		vals[i] = randDecimal(r)
	}
	vals = append(vals, mustDecimal(t, "1.5"), mustDecimal(t, "1.50"), mustDecimal(t, "0"), mustDecimal(t, "0.000"), mustDecimal(t, "-0.5"), mustDecimal(t, "-0.50"))
	keys := make([][]byte, len(vals))
	for i, v := range vals {
		keys[i] = codec.EncodeKey(nil, v, types.NewInt(7)) // a following column must not disturb the order
		back, err := codec.DecodeKey(keys[i], nil)
		if err != nil || len(back) != 2 || types.Compare(back[0], v) != 0 || back[1].Int() != 7 {
			t.Fatalf("%s: decoded %v, %v", v, back, err)
		}
		if n, err := codec.PeekLength(keys[i]); err != nil || n != len(keys[i])-9 {
			t.Fatalf("%s: PeekLength %d %v", v, n, err)
		}
	}
	for i := range vals {
		for j := i + 1; j < len(vals); j += 7 {
			want := types.Compare(vals[i], vals[j])
			got := bytes.Compare(keys[i], keys[j])
			if want != got {
				t.Fatalf("%s vs %s: key order %d, value order %d", vals[i], vals[j], got, want)
			}
		}
	}
	idx := make([]int, len(vals))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return bytes.Compare(keys[idx[a]], keys[idx[b]]) < 0 })
	for k := 1; k < len(idx); k++ {
		if types.Compare(vals[idx[k-1]], vals[idx[k]]) > 0 {
			t.Fatalf("sorted keys out of value order: %s > %s", vals[idx[k-1]], vals[idx[k]])
		}
	}
	if !bytes.Equal(codec.EncodeKey(nil, mustDecimal(t, "1.5")), codec.EncodeKey(nil, mustDecimal(t, "1.500"))) {
		t.Error("1.5 and 1.500 encode differently")
	}
	d := mustDecimal(t, "-12345.678")
	buf := make([]byte, 0, 64)
	if n := testing.AllocsPerRun(100, func() { buf = codec.EncodeKey(buf[:0], d) }); n != 0 {
		t.Errorf("EncodeKey(decimal) allocates %v", n)
	}
}

func TestTimeKeyOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var vals []types.Datum
	for range 2000 {
		f := types.TimeFields{Year: 1000 + r.IntN(9000), Month: 1 + r.IntN(12), Day: 1 + r.IntN(28), Hour: r.IntN(24), Minute: r.IntN(60), Second: r.IntN(60), Micro: r.IntN(1000000)}
		if r.IntN(3) == 0 {
			vals = append(vals, types.NewTime(f, mysql.TypeDate, 0))
		} else {
			vals = append(vals, types.NewTime(f, mysql.TypeDatetime, 6))
		}
		vals = append(vals, types.NewDuration(r.Int64N(2*types.MaxDurationMicros)-types.MaxDurationMicros, 6))
	}
	for i := 0; i < len(vals); i++ {
		ki := codec.EncodeKey(nil, vals[i])
		back, err := codec.DecodeKey(ki, nil)
		if err != nil || types.Compare(back[0], vals[i]) != 0 {
			t.Fatalf("%s: decoded %v %v", vals[i], back, err)
		}
		for j := i % 2; j < len(vals); j += 37 {
			if vals[i].Kind() != vals[j].Kind() {
				continue
			}
			kj := codec.EncodeKey(nil, vals[j])
			if got, want := bytes.Compare(ki, kj), types.Compare(vals[i], vals[j]); got != want {
				t.Fatalf("%s vs %s: key %d value %d", vals[i], vals[j], got, want)
			}
		}
	}
}

package tablecodec

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/types"
)

var (
	ftBigint   = &types.FieldType{Tp: mysql.TypeLonglong}
	ftUbigint  = &types.FieldType{Tp: mysql.TypeLonglong, Flag: mysql.UnsignedFlag}
	ftInt      = &types.FieldType{Tp: mysql.TypeLong}
	ftDouble   = &types.FieldType{Tp: mysql.TypeDouble}
	ftVarchar  = &types.FieldType{Tp: mysql.TypeVarchar, Charset: "utf8mb4"}
	ftChar     = &types.FieldType{Tp: mysql.TypeString, Charset: "utf8mb4"}
	ftText     = &types.FieldType{Tp: mysql.TypeBlob, Charset: "utf8mb4"}
	ftBlob     = &types.FieldType{Tp: mysql.TypeBlob, Charset: "binary"}
	ftVarbin   = &types.FieldType{Tp: mysql.TypeVarchar, Charset: "binary"}
	ftDecimal  = &types.FieldType{Tp: mysql.TypeNewDecimal}
	ftBit      = &types.FieldType{Tp: mysql.TypeBit}
	ftFloat    = &types.FieldType{Tp: mysql.TypeFloat}
	ftDatetime = &types.FieldType{Tp: mysql.TypeDatetime}
)

func equalDatum(a, b types.Datum) bool {
	if a.Kind() != b.Kind() {
		return false
	}
	switch a.Kind() {
	case types.KindFloat64:
		return a.Float() == b.Float()
	case types.KindInt64, types.KindUint64:
		return a.Int() == b.Int()
	}
	return string(a.Bytes()) == string(b.Bytes())
}

func checkRow(t *testing.T, got, want []types.Datum) {
	t.Helper()
	for i := range want {
		if !equalDatum(got[i], want[i]) {
			t.Errorf("col %d: got %v (kind %d), want %v (kind %d)", i, got[i], got[i].Kind(), want[i], want[i].Kind())
		}
	}
}

func TestDatumKindOf(t *testing.T) {
	cases := []struct {
		ft   *types.FieldType
		want types.Kind
	}{
		{ftBigint, types.KindInt64}, {ftInt, types.KindInt64}, {ftUbigint, types.KindUint64}, {ftBit, types.KindUint64},
		{ftDouble, types.KindFloat64}, {ftFloat, types.KindFloat64},
		{ftVarchar, types.KindString}, {ftChar, types.KindString}, {ftText, types.KindString}, {ftDecimal, types.KindDecimal}, {ftDatetime, types.KindTime},
		{ftBlob, types.KindBytes}, {ftVarbin, types.KindBytes},
	}
	for _, c := range cases {
		if got := DatumKindOf(c.ft); got != c.want {
			t.Errorf("type %d charset %q: kind %d, want %d", c.ft.Tp, c.ft.Charset, got, c.want)
		}
	}
}

func TestRowRoundTripAllKinds(t *testing.T) {
	cols := []RowColumn{
		{ID: 1, Type: ftBigint}, {ID: 2, Type: ftUbigint}, {ID: 3, Type: ftDouble}, {ID: 4, Type: ftVarchar},
		{ID: 5, Type: ftBlob}, {ID: 6, Type: ftInt}, {ID: 7, Type: ftText}, {ID: 300, Type: ftBigint}, {ID: 9, Type: ftDecimal},
	}
	rows := [][]types.Datum{
		{types.NewInt(math.MinInt64), types.NewUint(math.MaxUint64), types.NewFloat(-2.5), types.NewString("héllo"),
			types.NewBytes([]byte{0, 0xFF}), types.NewInt(-1), types.NewString(strings.Repeat("x", 300)), types.NewInt(math.MaxInt64), types.NewDecimalFromCoef(1250, 2)},
		{types.NewNull(), types.NewUint(0), types.NewNull(), types.NewString(""), types.NewNull(), types.NewNull(), types.NewNull(), types.NewInt(0), types.NewNull()},
		make([]types.Datum, 9), // all NULL
	}
	ids := make([]int64, len(cols))
	for i, c := range cols {
		ids[i] = c.ID
	}
	dec := NewRowDecoder(cols)
	for _, want := range rows {
		row := EncodeRow(nil, ids, want)
		got := make([]types.Datum, len(cols))
		for i := range got {
			got[i] = types.NewInt(12345) // must be overwritten, NULLs included
		}
		if err := dec.Decode(row, Handle{}, got); err != nil {
			t.Fatal(err)
		}
		checkRow(t, got, want)
	}
}

func TestRowUnsortedIDsAndSignAgnosticInts(t *testing.T) {
	ids := []int64{9, 2, 5}
	vals := []types.Datum{types.NewUint(7), types.NewInt(-3), types.NewString("abc")}
	row := EncodeRow(nil, ids, vals)
	dec := NewRowDecoder([]RowColumn{{ID: 2, Type: ftBigint}, {ID: 5, Type: ftVarbin}, {ID: 9, Type: ftBigint}})
	got := make([]types.Datum, 3)
	if err := dec.Decode(row, Handle{}, got); err != nil {
		t.Fatal(err)
	}
	// The uint written to column 9 reads back as the signed column's kind;
	// the string written to column 5 reads back as bytes.
	checkRow(t, got, []types.Datum{types.NewInt(-3), types.NewBytes([]byte("abc")), types.NewInt(7)})
}

func TestRowMissingColumnsAndNullVsDefault(t *testing.T) {
	// Written by an older schema with columns 1..3; column 3 was NULL.
	row := EncodeRow(nil, []int64{1, 2, 3}, []types.Datum{types.NewInt(10), types.NewString("x"), types.NewNull()})
	// The new schema added columns 4 (default 'dflt') and 5 (no default),
	// and gave column 3 a default too (which must not replace a stored NULL).
	dec := NewRowDecoder([]RowColumn{
		{ID: 1, Type: ftBigint},
		{ID: 2, Type: ftVarchar},
		{ID: 3, Type: ftBigint, Default: types.NewInt(99)},
		{ID: 4, Type: ftVarchar, Default: types.NewString("dflt")},
		{ID: 5, Type: ftDouble},
	})
	got := make([]types.Datum, 5)
	for i := range got {
		got[i] = types.NewInt(-777)
	}
	if err := dec.Decode(row, Handle{}, got); err != nil {
		t.Fatal(err)
	}
	checkRow(t, got, []types.Datum{types.NewInt(10), types.NewString("x"), types.NewNull(), types.NewString("dflt"), types.NewNull()})
}

func TestRowSubsetAndHandleColumn(t *testing.T) {
	// Integer clustered PK (id 1) lives in the key, not the row.
	full := NewRowDecoder([]RowColumn{
		{ID: 1, Type: ftBigint, FromHandle: true}, {ID: 2, Type: ftInt}, {ID: 3, Type: ftChar}, {ID: 4, Type: ftChar},
	})
	row := EncodeRow(nil, []int64{2, 3, 4}, []types.Datum{types.NewInt(5), types.NewString("ccc"), types.NewString("pad")})
	got := make([]types.Datum, 4)
	if err := full.Decode(row, IntHandle(77), got); err != nil {
		t.Fatal(err)
	}
	checkRow(t, got, []types.Datum{types.NewInt(77), types.NewInt(5), types.NewString("ccc"), types.NewString("pad")})

	sub := full.Project([]int{3, 0}) // pad, id
	if sub.NumCols() != 2 {
		t.Fatal("NumCols")
	}
	got = got[:2]
	if err := sub.Decode(row, IntHandle(-8), got); err != nil {
		t.Fatal(err)
	}
	checkRow(t, got, []types.Datum{types.NewString("pad"), types.NewInt(-8)})

	// Unsigned handle column.
	u := NewRowDecoder([]RowColumn{{ID: 1, Type: ftUbigint, FromHandle: true}})
	if err := u.Decode(row, IntHandle(-1), got); err != nil || got[0].Kind() != types.KindUint64 || got[0].Uint() != math.MaxUint64 {
		t.Fatalf("unsigned handle: %v %v", got[0], err)
	}
	if err := full.Decode(row, Handle{}, got[:1]); err == nil {
		t.Fatal("short dst accepted")
	}
}

func TestRowDecodeAliasesAndCorruption(t *testing.T) {
	row := EncodeRow(nil, []int64{1, 2}, []types.Datum{types.NewString("abc"), types.NewFloat(1.5)})
	dec := NewRowDecoder([]RowColumn{{ID: 1, Type: ftVarchar}, {ID: 2, Type: ftDouble}})
	got := make([]types.Datum, 2)
	if err := dec.Decode(row, Handle{}, got); err != nil {
		t.Fatal(err)
	}
	if &got[0].Bytes()[0] == nil || string(got[0].Bytes()) != "abc" {
		t.Fatal("string value")
	}
	// Aliasing: the string datum points into row.
	row[bytes.Index(row, []byte("abc"))] = 'z'
	if string(got[0].Bytes()) != "zbc" {
		t.Fatalf("string datum does not alias the row: %q", got[0].Bytes())
	}
	for i := 0; i < len(row); i++ {
		if err := dec.Decode(row[:i], Handle{}, got); err == nil {
			t.Errorf("truncated row of %d/%d bytes accepted", i, len(row))
		}
	}
	// Wrong type for the stored value: a varchar read as DOUBLE.
	bad := NewRowDecoder([]RowColumn{{ID: 1, Type: ftDouble}})
	if err := bad.Decode(row, Handle{}, got); err == nil {
		t.Error("3-byte value read as a float")
	}
	if err := dec.Decode([]byte{0x01, 0}, Handle{}, got); err == nil {
		t.Error("bad version accepted")
	}
}

func TestRowRandomRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	fts := []*types.FieldType{ftBigint, ftUbigint, ftDouble, ftVarchar, ftBlob}
	for iter := 0; iter < 3000; iter++ {
		n := r.IntN(12)
		perm := r.Perm(40)[:n]
		cols := make([]RowColumn, n)
		ids := make([]int64, n)
		vals := make([]types.Datum, n)
		for i := range cols {
			ft := fts[r.IntN(len(fts))]
			ids[i] = int64(perm[i] * (1 + r.IntN(1000)))
			cols[i] = RowColumn{ID: ids[i], Type: ft}
			if r.IntN(4) == 0 {
				continue // NULL
			}
			switch DatumKindOf(ft) {
			case types.KindInt64:
				vals[i] = types.NewInt(r.Int64() >> r.IntN(64) * int64(1-2*r.IntN(2)))
			case types.KindUint64:
				vals[i] = types.NewUint(r.Uint64() >> r.IntN(64))
			case types.KindFloat64:
				vals[i] = types.NewFloat(r.NormFloat64() * 1e6)
			case types.KindString:
				vals[i] = types.NewString(strings.Repeat("s", r.IntN(200)))
			default:
				vals[i] = types.NewBytes([]byte(strings.Repeat("\x00", r.IntN(20))))
			}
		}
		// Skip rows whose random ids collided.
		seen := map[int64]bool{}
		dup := false
		for _, id := range ids {
			dup = dup || seen[id]
			seen[id] = true
		}
		if dup {
			continue
		}
		row := EncodeRow(nil, ids, vals)
		got := make([]types.Datum, n)
		if err := NewRowDecoder(cols).Decode(row, Handle{}, got); err != nil {
			t.Fatal(err)
		}
		checkRow(t, got, vals)
	}
}

func TestRowEncodeRejectsBadIDs(t *testing.T) {
	for _, ids := range [][]int64{{1, 1}, {-1}, {3, 2, 3}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("ids %v accepted", ids)
				}
			}()
			EncodeRow(nil, ids, make([]types.Datum, len(ids)))
		}()
	}
}

// sbtest-shaped row: id (handle), k INT, c CHAR(120), pad CHAR(60).
func sbtestRow() ([]int64, []types.Datum, *RowDecoder) {
	ids := []int64{2, 3, 4}
	vals := []types.Datum{
		types.NewInt(4993),
		types.NewString("83868641912-28773972837-60736120486-75867922524-66862910563-38916620483-57215484839-45869618862-15779596713-00436862262"),
		types.NewString("67847967377-48000963322-62604785301-91415491898-96926520291"),
	}
	dec := NewRowDecoder([]RowColumn{{ID: 1, Type: ftInt, FromHandle: true}, {ID: 2, Type: ftInt}, {ID: 3, Type: ftChar}, {ID: 4, Type: ftChar}})
	return ids, vals, dec
}

func TestRowZeroAllocs(t *testing.T) {
	ids, vals, dec := sbtestRow()
	buf := make([]byte, 0, 512)
	if a := testing.AllocsPerRun(100, func() { buf = EncodeRow(buf[:0], ids, vals) }); a != 0 {
		t.Errorf("EncodeRow allocs = %v", a)
	}
	unsorted := []int64{4, 2, 3}
	if a := testing.AllocsPerRun(100, func() { buf = EncodeRow(buf[:0], unsorted, vals) }); a != 0 {
		t.Errorf("EncodeRow (unsorted ids) allocs = %v", a)
	}
	row := EncodeRow(nil, ids, vals)
	dst := make([]types.Datum, 4)
	if a := testing.AllocsPerRun(100, func() { _ = dec.Decode(row, IntHandle(1), dst) }); a != 0 {
		t.Errorf("Decode allocs = %v", a)
	}
	kbuf := make([]byte, 0, 128)
	if a := testing.AllocsPerRun(100, func() { kbuf = EncodeIndexKey(kbuf[:0], 1, 1, vals[:2], IntHandle(5)) }); a != 0 {
		t.Errorf("EncodeIndexKey allocs = %v", a)
	}
}

func BenchmarkEncodeRow(b *testing.B) {
	ids, vals, _ := sbtestRow()
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		buf = EncodeRow(buf[:0], ids, vals)
	}
}

func BenchmarkDecodeRow(b *testing.B) {
	ids, vals, dec := sbtestRow()
	row := EncodeRow(nil, ids, vals)
	dst := make([]types.Datum, 4)
	b.ReportAllocs()
	for b.Loop() {
		if err := dec.Decode(row, IntHandle(1), dst); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeRowOneColumn(b *testing.B) {
	ids, vals, dec := sbtestRow()
	dec = dec.Project([]int{3}) // pad only: skips c by length
	row := EncodeRow(nil, ids, vals)
	dst := make([]types.Datum, 1)
	b.ReportAllocs()
	for b.Loop() {
		if err := dec.Decode(row, IntHandle(1), dst); err != nil {
			b.Fatal(err)
		}
	}
}

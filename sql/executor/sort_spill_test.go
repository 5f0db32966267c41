package executor

import (
	"testing"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/types"
)

// A spilled row comes back exactly: kinds, decimal scales, time types and
// precisions, strings and bytes, NULL.
func TestSpillRowRoundTrip(t *testing.T) {
	dec := func(s string) types.Datum {
		d, err := types.ParseDecimal(s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	tm := func(s string, tp byte, fsp int) types.Datum {
		d, err := types.ParseTime(s, tp, fsp)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	row := types.Row{
		{}, types.NewInt(-7), types.NewUint(1 << 63), types.NewFloat(-0.25),
		types.NewString("héllo"), types.NewBytes([]byte{0, 1, 0xff}),
		dec("1.500"), dec("-0.001"), dec("123456789012345678901234567890.12345"),
		tm("2020-02-29", mysql.TypeDate, 0), tm("2020-02-29 10:11:12.5", mysql.TypeDatetime, 2),
		tm("2021-01-01 00:00:00", mysql.TypeTimestamp, 0), types.NewDuration(-3_600_000_250_000, 3),
	}
	in := sortRow{keys: types.Row{types.NewInt(3), dec("2.50")}, row: row, seq: 42}
	out, err := decodeSpillRow(appendSpillRow(nil, in))
	if err != nil {
		t.Fatal(err)
	}
	if out.seq != 42 || len(out.row) != len(row) || len(out.keys) != 2 {
		t.Fatalf("decoded %+v", out)
	}
	for i, want := range append(append(types.Row{}, in.keys...), row...) {
		got := append(append(types.Row{}, out.keys...), out.row...)[i]
		if got.Kind() != want.Kind() || got.String() != want.String() ||
			(want.Kind() == types.KindTime && (got.TimeType() != want.TimeType() || got.Fsp() != want.Fsp())) ||
			(want.Kind() == types.KindDuration && got.Fsp() != want.Fsp()) ||
			(want.Kind() == types.KindDecimal && got.DecimalScale() != want.DecimalScale()) {
			t.Errorf("datum %d: got %v (kind %d), want %v (kind %d)", i, got, got.Kind(), want, want.Kind())
		}
	}
}

package executor_test

import (
	"math"
	"strings"
	"testing"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/sql/catalog"
	"github.com/shoaldb/shoal/sql/executor"
	"github.com/shoaldb/shoal/sql/expression"
	"github.com/shoaldb/shoal/tablecodec"
	"github.com/shoaldb/shoal/types"
)

// Whatever datum reaches a column (literal, expression, binary-protocol
// parameter, hostile or not), what CastToColumn accepts, in strict mode or
// not, is a value of the column's kind that the row codec decodes back to
// itself: nothing an INSERT accepts can make a row unreadable.
func TestCastToColumnOutputAlwaysRoundTrips(t *testing.T) {
	unsigned := func(ft types.FieldType) types.FieldType { ft.Flag |= mysql.UnsignedFlag; return ft }
	str := types.FieldType{Tp: mysql.TypeVarchar, Flen: 10, Charset: "utf8mb4", Collate: "utf8mb4_bin"}
	columnTypes := []types.FieldType{
		{Tp: mysql.TypeTiny}, unsigned(types.FieldType{Tp: mysql.TypeTiny}), {Tp: mysql.TypeLong}, {Tp: mysql.TypeLonglong},
		unsigned(types.FieldType{Tp: mysql.TypeLonglong}), {Tp: mysql.TypeBit, Flen: 4}, {Tp: mysql.TypeYear, Flag: mysql.UnsignedFlag},
		{Tp: mysql.TypeFloat}, {Tp: mysql.TypeDouble}, unsigned(types.FieldType{Tp: mysql.TypeDouble}),
		{Tp: mysql.TypeNewDecimal, Flen: 5, Decimal: 2}, {Tp: mysql.TypeNewDecimal, Flen: 65, Decimal: 30},
		{Tp: mysql.TypeDate}, {Tp: mysql.TypeDatetime, Decimal: 6}, {Tp: mysql.TypeTimestamp},
		{Tp: mysql.TypeDuration}, {Tp: mysql.TypeDuration, Decimal: 6},
		str, {Tp: mysql.TypeString, Flen: 3, Charset: "utf8mb4", Collate: "utf8mb4_bin"},
		{Tp: mysql.TypeBlob, Charset: "utf8mb4", Collate: "utf8mb4_bin"}, {Tp: mysql.TypeVarchar, Flen: 4, Charset: "binary"},
		{Tp: mysql.TypeEnum, Elems: []string{"a", "b"}, Charset: "utf8mb4", Collate: "utf8mb4_bin"},
		{Tp: mysql.TypeSet, Elems: []string{"x", "y"}, Charset: "utf8mb4", Collate: "utf8mb4_bin"},
		{Tp: mysql.TypeJSON},
	}
	dec := func(s string) types.Datum { d, _ := types.ParseDecimal(s); return d }
	hostile := []types.Datum{
		types.NewInt(math.MinInt64), types.NewInt(math.MaxInt64), types.NewUint(math.MaxUint64), types.NewInt(-1), types.NewInt(0),
		types.NewInt(1500), types.NewInt(99991231235959),
		types.NewFloat(math.NaN()), types.NewFloat(math.Inf(1)), types.NewFloat(math.Inf(-1)), types.NewFloat(1e300),
		types.NewFloat(-1e-300), types.NewFloat(3.5),
		dec("99999999999999999999999999999999999999999999999999999999999999999"), dec("-0.000000000000000000000000000001"),
		types.NewDuration(100000*24*3600*1000000, 0), types.NewDuration(-100000*24*3600*1000000, 6), types.NewDuration(types.MaxDurationMicros, 0),
		types.NewTime(types.TimeFields{Year: 2024, Month: 13, Day: 1}, mysql.TypeDatetime, 0),
		types.NewTime(types.TimeFields{Year: 2024, Month: 2, Day: 30, Hour: 25}, mysql.TypeDatetime, 0),
		types.NewTime(types.TimeFields{Year: 9999, Month: 12, Day: 31, Hour: 23, Minute: 59, Second: 59, Micro: 999999}, mysql.TypeDatetime, 6),
		types.NewTime(types.TimeFields{}, mysql.TypeDatetime, 0),
		types.NewString(""), types.NewString("2400000:00:00"), types.NewString("9999-12-31 23:59:59.9999999"), types.NewString("1e400"),
		types.NewString("x,y,x"), types.NewString("b"), types.NewString("{\"a\":1}"), types.NewString("{bad"),
		types.NewString(strings.Repeat("é", 100)), types.NewStringBytes([]byte{'a', 0xff, 0xfe}), types.NewBytes([]byte{0, 1, 2, 3, 4, 5}),
	}
	for _, strict := range []bool{true, false} {
		for i, ft := range columnTypes {
			col := &catalog.ColumnInfo{ID: 1, Name: "c", Type: ft}
			decoder := tablecodec.NewRowDecoder([]tablecodec.RowColumn{{ID: 1, Type: &col.Type}})
			for _, in := range hostile {
				ctx := &executor.Context{Eval: &expression.Context{}, StrictMode: strict}
				v, err := executor.CastToColumn(ctx, in, col, 1)
				if err != nil {
					continue
				}
				if want := tablecodec.DatumKindOf(&col.Type); v.Kind() != want {
					t.Errorf("strict=%v type %d (%d): %s cast to kind %d, want %d", strict, i, ft.Tp, in, v.Kind(), want)
					continue
				}
				row := tablecodec.EncodeRow(nil, []int64{1}, []types.Datum{v})
				out := make([]types.Datum, 1)
				if err := decoder.Decode(row, tablecodec.Handle{}, out); err != nil {
					t.Errorf("strict=%v type %d (%d): %s stored as %s does not decode: %v", strict, i, ft.Tp, in, v, err)
					continue
				}
				if types.Compare(out[0], v) != 0 || out[0].String() != v.String() {
					t.Errorf("strict=%v type %d (%d): %s stored as %s reads back as %s", strict, i, ft.Tp, in, v, out[0])
				}
			}
		}
	}
}

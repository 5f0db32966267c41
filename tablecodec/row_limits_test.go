package tablecodec

import (
	"math"
	"strings"
	"testing"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/types"
)

// Every column type's extreme values (what the executor's column cast can
// let through) decode back to themselves: no value an INSERT accepts can
// make a row unreadable.
func TestRowRoundTripAtTypeLimits(t *testing.T) {
	mustTime := func(s string, tp byte, fsp int) types.Datum {
		d, err := types.ParseTime(s, tp, fsp)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		return d
	}
	mustDur := func(s string, fsp int) types.Datum {
		d, err := types.ParseDuration(s, fsp)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		return d
	}
	unsigned := func(tp byte) *types.FieldType {
		ft := &types.FieldType{Tp: tp}
		ft.Flag |= mysql.UnsignedFlag
		return ft
	}
	cases := []struct {
		name string
		ft   *types.FieldType
		vals []types.Datum
	}{
		{"tinyint", &types.FieldType{Tp: mysql.TypeTiny}, []types.Datum{types.NewInt(-128), types.NewInt(127), types.NewInt(0)}},
		{"tinyint unsigned", unsigned(mysql.TypeTiny), []types.Datum{types.NewUint(0), types.NewUint(255)}},
		{"bigint", &types.FieldType{Tp: mysql.TypeLonglong}, []types.Datum{types.NewInt(math.MinInt64), types.NewInt(math.MaxInt64)}},
		{"bigint unsigned", unsigned(mysql.TypeLonglong), []types.Datum{types.NewUint(0), types.NewUint(math.MaxUint64)}},
		{"bit(64)", &types.FieldType{Tp: mysql.TypeBit, Flen: 64}, []types.Datum{types.NewUint(math.MaxUint64)}},
		{"double", &types.FieldType{Tp: mysql.TypeDouble}, []types.Datum{types.NewFloat(math.MaxFloat64), types.NewFloat(-math.MaxFloat64), types.NewFloat(math.SmallestNonzeroFloat64)}},
		{"float", &types.FieldType{Tp: mysql.TypeFloat}, []types.Datum{types.NewFloat(math.MaxFloat32), types.NewFloat(-math.MaxFloat32)}},
		{"decimal(65,30)", &types.FieldType{Tp: mysql.TypeNewDecimal, Flen: 65, Decimal: 30}, []types.Datum{
			types.DecimalMaxValue(65, 30, false), types.DecimalMaxValue(65, 30, true)}},
		{"decimal(65,0)", &types.FieldType{Tp: mysql.TypeNewDecimal, Flen: 65}, []types.Datum{
			types.DecimalMaxValue(65, 0, false), types.DecimalMaxValue(65, 0, true)}},
		{"decimal(18,0)", &types.FieldType{Tp: mysql.TypeNewDecimal, Flen: 18}, []types.Datum{
			types.DecimalMaxValue(18, 0, false), types.DecimalMaxValue(18, 0, true)}},
		{"datetime(6)", &types.FieldType{Tp: mysql.TypeDatetime, Decimal: 6}, []types.Datum{
			types.NewTime(types.TimeFields{}, mysql.TypeDatetime, 6),
			mustTime("1000-01-01 00:00:00", mysql.TypeDatetime, 6),
			mustTime("9999-12-31 23:59:59.999999", mysql.TypeDatetime, 6)}},
		{"date", &types.FieldType{Tp: mysql.TypeDate}, []types.Datum{
			mustTime("0000-00-00", mysql.TypeDate, 0), mustTime("9999-12-31", mysql.TypeDate, 0)}},
		{"timestamp(6)", &types.FieldType{Tp: mysql.TypeTimestamp, Decimal: 6}, []types.Datum{
			mustTime("1970-01-01 00:00:01", mysql.TypeTimestamp, 6), mustTime("2038-01-19 03:14:07.999999", mysql.TypeTimestamp, 6)}},
		{"time(6)", &types.FieldType{Tp: mysql.TypeDuration, Decimal: 6}, []types.Datum{
			mustDur("838:59:59", 6), mustDur("-838:59:59", 6), mustDur("00:00:00.000001", 6), mustDur("-00:00:00.000001", 6)}},
		{"time", &types.FieldType{Tp: mysql.TypeDuration}, []types.Datum{mustDur("838:59:59", 0), mustDur("-838:59:59", 0)}},
		{"year", &types.FieldType{Tp: mysql.TypeYear, Flag: mysql.UnsignedFlag}, []types.Datum{types.NewUint(1901), types.NewUint(2155), types.NewUint(0)}},
		{"varchar", &types.FieldType{Tp: mysql.TypeVarchar, Flen: 65535}, []types.Datum{types.NewString(""), types.NewString(strings.Repeat("é", 16383))}},
		{"longblob", &types.FieldType{Tp: mysql.TypeLongBlob, Charset: "binary"}, []types.Datum{types.NewBytes(nil), types.NewBytes([]byte{0, 0xff, 0x80})}},
	}
	for _, tc := range cases {
		dec := NewRowDecoder([]RowColumn{{ID: 1, Type: tc.ft}, {ID: 2, Type: tc.ft}})
		for _, v := range tc.vals {
			// Twice, so the value is checked both as the last column and
			// followed by another.
			row := EncodeRow(nil, []int64{1, 2}, []types.Datum{v, v})
			out := make([]types.Datum, 2)
			if err := dec.Decode(row, Handle{}, out); err != nil {
				t.Errorf("%s %s: %v", tc.name, v, err)
				continue
			}
			for i := range out {
				if types.Compare(out[i], v) != 0 || out[i].String() != v.String() {
					t.Errorf("%s: col %d decoded %s, want %s", tc.name, i+1, out[i], v)
				}
			}
		}
	}
}

package expression

import (
	"strconv"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	ptypes "github.com/pingcap/tidb/pkg/parser/types"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/types"
)

// CAST and CONVERT(... , type): NewCast builds them (they take a type, not
// a registry name); ConvertTo is the value conversion the control-flow
// functions share.

// NewCast builds CAST(e AS tp).
func NewCast(e Expr, tp *ptypes.FieldType) (Expr, error) {
	ft := types.FieldType{Tp: tp.GetType(), Flen: tp.GetFlen(), Decimal: tp.GetDecimal(), Flag: tp.GetFlag(), Charset: tp.GetCharset(), Collate: tp.GetCollate()}
	switch ft.Tp {
	case mysql.TypeLonglong, mysql.TypeLong:
		ft.Tp = mysql.TypeLonglong
		ft.Flen = 21
	case mysql.TypeDouble, mysql.TypeFloat:
	case mysql.TypeNewDecimal:
		// CAST(x AS DECIMAL) is DECIMAL(10,0); (p) is (p,0).
		if ft.Flen <= 0 {
			ft.Flen = 10
		}
		if ft.Decimal < 0 {
			ft.Decimal = 0
		}
		if ft.Flen > types.MaxDecimalPrecision || ft.Decimal > types.MaxDecimalScale || ft.Decimal > ft.Flen {
			return nil, errno.New(mysql.ErrTooBigPrecision, "Too-big precision %d specified for 'CAST'. Maximum is %d.", ft.Flen, types.MaxDecimalPrecision)
		}
		ft.Flag = mysql.BinaryFlag
	case mysql.TypeDate, mysql.TypeDatetime, mysql.TypeTimestamp, mysql.TypeDuration:
		ft = TimeFieldType(ft.Tp, max(ft.Decimal, 0))
	case mysql.TypeVarString, mysql.TypeString, mysql.TypeVarchar:
		ft.Tp = mysql.TypeVarString
		if ft.Charset == "" {
			ft.Charset, ft.Collate = "utf8mb4", "utf8mb4_bin"
		}
	default:
		return nil, errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support 'CAST to this type'")
	}
	f := &ScalarFunc{Name: "cast", Args: []Expr{e}, Ft: ft, Deterministic: true, fn: evalCast}
	return f, nil
}

func evalCast(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
	d, err := f.Args[0].Eval(ctx, row)
	if err != nil || d.IsNull() {
		return d, err
	}
	switch {
	case f.Ft.Tp == mysql.TypeLonglong:
		if d.Kind() == types.KindString || d.Kind() == types.KindBytes {
			return castStringToInt(ctx, string(d.Bytes()), f.Ft.IsUnsigned()), nil
		}
		if f.Ft.IsUnsigned() {
			if d.Kind() == types.KindUint64 {
				return d, nil
			}
			if d.Kind() == types.KindInt64 {
				return types.NewUint(uint64(d.Int())), nil
			}
			if d.Kind() == types.KindString || d.Kind() == types.KindBytes {
				if u, err := strconv.ParseUint(string(d.Bytes()), 10, 64); err == nil {
					return types.NewUint(u), nil
				}
			}
			if d.Kind() == types.KindDecimal {
				if types.DecimalSign(d) >= 0 {
					u, _ := types.DecimalToUint(d)
					return types.NewUint(u), nil
				}
				v, _ := d.ToInt()
				return types.NewUint(uint64(v)), nil
			}
		}
		if d.Kind() == types.KindFloat64 {
			return d.ToIntDatum(), nil
		}
		v, _ := d.ToInt()
		return types.NewInt(v), nil
	case f.Ft.Tp == mysql.TypeNewDecimal:
		x, ok := d.ToDecimal()
		if !ok {
			ctx.AppendWarning(errno.New(mysql.ErrTruncatedWrongValue, "Truncated incorrect DECIMAL value: '%s'", d.String()))
		}
		r, _ := types.DecimalRound(x, f.Ft.Decimal, types.RoundHalfUp)
		if !types.DecimalFitsPrecision(r, f.Ft.Flen, f.Ft.Decimal) {
			ctx.AppendWarning(errno.New(mysql.ErrWarnDataOutOfRange, "Out of range value for column 'cast' at row 1"))
			return types.DecimalMaxValue(f.Ft.Flen, f.Ft.Decimal, types.DecimalSign(r) < 0), nil
		}
		return r, nil
	case f.Ft.IsTime():
		t, err := d.ToTime(f.Ft.Tp, f.Ft.Decimal)
		if err != nil {
			incorrectTime(ctx, d)
			return types.Datum{}, nil
		}
		return t, nil
	case f.Ft.Tp == mysql.TypeDuration:
		t, err := d.ToDuration(f.Ft.Decimal)
		if err != nil && err != types.ErrDurationRange {
			ctx.AppendWarning(errno.New(mysql.ErrTruncatedWrongValue, "Truncated incorrect time value: '%s'", d.String()))
			return types.Datum{}, nil
		}
		return t, nil
	case f.Ft.Tp == mysql.TypeDouble || f.Ft.Tp == mysql.TypeFloat:
		return types.NewFloat(d.ToFloat()), nil
	default:
		r := ConvertTo(d, &f.Ft)
		if f.Ft.Flen > 0 && f.Ft.IsString() && (r.Kind() == types.KindString || r.Kind() == types.KindBytes) {
			if rs := []rune(string(r.Bytes())); len(rs) > f.Ft.Flen {
				ctx.AppendWarning(errno.New(mysql.ErrTruncatedWrongValue, "Truncated incorrect CHAR(%d) value: '%s'", f.Ft.Flen, string(r.Bytes())))
				if r.Kind() == types.KindBytes {
					return types.NewBytes(r.Bytes()[:f.Ft.Flen]), nil
				}
				return types.NewString(string(rs[:f.Ft.Flen])), nil
			}
		}
		return r, nil
	}
}

// ConvertTo converts d to the value class of ft (int, double, string).
func ConvertTo(d types.Datum, ft *types.FieldType) types.Datum {
	if d.IsNull() {
		return d
	}
	switch {
	case ft.IsInteger():
		if ft.IsUnsigned() && d.Kind() == types.KindUint64 {
			return d
		}
		if d.Kind() == types.KindInt64 {
			return d
		}
		v, _ := d.ToInt()
		return types.NewInt(v)
	case ft.Tp == mysql.TypeNewDecimal:
		x, _ := d.ToDecimal()
		if ft.Decimal >= 0 && ft.Decimal != x.DecimalScale() {
			x, _ = types.DecimalRound(x, ft.Decimal, types.RoundHalfUp)
		}
		return x
	case ft.Tp == mysql.TypeDouble || ft.Tp == mysql.TypeFloat:
		if d.Kind() == types.KindFloat64 {
			return d
		}
		return types.NewFloat(d.ToFloat())
	case ft.IsTime():
		if d.Kind() == types.KindTime && d.TimeType() == ft.Tp {
			return d
		}
		if t, err := d.ToTime(ft.Tp, max(ft.Decimal, 0)); err == nil {
			return t
		}
		return types.Datum{}
	case ft.Tp == mysql.TypeDuration:
		if d.Kind() == types.KindDuration {
			return d
		}
		if t, err := d.ToDuration(max(ft.Decimal, 0)); err == nil {
			return t
		}
		return types.Datum{}
	case ft.IsString():
		if d.Kind() == types.KindString || d.Kind() == types.KindBytes {
			return d
		}
		return types.NewStringBytes(d.AppendText(nil))
	}
	return d
}

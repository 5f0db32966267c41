package expression

import (
	"strconv"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	ptypes "github.com/pingcap/tidb/pkg/parser/types"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/types"
)

// NewCast builds CAST(e AS tp).
func NewCast(e Expr, tp *ptypes.FieldType) (Expr, error) {
	ft := types.FieldType{Tp: tp.GetType(), Flen: tp.GetFlen(), Decimal: tp.GetDecimal(), Flag: tp.GetFlag(), Charset: tp.GetCharset(), Collate: tp.GetCollate()}
	switch ft.Tp {
	case mysql.TypeLonglong, mysql.TypeLong:
		ft.Tp = mysql.TypeLonglong
		ft.Flen = 21
	case mysql.TypeDouble, mysql.TypeFloat, mysql.TypeNewDecimal:
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
		if f.Ft.IsUnsigned() {
			if d.Kind() == types.KindInt64 {
				return types.NewUint(uint64(d.Int())), nil
			}
			if d.Kind() == types.KindString || d.Kind() == types.KindBytes {
				if u, err := strconv.ParseUint(string(d.Bytes()), 10, 64); err == nil {
					return types.NewUint(u), nil
				}
			}
		}
		if d.Kind() == types.KindFloat64 {
			return d.ToIntDatum(), nil
		}
		v, _ := d.ToInt()
		return types.NewInt(v), nil
	case f.Ft.Tp == mysql.TypeNewDecimal:
		v := d.ToFloat()
		if f.Ft.Decimal >= 0 {
			s := strconv.FormatFloat(v, 'f', f.Ft.Decimal, 64)
			v, _ = strconv.ParseFloat(s, 64)
		}
		if f.Ft.Decimal == 0 {
			return types.NewFloat(v).ToIntDatum(), nil
		}
		return types.NewFloat(v), nil
	case f.Ft.Tp == mysql.TypeDouble || f.Ft.Tp == mysql.TypeFloat:
		return types.NewFloat(d.ToFloat()), nil
	default:
		return ConvertTo(d, &f.Ft), nil
	}
}

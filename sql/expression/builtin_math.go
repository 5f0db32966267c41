package expression

import (
	"math"
	"math/rand/v2"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/types"
)

// Mathematical functions.

func init() {
	registerBuiltins("math", map[string]builtin{
		"abs":      oneArg(evalAbs, firstArgTypeSigned),
		"floor":    oneArg(numFunc1(math.Floor), roundType1),
		"ceil":     oneArg(numFunc1(math.Ceil), roundType1),
		"ceiling":  oneArg(numFunc1(math.Ceil), roundType1),
		"sqrt":     oneArg(numFunc1(math.Sqrt), doubleType),
		"round":    {1, 2, evalRound, roundType, false},
		"truncate": {2, 2, evalRound, roundType, false},
		"sign": {1, 1, strFn(func(a []types.Datum) types.Datum {
			f := a[0].ToFloat()
			switch {
			case f > 0:
				return types.NewInt(1)
			case f < 0:
				return types.NewInt(-1)
			}
			return types.NewInt(0)
		}), intType, false},
		"pow":   {2, 2, strFn(func(a []types.Datum) types.Datum { return types.NewFloat(math.Pow(a[0].ToFloat(), a[1].ToFloat())) }), doubleType, false},
		"power": {2, 2, strFn(func(a []types.Datum) types.Datum { return types.NewFloat(math.Pow(a[0].ToFloat(), a[1].ToFloat())) }), doubleType, false},
		"exp":   {1, 1, mathFn(func(x float64) (float64, bool) { return math.Exp(x), true }), doubleType, false},
		"ln":    {1, 1, mathFn(func(x float64) (float64, bool) { return math.Log(x), x > 0 }), doubleType, false},
		"log2":  {1, 1, mathFn(func(x float64) (float64, bool) { return math.Log2(x), x > 0 }), doubleType, false},
		"log10": {1, 1, mathFn(func(x float64) (float64, bool) { return math.Log10(x), x > 0 }), doubleType, false},
		"log": {1, 2, strFn(func(a []types.Datum) types.Datum {
			if len(a) == 1 {
				if x := a[0].ToFloat(); x > 0 {
					return types.NewFloat(math.Log(x))
				}
				return types.Datum{}
			}
			b, x := a[0].ToFloat(), a[1].ToFloat()
			if b <= 0 || b == 1 || x <= 0 {
				return types.Datum{}
			}
			return types.NewFloat(math.Log(x) / math.Log(b))
		}), doubleType, false},
		"pi": {0, 0, func(*Context, *ScalarFunc, types.Row) (types.Datum, error) { return types.NewFloat(math.Pi), nil }, doubleType, false},
		"rand": {0, 1, func(*Context, *ScalarFunc, types.Row) (types.Datum, error) {
			return types.NewFloat(rand.Float64()), nil
		}, doubleType, true},
	})
}

func evalAbs(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
	d, err := f.Args[0].Eval(ctx, row)
	if err != nil || d.IsNull() {
		return d, err
	}
	switch d.Kind() {
	case types.KindInt64:
		if d.Int() < 0 {
			if d.Int() == math.MinInt64 {
				return types.Datum{}, errno.New(mysql.ErrDataOutOfRange, "BIGINT value is out of range in 'abs(%d)'", d.Int())
			}
			return types.NewInt(-d.Int()), nil
		}
		return d, nil
	case types.KindUint64:
		return d, nil
	case types.KindDecimal:
		return types.DecimalAbs(d), nil
	}
	return types.NewFloat(math.Abs(d.ToFloat())), nil
}

func numFunc1(fn func(float64) float64) evalFunc {
	return func(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
		d, err := f.Args[0].Eval(ctx, row)
		if err != nil || d.IsNull() {
			return d, err
		}
		if d.Kind() == types.KindDecimal && (f.Name == "floor" || f.Name == "ceil" || f.Name == "ceiling") {
			mode := types.RoundFloor
			if f.Name != "floor" {
				mode = types.RoundCeil
			}
			r, _ := types.DecimalRound(d, 0, mode)
			if f.Ft.IsInteger() {
				if v, ok := r.ToInt(); ok {
					return types.NewInt(v), nil
				}
			}
			return r, nil
		}
		if (d.Kind() == types.KindInt64 || d.Kind() == types.KindUint64) && f.Ft.IsInteger() {
			return d, nil
		}
		r := fn(d.ToFloat())
		if f.Ft.IsInteger() {
			return types.NewFloat(r).ToIntDatum(), nil
		}
		return types.NewFloat(r), nil
	}
}

func roundType(args []Expr) types.FieldType {
	at := args[0].Type()
	if at.IsInteger() {
		return intType(args)
	}
	if at.Tp == mysql.TypeNewDecimal {
		s := 0
		if len(args) > 1 {
			s = decScale(at)
			if c, ok := args[1].(*Constant); ok && !c.Value.IsNull() {
				v, _ := c.Value.ToInt()
				s = int(min(max(v, 0), types.MaxDecimalScale))
			}
		}
		return decimalType(intDigits(at)+1+s, s)
	}
	return doubleType(args)
}

func evalRound(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
	d, err := f.Args[0].Eval(ctx, row)
	if err != nil || d.IsNull() {
		return d, err
	}
	places := int64(0)
	if len(f.Args) > 1 {
		p, err := f.Args[1].Eval(ctx, row)
		if err != nil || p.IsNull() {
			return types.Datum{}, err
		}
		places, _ = p.ToInt()
	}
	if d.Kind() == types.KindInt64 && places >= 0 {
		return d, nil
	}
	if d.Kind() == types.KindDecimal || (f.Ft.Tp == mysql.TypeNewDecimal && isExact(d)) {
		x, _ := d.ToDecimal()
		mode := types.RoundHalfUp
		if f.Name == "truncate" {
			mode = types.RoundTrunc
		}
		r, _ := types.DecimalRound(x, int(max(min(places, 100), -100)), mode)
		if f.Ft.Tp == mysql.TypeNewDecimal && places >= 0 && int64(f.Ft.Decimal) > places {
			r, _ = types.DecimalRound(r, f.Ft.Decimal, types.RoundHalfUp) // pad to the type's scale
		}
		if f.Ft.IsInteger() {
			v, _ := r.ToInt()
			return types.NewInt(v), nil
		}
		return r, nil
	}
	if f.Name == "truncate" {
		scale := math.Pow(10, float64(places))
		r := math.Trunc(d.ToFloat()*scale) / scale
		if f.Ft.IsInteger() {
			return types.NewFloat(r).ToIntDatum(), nil
		}
		return types.NewFloat(r), nil
	}
	scale := math.Pow(10, float64(places))
	r := math.Round(d.ToFloat()*scale) / scale
	if f.Ft.IsInteger() {
		return types.NewFloat(r).ToIntDatum(), nil
	}
	return types.NewFloat(r), nil
}

func roundType1(args []Expr) types.FieldType {
	ft := args[0].Type()
	if ft.IsInteger() || ft.Tp == mysql.TypeNewDecimal {
		return intType(args)
	}
	return doubleType(args)
}

func mathFn(fn func(x float64) (float64, bool)) evalFunc {
	return func(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
		d, err := f.Args[0].Eval(ctx, row)
		if err != nil || d.IsNull() {
			return d, err
		}
		r, ok := fn(d.ToFloat())
		if !ok || math.IsNaN(r) || math.IsInf(r, 0) {
			return types.Datum{}, nil
		}
		return types.NewFloat(r), nil
	}
}

package expression

import (
	"math"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/types"
)

// Logical and unary operators: AND, OR, XOR, NOT, IS [NOT] NULL/TRUE/FALSE,
// unary minus.

func init() {
	registerBuiltins("op", map[string]builtin{
		"and":        {2, -1, evalAnd, boolType, false},
		"or":         {2, -1, evalOr, boolType, false},
		"xor":        twoArgs(evalXor, boolType),
		"not":        oneArg(evalNot, boolType),
		"unaryminus": oneArg(evalNeg, firstArgTypeSigned),
		"isnull":     oneArg(evalIsNull, boolType),
		"istrue":     oneArg(evalIsTrue(true), boolType),
		"isfalse":    oneArg(evalIsTrue(false), boolType),
	})
}

// logicFold evaluates AND (stop on false) or OR (stop on true) with
// three-valued logic: the stopping value wins, else NULL if any operand was
// NULL, else the other value.
func logicFold(stopOn bool) evalFunc {
	return func(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
		null := false
		for _, arg := range f.Args {
			d, err := arg.Eval(ctx, row)
			if err != nil {
				return d, err
			}
			v, ok := d.ToBool()
			if !ok {
				null = true
			} else if v == stopOn {
				return types.NewBool(stopOn), nil
			}
		}
		if null {
			return types.Datum{}, nil
		}
		return types.NewBool(!stopOn), nil
	}
}

var (
	evalAnd = logicFold(false)
	evalOr  = logicFold(true)
)

func evalXor(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
	a, b, null, err := evalArgs2(ctx, f, row)
	if null || err != nil {
		return types.Datum{}, err
	}
	x, _ := a.ToBool()
	y, _ := b.ToBool()
	return types.NewBool(x != y), nil
}

func evalNot(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
	d, err := f.Args[0].Eval(ctx, row)
	if err != nil || d.IsNull() {
		return types.Datum{}, err
	}
	v, _ := d.ToBool()
	return types.NewBool(!v), nil
}

func evalNeg(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
	d, err := f.Args[0].Eval(ctx, row)
	if err != nil || d.IsNull() {
		return types.Datum{}, err
	}
	switch d.Kind() {
	case types.KindInt64:
		if d.Int() == math.MinInt64 {
			return types.Datum{}, errno.New(mysql.ErrDataOutOfRange, "BIGINT value is out of range in '-(%d)'", d.Int())
		}
		return types.NewInt(-d.Int()), nil
	case types.KindUint64:
		if d.Uint() > 1<<63 {
			return types.Datum{}, errno.New(mysql.ErrDataOutOfRange, "BIGINT value is out of range in '-(%d)'", d.Uint())
		}
		return types.NewInt(-int64(d.Uint())), nil
	case types.KindDecimal:
		return types.DecimalNeg(d), nil
	}
	if f.Ft.Tp == mysql.TypeNewDecimal {
		x, _ := d.ToDecimal()
		return types.DecimalNeg(x), nil
	}
	return types.NewFloat(-d.ToFloat()), nil
}

func evalIsNull(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
	d, err := f.Args[0].Eval(ctx, row)
	if err != nil {
		return d, err
	}
	return types.NewBool(d.IsNull()), nil
}

func evalIsTrue(want bool) evalFunc {
	return func(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
		d, err := f.Args[0].Eval(ctx, row)
		if err != nil {
			return d, err
		}
		v, ok := d.ToBool()
		return types.NewBool(ok && v == want), nil
	}
}

package expression

import (
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/types"
)

// Control flow: CASE, IF, IFNULL, COALESCE, NULLIF, and the result type they
// unify their branches to.

func init() {
	registerBuiltins("control", map[string]builtin{
		"case":         {1, -1, evalCaseWhen, caseWhenType, false},
		"case_operand": {2, -1, evalCaseOperand, caseOperandType, false},
		"if":           {3, 3, evalIf, func(a []Expr) types.FieldType { return unifiedType(a[1:]) }, false},
		"ifnull":       twoArgs(evalCoalesce, unifiedType),
		"coalesce":     {1, -1, evalCoalesce, unifiedType, false},
		"nullif":       twoArgs(evalNullIf, firstArgType),
	})
}

// evalCase: args are [operand?] (when, then)* [else]; Ft.Elems unused. The
// operand form is encoded by the planner as a leading arg with name
// "case_operand"; here a flag in Ft would be clumsy, so two funcs exist.
func evalCaseWhen(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
	n := len(f.Args)
	for i := 0; i+1 < n; i += 2 {
		c, err := f.Args[i].Eval(ctx, row)
		if err != nil {
			return c, err
		}
		if v, ok := c.ToBool(); ok && v {
			return castResult(f, f.Args[i+1], ctx, row)
		}
	}
	if n%2 == 1 {
		return castResult(f, f.Args[n-1], ctx, row)
	}
	return types.Datum{}, nil
}

func evalCaseOperand(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
	op, err := f.Args[0].Eval(ctx, row)
	if err != nil {
		return op, err
	}
	n := len(f.Args)
	for i := 1; i+1 < n; i += 2 {
		w, err := f.Args[i].Eval(ctx, row)
		if err != nil {
			return w, err
		}
		if !op.IsNull() && !w.IsNull() && CompareForArgs(f.Args[0], f.Args[i], op, w) == 0 {
			return castResult(f, f.Args[i+1], ctx, row)
		}
	}
	if (n-1)%2 == 1 {
		return castResult(f, f.Args[n-1], ctx, row)
	}
	return types.Datum{}, nil
}

// castResult evaluates e and converts it to f's result type class, so that a
// CASE/IF/COALESCE mixing ints and strings returns one kind.
func castResult(f *ScalarFunc, e Expr, ctx *Context, row types.Row) (types.Datum, error) {
	d, err := e.Eval(ctx, row)
	if err != nil || d.IsNull() {
		return d, err
	}
	return ConvertTo(d, &f.Ft), nil
}

// unifiedType is the result type of CASE/IF/COALESCE over the given value
// expressions.
func unifiedType(args []Expr) types.FieldType {
	var res *types.FieldType
	for _, a := range args {
		ft := a.Type()
		if ft.Tp == mysql.TypeNull {
			continue
		}
		if res == nil {
			c := *ft
			res = &c
			continue
		}
		switch {
		case res.IsInteger() && ft.IsInteger():
			if ft.Flen > res.Flen {
				res.Flen = ft.Flen
			}
			if !ft.IsUnsigned() {
				res.Flag &^= mysql.UnsignedFlag
			}
		case (res.IsInteger() || res.Tp == mysql.TypeNewDecimal) && (ft.IsInteger() || ft.Tp == mysql.TypeNewDecimal):
			dec := max(decScale(res), decScale(ft))
			*res = decimalType(max(intDigits(res), intDigits(ft))+dec, dec)
		case res.IsTime() && ft.IsTime():
			if ft.Tp != res.Tp {
				*res = TimeFieldType(mysql.TypeDatetime, max(res.Decimal, ft.Decimal))
			} else {
				res.Decimal = max(res.Decimal, ft.Decimal)
			}
		case res.Tp == mysql.TypeDuration && ft.Tp == mysql.TypeDuration:
			res.Decimal = max(res.Decimal, ft.Decimal)
		case isNumericType(res) && isNumericType(ft):
			*res = doubleType(nil)
		default:
			n := max(res.Flen, ft.Flen)
			*res = stringType(nil)
			res.Flen = n
		}
	}
	if res == nil {
		return types.FieldType{Tp: mysql.TypeNull, Flag: mysql.BinaryFlag}
	}
	res.Flag &^= mysql.NotNullFlag | mysql.PriKeyFlag | mysql.UniqueKeyFlag | mysql.MultipleKeyFlag | mysql.AutoIncrementFlag
	return *res
}

func isNumericType(ft *types.FieldType) bool {
	return ft.IsInteger() || ft.Tp == mysql.TypeDouble || ft.Tp == mysql.TypeFloat || ft.Tp == mysql.TypeNewDecimal
}

func caseWhenType(args []Expr) types.FieldType {
	var vals []Expr
	n := len(args)
	for i := 1; i < n; i += 2 {
		vals = append(vals, args[i])
	}
	if n%2 == 1 {
		vals = append(vals, args[n-1])
	}
	return unifiedType(vals)
}

func caseOperandType(args []Expr) types.FieldType {
	return caseWhenType(args[1:])
}

func evalIf(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
	c, err := f.Args[0].Eval(ctx, row)
	if err != nil {
		return c, err
	}
	if v, ok := c.ToBool(); ok && v {
		return castResult(f, f.Args[1], ctx, row)
	}
	return castResult(f, f.Args[2], ctx, row)
}

func evalCoalesce(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
	for _, a := range f.Args {
		d, err := a.Eval(ctx, row)
		if err != nil {
			return d, err
		}
		if !d.IsNull() {
			return ConvertTo(d, &f.Ft), nil
		}
	}
	return types.Datum{}, nil
}

func evalNullIf(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
	a, err := f.Args[0].Eval(ctx, row)
	if err != nil || a.IsNull() {
		return a, err
	}
	b, err := f.Args[1].Eval(ctx, row)
	if err != nil {
		return b, err
	}
	if !b.IsNull() && CompareForArgs(f.Args[0], f.Args[1], a, b) == 0 {
		return types.Datum{}, nil
	}
	return a, nil
}

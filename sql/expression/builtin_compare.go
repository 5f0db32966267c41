package expression

import (
	"github.com/shoaldb/shoal/types"
	"github.com/shoaldb/shoal/types/collate"
)

// Comparison: = <> < <= > >= <=>, IN, GREATEST, LEAST.

func init() {
	registerBuiltins("compare", map[string]builtin{
		"eq":       twoArgs(cmpFunc("eq"), boolType),
		"ne":       twoArgs(cmpFunc("ne"), boolType),
		"lt":       twoArgs(cmpFunc("lt"), boolType),
		"le":       twoArgs(cmpFunc("le"), boolType),
		"gt":       twoArgs(cmpFunc("gt"), boolType),
		"ge":       twoArgs(cmpFunc("ge"), boolType),
		"nulleq":   twoArgs(evalNullEQ, boolType),
		"in":       {2, -1, evalIn, boolType, false},
		"greatest": {2, -1, evalGreatestLeast(true), unifiedType, false},
		"least":    {2, -1, evalGreatestLeast(false), unifiedType, false},
	})
}

func cmpFunc(op string) evalFunc {
	return func(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
		a, b, null, err := evalArgs2(ctx, f, row)
		if null || err != nil {
			return types.Datum{}, err
		}
		return types.NewBool(compareOp(op, CompareForArgs(f.Args[0], f.Args[1], a, b))), nil
	}
}

// CompareForArgs compares two values of the given expressions under the
// first side's collation, or the second's when the first compares
// bytewise (a column against a literal takes the column's collation, as
// MySQL's coercibility rules give; two columns of different non-binary
// collations, MySQL's 1267, take the first's).
func CompareForArgs(ea, eb Expr, a, b types.Datum) int {
	return types.CompareCollated(a, b, comparisonCollator(ea.Type(), eb.Type()))
}

func comparisonCollator(a, b *types.FieldType) collate.Collator {
	if c := types.CollatorOf(a.Collate); c != nil {
		return c
	}
	return types.CollatorOf(b.Collate)
}

// isCI reports a type whose strings do not compare bytewise.
func isCI(ft *types.FieldType) bool { return types.HasSortKeys(ft.Collate) }

func evalNullEQ(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
	a, err := f.Args[0].Eval(ctx, row)
	if err != nil {
		return a, err
	}
	b, err := f.Args[1].Eval(ctx, row)
	if err != nil {
		return b, err
	}
	if a.IsNull() || b.IsNull() {
		return types.NewBool(a.IsNull() && b.IsNull()), nil
	}
	return types.NewBool(CompareForArgs(f.Args[0], f.Args[1], a, b) == 0), nil
}

// evalIn: args[0] IN (args[1:]).
func evalIn(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
	l, err := f.Args[0].Eval(ctx, row)
	if err != nil || l.IsNull() {
		return types.Datum{}, err
	}
	null := false
	for _, a := range f.Args[1:] {
		r, err := a.Eval(ctx, row)
		if err != nil {
			return r, err
		}
		if r.IsNull() {
			null = true
			continue
		}
		if CompareForArgs(f.Args[0], a, l, r) == 0 {
			return types.NewInt(1), nil
		}
	}
	if null {
		return types.Datum{}, nil
	}
	return types.NewInt(0), nil
}

func evalGreatestLeast(greatest bool) evalFunc {
	return func(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
		var res types.Datum
		for i, a := range f.Args {
			d, err := a.Eval(ctx, row)
			if err != nil || d.IsNull() {
				return types.Datum{}, err
			}
			c := types.Compare(d, res)
			if i == 0 || (greatest && c > 0) || (!greatest && c < 0) {
				res = d
			}
		}
		return ConvertTo(res, &f.Ft), nil
	}
}

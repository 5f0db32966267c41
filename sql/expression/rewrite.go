package expression

import "github.com/shoaldb/shoal/types"

// ShiftColumns returns e with every Column index reduced by delta (used when
// a condition on a joined row is pushed down to one side).
func ShiftColumns(e Expr, delta int) Expr {
	switch x := e.(type) {
	case *Column:
		return &Column{Index: x.Index - delta, Ft: x.Ft, Name: x.Name}
	case *ScalarFunc:
		nf := *x
		nf.Args = make([]Expr, len(x.Args))
		for i, a := range x.Args {
			nf.Args[i] = ShiftColumns(a, delta)
		}
		return &nf
	}
	return e
}

// HasSubquery reports whether e contains a subquery.
func HasSubquery(e Expr) bool {
	switch x := e.(type) {
	case *Subquery:
		return true
	case *ScalarFunc:
		for _, a := range x.Args {
			if HasSubquery(a) {
				return true
			}
		}
	}
	return false
}

// EvalConst evaluates an expression that reads no column.
func EvalConst(ctx *Context, e Expr) (types.Datum, error) { return e.Eval(ctx, nil) }

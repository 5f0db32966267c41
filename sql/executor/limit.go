package executor

import (
	"math"

	"github.com/shoaldb/shoal/sql/expression"
	"github.com/shoaldb/shoal/types"
)

type limitExec struct {
	ctx                   *Context
	child                 Executor
	offsetExpr, countExpr expression.Expr
	offset, count         int64
	seen                  int64
}

func evalCount(ctx *Context, e expression.Expr, def int64) (int64, error) {
	if e == nil {
		return def, nil
	}
	v, err := e.Eval(ctx.Eval, nil)
	if err != nil {
		return 0, err
	}
	if v.IsNull() {
		return 0, nil
	}
	if v.Kind() == types.KindUint64 && v.Uint() > math.MaxInt64 {
		return math.MaxInt64, nil
	}
	n, _ := v.ToInt()
	if n < 0 {
		return 0, nil
	}
	return n, nil
}

func (e *limitExec) Open() error {
	var err error
	if e.offset, err = evalCount(e.ctx, e.offsetExpr, 0); err != nil {
		return err
	}
	if e.count, err = evalCount(e.ctx, e.countExpr, math.MaxInt64); err != nil {
		return err
	}
	e.seen = 0
	return e.child.Open()
}
func (e *limitExec) Close() error { return e.child.Close() }
func (e *limitExec) Next() (types.Row, error) {
	for e.offset > 0 {
		row, err := e.child.Next()
		if err != nil || row == nil {
			return row, err
		}
		e.offset--
	}
	if e.seen >= e.count {
		return nil, nil
	}
	row, err := e.child.Next()
	if row != nil {
		e.seen++
	}
	return row, err
}

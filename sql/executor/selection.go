package executor

import (
	"github.com/shoaldb/shoal/sql/expression"
	"github.com/shoaldb/shoal/types"
)

type selectionExec struct {
	ctx   *Context
	child Executor
	cond  expression.Expr
}

func (e *selectionExec) Open() error  { return e.child.Open() }
func (e *selectionExec) Close() error { return e.child.Close() }
func (e *selectionExec) Next() (types.Row, error) {
	for {
		row, err := e.child.Next()
		if err != nil || row == nil {
			return row, err
		}
		v, err := e.cond.Eval(e.ctx.Eval, row)
		if err != nil {
			return nil, err
		}
		if ok, known := v.ToBool(); ok && known {
			return row, nil
		}
	}
}

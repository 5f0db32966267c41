package executor

import (
	"github.com/shoaldb/shoal/sql/expression"
	"github.com/shoaldb/shoal/types"
)

type projectionExec struct {
	ctx   *Context
	child Executor
	exprs []expression.Expr
	rows  rowAlloc
}

func (e *projectionExec) Open() error  { return e.child.Open() }
func (e *projectionExec) Close() error { return e.child.Close() }
func (e *projectionExec) Next() (types.Row, error) {
	row, err := e.child.Next()
	if err != nil || row == nil {
		return row, err
	}
	out := e.rows.row(len(e.exprs))
	for i, x := range e.exprs {
		if c, ok := x.(*expression.Column); ok {
			out[i] = row[c.Index]
			continue
		}
		if out[i], err = x.Eval(e.ctx.Eval, row); err != nil {
			return nil, err
		}
	}
	return out, nil
}

package executor

import (
	"github.com/shoaldb/shoal/sql/planner"
	"github.com/shoaldb/shoal/types"
)

// ExecDML runs an INSERT, UPDATE or DELETE plan.
func ExecDML(ctx *Context, p planner.Plan) error {
	switch x := p.(type) {
	case *planner.Insert:
		return execInsert(ctx, x)
	case *planner.Update:
		return execUpdate(ctx, x)
	case *planner.Delete:
		return execDelete(ctx, x)
	}
	return errUnsupportedPlan(p)
}

func drainPlan(ctx *Context, p planner.Plan) ([]types.Row, error) {
	e, err := Build(ctx, p)
	if err != nil {
		return nil, err
	}
	return Drain(e)
}

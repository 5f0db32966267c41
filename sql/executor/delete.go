package executor

import (
	"github.com/shoaldb/shoal/sql/planner"
)

func execDelete(ctx *Context, p *planner.Delete) error {
	rows, err := drainPlan(ctx, p.Source)
	if err != nil {
		return err
	}
	w := newWriter(ctx, p.Table)
	for _, row := range rows {
		h, err := w.tc.handleOf(p.Table, row, w.ctx.zone())
		if err != nil {
			return err
		}
		if err := w.removeRow(row, h); err != nil {
			return err
		}
		ctx.AffectedRows++
	}
	return nil
}

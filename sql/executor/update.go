package executor

import (
	"errors"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/sql/catalog"
	"github.com/shoaldb/shoal/sql/planner"
	"github.com/shoaldb/shoal/types"
)

func execUpdate(ctx *Context, p *planner.Update) error {
	rows, err := drainPlan(ctx, p.Source)
	if err != nil {
		return err
	}
	w := newWriter(ctx, p.Table)
	for i, old := range rows {
		nrow := append(types.Row(nil), old...)
		if err := applyAssignments(ctx, p.Table, p.Exprs, p.Assignments, nrow, nrow, i+1); err != nil {
			return err
		}
		if err := finishRow(ctx, p.Exprs, p.Table, nrow, i+1); err != nil {
			if p.Ignore && isCheckViolation(err) {
				ctx.Eval.AppendWarning(err)
				continue
			}
			return err
		}
		if rowsEqual(old, nrow) {
			continue
		}
		if err := touchOnUpdate(ctx, p.Table, p.Assignments, nrow, i+1); err != nil {
			return err
		}
		if err := refreshAfterTouch(ctx, p.Exprs, p.Table, nrow, i+1); err != nil {
			if p.Ignore && isCheckViolation(err) {
				ctx.Eval.AppendWarning(err)
				continue
			}
			return err
		}
		if err := w.updateRow(old, nrow); err != nil {
			if p.Ignore {
				var se *errno.SQLError
				if errors.As(err, &se) && se.Code == mysql.ErrDupEntry {
					ctx.Eval.AppendWarning(err)
					continue
				}
			}
			return err
		}
		ctx.AffectedRows++
	}
	return nil
}

// applyAssignments evaluates assignments over evalRow, writing into row in
// order (a later assignment sees earlier ones when evalRow is row).
func applyAssignments(ctx *Context, t *catalog.TableInfo, te *planner.TableExprs, as []planner.Assignment, evalRow, row types.Row, rowNum int) error {
	for _, a := range as {
		var v types.Datum
		var err error
		c := t.Columns[a.Offset]
		if a.Expr == nil && c.IsGenerated() {
			continue // SET g = DEFAULT: recomputed with the row
		}
		if a.Expr == nil && hasExprDefault(te, a.Offset) {
			v, err = te.Defaults[a.Offset].Eval(ctx.Eval, evalRow)
		} else if a.Expr == nil {
			v, err = DefaultValue(ctx, c, rowNum)
		} else {
			v, err = a.Expr.Eval(ctx.Eval, evalRow)
		}
		if err != nil {
			return err
		}
		if v, err = CastToColumn(ctx, v, c, rowNum); err != nil {
			return err
		}
		if v.IsNull() && (c.Type.NotNull() || c.PreventNull) {
			if ctx.StrictMode || c.PreventNull {
				return errno.NewStd(mysql.ErrBadNull, c.Name)
			}
			ctx.Eval.AppendWarning(errno.NewStd(mysql.ErrBadNull, c.Name))
			v = zeroValue(c)
		}
		row[a.Offset] = v
	}
	return nil
}

func rowsEqual(a, b types.Row) bool {
	for i := range a {
		if !sameDatum(a[i], b[i]) {
			return false
		}
	}
	return true
}

package executor

import (
	"github.com/shoaldb/shoal/sql/catalog"
	"github.com/shoaldb/shoal/sql/planner"
	"github.com/shoaldb/shoal/types"
)

// touchOnUpdate sets the ON UPDATE CURRENT_TIMESTAMP columns of row, an
// update of a row that changed, to the statement's time, except those the
// statement assigns (MySQL: assigning the column, even its current value,
// keeps it from moving; a row whose values do not change is not
// touched, which the caller checks first).
func touchOnUpdate(ctx *Context, t *catalog.TableInfo, assigned []planner.Assignment, row types.Row, rowNum int) error {
next:
	for off, c := range t.Columns {
		if !c.OnUpdate || c.State == catalog.StateDeleteOnly {
			continue
		}
		for _, a := range assigned {
			if a.Offset == off {
				continue next
			}
		}
		v, err := CastToColumn(ctx, ctx.Eval.NowDatum(min(max(c.Type.Decimal, 0), types.MaxFsp)), c, rowNum)
		if err != nil {
			return err
		}
		row[off] = v
	}
	return nil
}

package executor

import (
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/sql/catalog"
	"github.com/shoaldb/shoal/sql/planner"
	"github.com/shoaldb/shoal/types"
)

// Writers evaluate a table's expressions over the row they are about to
// write, in this order: the statement's values and literal defaults, then
// expression defaults (in table order), then generated columns (in table
// order; VIRTUAL ones are stored in the row like STORED ones, so reads
// and indexes find them), then the CHECK constraints on the result.

// exprDefault evaluates column off's expression default over row.
func exprDefault(ctx *Context, te *planner.TableExprs, t *catalog.TableInfo, off int, row types.Row, rowNum int) (types.Datum, error) {
	v, err := te.Defaults[off].Eval(ctx.Eval, row)
	if err != nil {
		return types.Datum{}, err
	}
	return CastToColumn(ctx, v, t.Columns[off], rowNum)
}

// hasExprDefault reports whether column off's default is an expression.
func hasExprDefault(te *planner.TableExprs, off int) bool {
	if te == nil {
		return false
	}
	_, ok := te.Defaults[off]
	return ok
}

// computeGenerated sets every generated column of row from its expression.
func computeGenerated(ctx *Context, te *planner.TableExprs, t *catalog.TableInfo, row types.Row, rowNum int) error {
	if te == nil {
		return nil
	}
	for _, g := range te.Generated {
		v, err := g.Expr.Eval(ctx.Eval, row)
		if err != nil {
			return err
		}
		c := t.Columns[g.Offset]
		if v, err = CastToColumn(ctx, v, c, rowNum); err != nil {
			return err
		}
		if v.IsNull() && c.Type.NotNull() {
			err := errno.NewStd(mysql.ErrBadNull, c.Name)
			if ctx.StrictMode {
				return err
			}
			ctx.Eval.AppendWarning(err)
			v = zeroValue(c)
		}
		row[g.Offset] = v
	}
	return nil
}

// checkRow evaluates the enforced CHECK constraints over row: a false
// result is 3819 (NULL, unknown, passes, as in MySQL).
func checkRow(ctx *Context, te *planner.TableExprs, row types.Row) error {
	if te == nil {
		return nil
	}
	for _, ck := range te.Checks {
		v, err := ck.Expr.Eval(ctx.Eval, row)
		if err != nil {
			return err
		}
		if ok, known := v.ToBool(); known && !ok {
			return errno.NewConstraint(errno.ErrCheckConstraintViolated, ck.Name)
		}
	}
	return nil
}

// isCheckViolation reports whether err is 3819, which IGNORE turns into a
// warning that skips the row.
func isCheckViolation(err error) bool {
	se, ok := err.(*errno.SQLError)
	return ok && se.Code == errno.ErrCheckConstraintViolated
}

// refreshAfterTouch recomputes and rechecks an updated row whose ON
// UPDATE CURRENT_TIMESTAMP columns touchOnUpdate just moved, which its
// generated columns and checks may read.
func refreshAfterTouch(ctx *Context, te *planner.TableExprs, t *catalog.TableInfo, row types.Row, rowNum int) error {
	if te == nil {
		return nil
	}
	for _, c := range t.Columns {
		if c.OnUpdate {
			return finishRow(ctx, te, t, row, rowNum)
		}
	}
	return nil
}

// finishRow computes a written row's generated columns, then checks it.
func finishRow(ctx *Context, te *planner.TableExprs, t *catalog.TableInfo, row types.Row, rowNum int) error {
	if err := computeGenerated(ctx, te, t, row, rowNum); err != nil {
		return err
	}
	return checkRow(ctx, te, row)
}

// tableConstraintRows are t's rows of information_schema.TABLE_CONSTRAINTS:
// its primary key, unique keys and CHECK constraints.
func tableConstraintRows(db string, t *catalog.TableInfo) []types.Row {
	str := func(s string) types.Datum { return types.NewString(s) }
	var rows []types.Row
	for _, idx := range t.PublicIndices() {
		switch {
		case idx.Primary:
			rows = append(rows, types.Row{str("def"), str(db), str("PRIMARY"), str(db), str(t.Name), str("PRIMARY KEY"), str("YES")})
		case idx.Unique:
			rows = append(rows, types.Row{str("def"), str(db), str(idx.Name), str(db), str(t.Name), str("UNIQUE"), str("YES")})
		}
	}
	for _, ck := range t.Checks {
		enforced := "YES"
		if ck.NotEnforced {
			enforced = "NO"
		}
		rows = append(rows, types.Row{str("def"), str(db), str(ck.Name), str(db), str(t.Name), str("CHECK"), str(enforced)})
	}
	return rows
}

package planner

import (
	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/sql/catalog"
	"github.com/shoaldb/shoal/sql/expression"
)

// TableExprs are what writers of a table evaluate besides the statement's
// own values: generated columns, expression defaults and enforced CHECK
// constraints, each compiled over the table's full row (column i at
// offset i, as the writers hold it).
type TableExprs struct {
	// Generated lists the generated columns in table order (a generated
	// column reads only generated columns defined before it).
	Generated []ColumnExpr
	// Defaults holds the expression default of each column that has one.
	Defaults map[int]expression.Expr
	Checks   []CheckExpr
}

// ColumnExpr is the expression computing one column.
type ColumnExpr struct {
	Offset int
	Col    *catalog.ColumnInfo
	Expr   expression.Expr
}

// CheckExpr is an enforced CHECK constraint.
type CheckExpr struct {
	Name string
	Expr expression.Expr
}

// tableExprs compiles t's expressions; nil when it has none.
func tableExprs(t *catalog.TableInfo) (*TableExprs, error) {
	var te *TableExprs
	get := func() *TableExprs {
		if te == nil {
			te = &TableExprs{}
		}
		return te
	}
	for _, c := range t.Columns {
		switch {
		case c.IsGenerated():
			e, err := CompileRowExprText(t, c.GeneratedExpr)
			if err != nil {
				return nil, err
			}
			get().Generated = append(get().Generated, ColumnExpr{Offset: c.Offset, Col: c, Expr: e})
		case c.DefaultIsExpr && c.Default != nil:
			e, err := CompileRowExprText(t, *c.Default)
			if err != nil {
				return nil, err
			}
			if get().Defaults == nil {
				te.Defaults = map[int]expression.Expr{}
			}
			te.Defaults[c.Offset] = e
		}
	}
	for _, ck := range t.Checks {
		if ck.NotEnforced {
			continue
		}
		e, err := CompileRowExprText(t, ck.Expr)
		if err != nil {
			return nil, err
		}
		get().Checks = append(get().Checks, CheckExpr{Name: ck.Name, Expr: e})
	}
	return te, nil
}

// ParseExprText parses the text of a stored expression.
func ParseExprText(text string) (ast.ExprNode, error) {
	stmts, _, err := parser.New().ParseSQL("SELECT " + text)
	if err != nil {
		return nil, err
	}
	sel, ok := stmts[0].(*ast.SelectStmt)
	if len(stmts) != 1 || !ok || sel.Fields == nil || len(sel.Fields.Fields) != 1 || sel.From != nil {
		return nil, errno.New(mysql.ErrUnknown, "stored expression %q is not one expression", text)
	}
	return sel.Fields.Fields[0].Expr, nil
}

// CompileRowExprText compiles a stored expression over t's full row.
func CompileRowExprText(t *catalog.TableInfo, text string) (expression.Expr, error) {
	n, err := ParseExprText(text)
	if err != nil {
		return nil, err
	}
	return CompileRowExpr(t, n, "field list")
}

// CompileRowExpr compiles an expression over t's full row: its columns are
// the public columns of t by name. The caller has refused what needs a
// statement around it (subqueries, parameters); clause names the place
// for an unknown column's error.
func CompileRowExpr(t *catalog.TableInfo, n ast.ExprNode, clause string) (expression.Expr, error) {
	b := &builder{ctx: &Context{}, stmt: &Statement{}, paramIndex: map[*driver.ParamMarkerExpr]int{}, used: map[*OutputColumn]bool{}, clause: clause}
	ts := newTableScan("", t, "")
	return b.expr(&scope{cols: ts.cols}, n)
}

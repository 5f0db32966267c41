package planner

import (
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/sql/catalog"
	"github.com/shoaldb/shoal/sql/expression"
)

func (b *builder) singleTable(refs *ast.TableRefsClause) (*ast.TableName, string, error) {
	if refs == nil || refs.TableRefs == nil || refs.TableRefs.Right != nil {
		return nil, "", errNotSupported("multi-table DML")
	}
	ts, ok := refs.TableRefs.Left.(*ast.TableSource)
	if !ok {
		return nil, "", errNotSupported("multi-table DML")
	}
	tn, ok := ts.Source.(*ast.TableName)
	if !ok {
		return nil, "", errNotSupported("DML on a derived table")
	}
	return tn, ts.AsName.O, nil
}

func (b *builder) dmlTable(tn *ast.TableName) (string, *catalog.TableInfo, error) {
	db, t, err := b.resolveTable(tn)
	if err != nil {
		return "", nil, err
	}
	if t.View != "" {
		return "", nil, errno.New(mysql.ErrNonUpdatableTable, "The target table %s of the DML is not updatable", t.Name)
	}
	if IsMemTable(t) && db == "mysql" {
		return "", nil, errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support changing mysql.%s directly; use CREATE USER, GRANT, REVOKE, ALTER USER", t.Name)
	}
	if IsMemTable(t) {
		return "", nil, errno.New(mysql.ErrTableaccessDenied, "access denied to information_schema table '%s'", t.Name)
	}
	return db, t, nil
}

func (b *builder) buildInsert(x *ast.InsertStmt) (Plan, error) {
	tn, _, err := b.singleTable(x.Table)
	if err != nil {
		return nil, err
	}
	db, t, err := b.dmlTable(tn)
	if err != nil {
		return nil, err
	}
	ins := &Insert{Table: t, DBName: db, Replace: x.IsReplace, Ignore: x.IgnoreErr}
	if ins.Exprs, err = tableExprs(t); err != nil {
		return nil, err
	}
	b.clause = "field list"
	seen := map[int]bool{}
	addCol := func(name *ast.ColumnName) error {
		c := t.FindColumn(name.Name.O)
		if c == nil {
			return errUnknownColumn(name.Name.O, "field list")
		}
		if seen[c.Offset] {
			return errno.NewStd(mysql.ErrFieldSpecifiedTwice, c.Name)
		}
		seen[c.Offset] = true
		ins.Targets = append(ins.Targets, c.Offset)
		return nil
	}
	empty := &scope{}
	{
		if len(x.Columns) > 0 {
			for _, c := range x.Columns {
				if err := addCol(c); err != nil {
					return nil, err
				}
			}
		} else {
			for _, c := range t.Columns {
				if c.Public() {
					ins.Targets = append(ins.Targets, c.Offset)
				}
			}
		}
		for i, list := range x.Lists {
			if len(list) != len(ins.Targets) && !(len(list) == 0 && len(x.Columns) == 0) {
				return nil, errWrongValueCount(i + 1)
			}
			row := make([]expression.Expr, len(list))
			for j, v := range list {
				e, err := b.valueExpr(empty, v)
				if err != nil {
					return nil, err
				}
				if c := t.Columns[ins.Targets[j]]; e != nil && c.IsGenerated() {
					return nil, errGeneratedValue(c, t)
				}
				row[j] = e
			}
			if len(list) == 0 {
				row = make([]expression.Expr, len(ins.Targets))
			}
			ins.Rows = append(ins.Rows, row)
		}
		if x.Select != nil {
			p, err := b.buildResultSet(&scope{}, x.Select.(ast.ResultSetNode))
			if err != nil {
				return nil, err
			}
			if visibleCount(p.Columns()) != len(ins.Targets) {
				return nil, errWrongValueCount(1)
			}
			for _, off := range ins.Targets {
				if c := t.Columns[off]; c.IsGenerated() {
					return nil, errGeneratedValue(c, t)
				}
			}
			ins.Select = p
		}
	}
	if len(x.OnDuplicate) > 0 {
		ts := newTableScan(db, t, "")
		n := len(t.Columns)
		cols := append(append([]*OutputColumn{}, ts.cols[:n]...), ts.cols[:n]...)
		s := &scope{cols: cols[:n], insertValues: n}
		_ = cols
		for _, a := range x.OnDuplicate {
			c := t.FindColumn(a.Column.Name.O)
			if c == nil {
				return nil, errUnknownColumn(a.Column.Name.O, "field list")
			}
			var e expression.Expr
			if d, ok := a.Expr.(*ast.DefaultExpr); ok && d.Name == nil {
				// SET c = DEFAULT: nil, as in UPDATE.
			} else if c.IsGenerated() {
				return nil, errGeneratedValue(c, t)
			} else if e, err = b.expr(s, a.Expr); err != nil {
				return nil, err
			}
			ins.OnDup = append(ins.OnDup, Assignment{Offset: c.Offset, Expr: e})
		}
	}
	return ins, nil
}

// valueExpr builds a VALUES item; DEFAULT becomes nil.
func (b *builder) valueExpr(s *scope, n ast.ExprNode) (expression.Expr, error) {
	if d, ok := n.(*ast.DefaultExpr); ok && d.Name == nil {
		return nil, nil
	}
	return b.expr(s, n)
}

// buildSource builds the row source of UPDATE/DELETE: a locked scan of the
// table with WHERE, ORDER BY and LIMIT.
func (b *builder) buildSource(tn *ast.TableName, alias string, where ast.ExprNode, order *ast.OrderByClause, limit *ast.Limit) (*catalog.TableInfo, Plan, error) {
	db, t, err := b.dmlTable(tn)
	if err != nil {
		return nil, nil, err
	}
	ts := newTableScan(db, t, alias)
	ts.Lock = true
	for _, c := range ts.cols {
		b.used[c] = true
	}
	l := &leaf{scan: ts, width: len(ts.cols), pushable: true}
	b.leaves = append(b.leaves, l)
	s := &scope{cols: ts.cols}
	var p Plan = ts
	if where != nil {
		b.clause = "where clause"
		cond, err := b.expr(s, where)
		if err != nil {
			return nil, nil, err
		}
		for _, c := range conjuncts(cond, nil) {
			if !b.pushToLeaf(c, []*leaf{l}) {
				p = &Selection{baseSchema: baseSchema{cols: ts.cols}, Child: p, Cond: c}
			}
		}
	}
	if order != nil {
		b.clause = "order clause"
		var by []ByItem
		for _, item := range order.Items {
			e, err := b.expr(s, item.Expr)
			if err != nil {
				return nil, nil, err
			}
			by = append(by, ByItem{Expr: e, Desc: item.Desc})
		}
		p = &Sort{baseSchema: baseSchema{cols: ts.cols}, Child: p, By: by}
	}
	if limit != nil {
		if p, err = b.buildLimit(p, limit); err != nil {
			return nil, nil, err
		}
	}
	return t, p, nil
}

func (b *builder) buildUpdate(x *ast.UpdateStmt) (Plan, error) {
	tn, alias, err := b.singleTable(x.TableRefs)
	if err != nil {
		return nil, err
	}
	t, src, err := b.buildSource(tn, alias, x.Where, x.Order, x.Limit)
	if err != nil {
		return nil, err
	}
	up := &Update{Table: t, Source: src, Ignore: x.IgnoreErr}
	if up.Exprs, err = tableExprs(t); err != nil {
		return nil, err
	}
	s := &scope{cols: src.Columns()}
	b.clause = "field list"
	for _, a := range x.List {
		c := t.FindColumn(a.Column.Name.O)
		if c == nil {
			return nil, errUnknownColumn(a.Column.Name.O, "field list")
		}
		var e expression.Expr
		if d, ok := a.Expr.(*ast.DefaultExpr); ok && d.Name == nil {
			e = nil
		} else if c.IsGenerated() {
			return nil, errGeneratedValue(c, t)
		} else if e, err = b.expr(s, a.Expr); err != nil {
			return nil, err
		}
		up.Assignments = append(up.Assignments, Assignment{Offset: c.Offset, Expr: e})
	}
	return up, nil
}

func (b *builder) buildDelete(x *ast.DeleteStmt) (Plan, error) {
	if x.IsMultiTable {
		return nil, errNotSupported("multi-table DELETE")
	}
	tn, alias, err := b.singleTable(x.TableRefs)
	if err != nil {
		return nil, err
	}
	t, src, err := b.buildSource(tn, alias, x.Where, x.Order, x.Limit)
	if err != nil {
		return nil, err
	}
	return &Delete{Table: t, Source: src}, nil
}

// errGeneratedValue is MySQL's 3105: only DEFAULT may be written into a
// generated column.
func errGeneratedValue(c *catalog.ColumnInfo, t *catalog.TableInfo) error {
	return errno.NewStd(mysql.ErrBadGeneratedColumn, c.Name, t.Name)
}

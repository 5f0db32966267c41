package planner

import (
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/shoaldb/shoal/sql/expression"
)

// decorrelateScalarAgg rewrites a correlated scalar aggregate subquery
//
//	(SELECT agg(...) FROM ... WHERE inner1 = outer1 AND ... AND <uncorrelated>)
//
// into one uncorrelated query grouped by the inner sides,
//
//	SELECT inner1, ..., agg(...) FROM ... WHERE <uncorrelated> GROUP BY inner1, ...
//
// run once per statement and probed by the outer sides for each outer row;
// an outer row without a group gets the aggregate over no rows. This turns
// N executions of the subquery into one pass (the TPC-C consistency checks
// need it: one of them sums a history table that has no useful index per
// customer). It returns nil when the subquery does not have that shape.
func (b *builder) decorrelateScalarAgg(s *scope, q ast.ResultSetNode) (expression.Expr, error) {
	sel, ok := q.(*ast.SelectStmt)
	if !ok || sel.Where == nil || sel.GroupBy != nil || sel.Having != nil || sel.Limit != nil ||
		sel.Distinct || sel.With != nil || sel.LockInfo != nil && sel.LockInfo.LockType != ast.SelectLockNone ||
		sel.Fields == nil || len(sel.Fields.Fields) != 1 || sel.Fields.Fields[0].Expr == nil ||
		!selectExprHasAgg(sel.Fields.Fields[0].Expr) || sel.From == nil {
		return nil, nil
	}
	// The FROM scope of the subquery, to tell inner from outer names.
	saved := len(b.leaves)
	from, _, err := b.buildFrom(&scope{parent: s}, sel.From.TableRefs, 0, false)
	b.leaves = b.leaves[:saved] // a trial: the real plan is built below
	if err != nil {
		return nil, nil
	}
	inner := &scope{cols: from.Columns(), parent: s}
	var keepWhere []ast.ExprNode
	var innerKeys, outerKeys []ast.ExprNode
	for _, c := range splitAnd(sel.Where, nil) {
		e, err := b.expr(inner, c)
		if err != nil {
			return nil, nil
		}
		if !hasOuterRef(e) {
			keepWhere = append(keepWhere, c)
			continue
		}
		eq, ok := c.(*ast.BinaryOperationExpr)
		if !ok || eq.Op != opcode.EQ {
			return nil, nil
		}
		l, errL := b.expr(inner, eq.L)
		r, errR := b.expr(inner, eq.R)
		if errL != nil || errR != nil {
			return nil, nil
		}
		switch {
		case !hasOuterRef(l) && onlyOuterRefs(r) && len(expression.Columns(l, nil)) > 0:
			innerKeys, outerKeys = append(innerKeys, eq.L), append(outerKeys, eq.R)
		case !hasOuterRef(r) && onlyOuterRefs(l) && len(expression.Columns(r, nil)) > 0:
			innerKeys, outerKeys = append(innerKeys, eq.R), append(outerKeys, eq.L)
		default:
			return nil, nil
		}
		if !sameClass(l.Type(), r.Type()) {
			return nil, nil
		}
	}
	if len(innerKeys) == 0 {
		return nil, nil
	}
	// The grouped query.
	grouped := &ast.SelectStmt{SelectStmtOpts: sel.SelectStmtOpts, Kind: sel.Kind, From: sel.From, Where: joinAnd(keepWhere),
		Fields: &ast.FieldList{}, GroupBy: &ast.GroupByClause{}}
	for _, k := range innerKeys {
		grouped.Fields.Fields = append(grouped.Fields.Fields, &ast.SelectField{Expr: k})
		grouped.GroupBy.Items = append(grouped.GroupBy.Items, &ast.ByItem{Expr: k})
	}
	grouped.Fields.Fields = append(grouped.Fields.Fields, &ast.SelectField{Expr: sel.Fields.Fields[0].Expr})
	child := &scope{parent: s}
	gp, err := b.buildResultSet(child, grouped)
	if err != nil || child.correlated {
		return nil, nil
	}
	// The value for an outer row with no group: the aggregate over no rows.
	empty := &ast.SelectStmt{SelectStmtOpts: sel.SelectStmtOpts, Kind: sel.Kind, From: sel.From,
		Where: ast.NewValueExpr(int64(0), "", ""), Fields: sel.Fields}
	echild := &scope{parent: s}
	ep, err := b.buildResultSet(echild, empty)
	if err != nil || echild.correlated {
		return nil, nil
	}
	keys := make([]expression.Expr, len(outerKeys))
	for i, k := range outerKeys {
		if keys[i], err = b.expr(s, k); err != nil {
			return nil, nil
		}
	}
	id := len(b.stmt.Subqueries)
	b.stmt.Subqueries = append(b.stmt.Subqueries, &SubqueryPlan{Plan: gp, Keyed: len(keys)})
	defID := len(b.stmt.Subqueries)
	b.stmt.Subqueries = append(b.stmt.Subqueries, &SubqueryPlan{Plan: ep})
	ft := gp.Columns()[len(keys)].Ft
	return &expression.Subquery{ID: id, Mode: expression.SubqueryKeyed, Keys: keys, DefaultID: defID, Ft: ft}, nil
}

func splitAnd(e ast.ExprNode, out []ast.ExprNode) []ast.ExprNode {
	switch x := e.(type) {
	case *ast.BinaryOperationExpr:
		if x.Op == opcode.LogicAnd {
			return splitAnd(x.R, splitAnd(x.L, out))
		}
	case *ast.ParenthesesExpr:
		return splitAnd(x.Expr, out)
	}
	return append(out, e)
}

func joinAnd(es []ast.ExprNode) ast.ExprNode {
	if len(es) == 0 {
		return nil
	}
	e := es[0]
	for _, x := range es[1:] {
		e = &ast.BinaryOperationExpr{Op: opcode.LogicAnd, L: e, R: x}
	}
	return e
}

// hasOuterRef reports whether e reads an enclosing query's row.
func hasOuterRef(e expression.Expr) bool {
	switch x := e.(type) {
	case *expression.OuterColumn:
		return true
	case *expression.ScalarFunc:
		for _, a := range x.Args {
			if hasOuterRef(a) {
				return true
			}
		}
	case *expression.Subquery:
		return x.Correlated
	}
	return false
}

// onlyOuterRefs reports whether e reads the immediately enclosing row and no
// column of its own query.
func onlyOuterRefs(e expression.Expr) bool {
	switch x := e.(type) {
	case *expression.OuterColumn:
		return x.Depth == 1
	case *expression.Constant, *expression.Param:
		return true
	case *expression.ScalarFunc:
		for _, a := range x.Args {
			if !onlyOuterRefs(a) {
				return false
			}
		}
		return true
	}
	return false
}

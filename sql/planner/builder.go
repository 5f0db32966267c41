package planner

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/sql/catalog"
	"github.com/shoaldb/shoal/sql/expression"
	"github.com/shoaldb/shoal/types"
)

// Context is what planning needs from the session.
type Context struct {
	Schema    *catalog.InfoSchema
	CurrentDB string
	// OnlyFullGroupBy: sql_mode ONLY_FULL_GROUP_BY is on.
	OnlyFullGroupBy bool
	// NoUnsignedSubtraction: sql_mode NO_UNSIGNED_SUBTRACTION is on (an
	// integer subtraction is signed whatever its operands).
	NoUnsignedSubtraction bool
	// NoBackslashEscapes: sql_mode NO_BACKSLASH_ESCAPES is on (LIKE has no
	// default escape character).
	NoBackslashEscapes bool
	// ReadTS is the snapshot the statement reads, when it was fixed before
	// the schema was (a transaction's start): indexes not complete at it
	// are not used (see catalog.IndexInfo.CompleteTS). 0: the statement
	// reads at a timestamp taken after planning.
	ReadTS uint64
}

type builder struct {
	ctx        *Context
	stmt       *Statement
	paramIndex map[*driver.ParamMarkerExpr]int
	clause     string
	// leaves are every table scan of the statement; their access paths are
	// chosen once all conditions have been pushed and all column references
	// seen (used).
	leaves    []*leaf
	used      map[*OutputColumn]bool
	viewDepth int
	slots     int
	exprNum   int // 1-based position of the select/order item being built
}

// Build plans a DML or query statement.
func Build(ctx *Context, node ast.StmtNode) (*Statement, error) {
	b := &builder{ctx: ctx, stmt: &Statement{SchemaVersion: ctx.Schema.Version()}, paramIndex: map[*driver.ParamMarkerExpr]int{}, used: map[*OutputColumn]bool{}}
	b.collectParams(node)
	var err error
	switch x := node.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt:
		b.stmt.ReadOnly = true
		b.stmt.Root, err = b.buildResultSet(&scope{}, x.(ast.ResultSetNode))
	case *ast.InsertStmt:
		b.stmt.Root, err = b.buildInsert(x)
	case *ast.UpdateStmt:
		b.stmt.Root, err = b.buildUpdate(x)
	case *ast.DeleteStmt:
		b.stmt.Root, err = b.buildDelete(x)
	case *ast.ExplainStmt:
		inner, err2 := Build(ctx, x.Stmt)
		if err2 != nil {
			return nil, err2
		}
		b.stmt = inner
		b.stmt.Root = &Explain{Target: inner.Root, baseSchema: baseSchema{cols: explainColumns()}}
		b.stmt.ReadOnly = true
		return b.stmt, nil
	default:
		return nil, errNotSupported(strings.TrimPrefix(fmtType(node), "*ast."))
	}
	if err != nil {
		return nil, err
	}
	b.planIndexJoins(b.stmt.Root)
	for _, sq := range b.stmt.Subqueries {
		b.planIndexJoins(sq.Plan)
	}
	for _, l := range b.leaves {
		b.chooseAccess(l.scan)
	}
	b.stmt.Root = eliminateSorts(b.stmt.Root)
	for _, sq := range b.stmt.Subqueries {
		sq.Plan = eliminateSorts(sq.Plan)
	}
	b.stmt.NumParams = len(b.paramIndex)
	b.stmt.NumSlots = b.slots
	return b.stmt, nil
}

func explainColumns() []*OutputColumn {
	str := types.FieldType{Tp: mysql.TypeVarString, Flen: 256, Charset: "utf8mb4", Collate: "utf8mb4_bin"}
	var out []*OutputColumn
	for _, n := range []string{"id", "estRows", "task", "access object", "operator info"} {
		out = append(out, &OutputColumn{Name: n, OrgName: n, Ft: str})
	}
	return out
}

type paramCollector struct{ params []*driver.ParamMarkerExpr }

func (c *paramCollector) Enter(n ast.Node) (ast.Node, bool) {
	if p, ok := n.(*driver.ParamMarkerExpr); ok {
		c.params = append(c.params, p)
	}
	return n, false
}
func (c *paramCollector) Leave(n ast.Node) (ast.Node, bool) { return n, true }

func (b *builder) collectParams(node ast.Node) {
	c := &paramCollector{}
	node.Accept(c)
	sort.SliceStable(c.params, func(i, j int) bool { return c.params[i].Offset < c.params[j].Offset })
	for i, p := range c.params {
		b.paramIndex[p] = i
	}
}

// CountParams returns the number of ? markers in a statement.
func CountParams(node ast.Node) int {
	c := &paramCollector{}
	node.Accept(c)
	return len(c.params)
}

func (b *builder) buildResultSet(s *scope, n ast.ResultSetNode) (Plan, error) {
	switch x := n.(type) {
	case *ast.SelectStmt:
		return b.buildSelect(s, x)
	case *ast.SetOprStmt:
		return b.buildSetOpr(s, x)
	case *ast.SubqueryExpr:
		return b.buildResultSet(s, x.Query)
	}
	return nil, errNotSupported(strings.TrimPrefix(fmtType(n), "*ast."))
}

func (b *builder) buildSetOpr(s *scope, x *ast.SetOprStmt) (Plan, error) {
	if x.With != nil {
		return nil, errNotSupported("WITH")
	}
	p, err := b.buildSetOprList(s, x.SelectList)
	if err != nil {
		return nil, err
	}
	return b.setOprTail(s, p, x.OrderBy, x.Limit)
}

// buildSetOprList plans a list of selects joined by UNION / EXCEPT /
// INTERSECT [ALL].
func (b *builder) buildSetOprList(s *scope, list *ast.SetOprSelectList) (Plan, error) {
	var children []Plan
	var ops []SetOp
	for i, sel := range list.Selects {
		var p Plan
		var err error
		var after *ast.SetOprType
		switch x := sel.(type) {
		case *ast.SelectStmt:
			after = x.AfterSetOperator
			p, err = b.buildResultSet(&scope{parent: s.parent}, x)
		case *ast.SetOprSelectList:
			after = x.AfterSetOperator
			p, err = b.buildSetOprList(s, x)
			if err == nil {
				p, err = b.setOprTail(s, p, x.OrderBy, x.Limit)
			}
		default:
			return nil, errNotSupported(fmtType(sel))
		}
		if err != nil {
			return nil, err
		}
		if len(children) > 0 && visibleCount(p.Columns()) != visibleCount(children[0].Columns()) {
			return nil, errno.NewStd(mysql.ErrWrongNumberOfColumnsInSelect)
		}
		if i > 0 {
			op := SetOp{Kind: SetUnion}
			if after != nil {
				switch *after {
				case ast.UnionAll:
					op.All = true
				case ast.Except:
					op.Kind = SetExcept
				case ast.ExceptAll:
					op.Kind, op.All = SetExcept, true
				case ast.Intersect:
					op.Kind = SetIntersect
				case ast.IntersectAll:
					op.Kind, op.All = SetIntersect, true
				}
			}
			ops = append(ops, op)
		}
		children = append(children, p)
	}
	if len(children) == 1 {
		return children[0], nil
	}
	cols := make([]*OutputColumn, 0)
	for i, c := range children[0].Columns() {
		if c.Hidden {
			continue
		}
		nc := *c
		exprs := make([]expression.Expr, 0, len(children))
		for _, ch := range children {
			exprs = append(exprs, &expression.Column{Index: i, Ft: ch.Columns()[i].Ft})
		}
		fn, _ := expression.NewFunction("coalesce", exprs...)
		nc.Ft = *fn.Type()
		nc.Table, nc.OrgTable, nc.DB, nc.Stored = "", "", "", false
		cols = append(cols, &nc)
	}
	return &Union{baseSchema: baseSchema{cols: cols}, Children: children, Ops: ops}, nil
}

func (b *builder) setOprTail(s *scope, p Plan, order *ast.OrderByClause, limit *ast.Limit) (Plan, error) {
	cols := p.Columns()
	us := &scope{cols: cols, parent: s.parent}
	if order != nil {
		by := make([]ByItem, 0, len(order.Items))
		for _, item := range order.Items {
			e, err := b.orderItem(us, item.Expr, cols, nil)
			if err != nil {
				return nil, err
			}
			if r, ok := e.(*projRef); ok {
				e = &expression.Column{Index: r.idx, Ft: cols[r.idx].Ft}
			}
			by = append(by, ByItem{Expr: e, Desc: item.Desc})
		}
		p = &Sort{baseSchema: baseSchema{cols: cols}, Child: p, By: by}
	}
	if limit != nil {
		return b.buildLimit(p, limit)
	}
	return p, nil
}

// conjuncts splits an AND tree.
func conjuncts(e expression.Expr, out []expression.Expr) []expression.Expr {
	if f, ok := e.(*expression.ScalarFunc); ok && f.Name == "and" {
		for _, a := range f.Args {
			out = conjuncts(a, out)
		}
		return out
	}
	return append(out, e)
}

func andAll(conds []expression.Expr) expression.Expr {
	switch len(conds) {
	case 0:
		return nil
	case 1:
		return conds[0]
	}
	f, _ := expression.NewFunction("and", conds...)
	return f
}

// leaf is a table scan in a FROM clause with its column offset in the
// joined row, and whether WHERE conditions may be pushed into it.
type leaf struct {
	scan     *TableScan
	offset   int
	width    int
	pushable bool
}

func (b *builder) buildSelect(s *scope, sel *ast.SelectStmt) (Plan, error) {
	if sel.With != nil {
		return nil, errNotSupported("WITH")
	}
	if sel.Kind == ast.SelectStmtKindValues || sel.Kind == ast.SelectStmtKindTable {
		return nil, errNotSupported("VALUES/TABLE statement")
	}
	var p Plan
	var leaves []*leaf
	if sel.From != nil && sel.From.TableRefs != nil {
		b.clause = "from clause"
		var err error
		p, leaves, err = b.buildFrom(s, sel.From.TableRefs, 0, true)
		if err != nil {
			return nil, err
		}
	} else {
		p = &Dual{}
	}
	in := &scope{cols: p.Columns(), parent: s.parent}
	defer func() {
		if in.correlated {
			s.correlated = true
		}
	}()
	lock := sel.LockInfo != nil && sel.LockInfo.LockType != ast.SelectLockNone
	if lock {
		wait := LockWaitDefault
		switch sel.LockInfo.LockType {
		case ast.SelectLockForUpdateSkipLocked, ast.SelectLockForShareSkipLocked:
			return nil, errNotSupported("SKIP LOCKED")
		case ast.SelectLockForUpdateNoWait, ast.SelectLockForShareNoWait:
			wait = LockNoWait
		case ast.SelectLockForUpdateWaitN:
			wait = LockWaitSeconds(sel.LockInfo.WaitSec)
		}
		// FOR SHARE takes the same (exclusive) lock as FOR UPDATE: stricter
		// than InnoDB's shared lock, never weaker.
		b.stmt.ForUpdate = true
		b.stmt.ReadOnly = false
		b.stmt.LockWait = wait
		for _, l := range leaves {
			l.scan.Lock, l.scan.LockEach = true, true
		}
	}
	// WHERE: push what each leaf can take, keep the rest above.
	if sel.Where != nil {
		b.clause = "where clause"
		cond, err := b.expr(in, sel.Where)
		if err != nil {
			return nil, err
		}
		var rest []expression.Expr
		for _, c := range propagateConstants(conjuncts(cond, nil)) {
			if k, ok := c.(*expression.Constant); ok {
				if v, known := k.Value.ToBool(); !v || !known {
					// Nothing can qualify: read nothing.
					p = &Dual{baseSchema: baseSchema{cols: p.Columns()}, Empty: true}
					leaves = nil
					rest = nil
					break
				}
				continue
			}
			if !b.pushToLeaf(c, leaves) {
				rest = append(rest, c)
			}
		}
		rest = pushIntoJoin(p, rest)
		if len(rest) > 0 {
			p = &Selection{baseSchema: baseSchema{cols: p.Columns()}, Child: p, Cond: andAll(rest)}
		}
	}
	// Aggregation.
	hasAgg := sel.GroupBy != nil || selectHasAgg(sel)
	out := in
	var ac *aggContext
	if hasAgg {
		ac = &aggContext{input: in}
		if sel.GroupBy != nil {
			b.clause = "group statement"
			for _, item := range sel.GroupBy.Items {
				e, src, err := b.groupByItem(in, item.Expr, sel.Fields.Fields)
				if err != nil {
					return nil, err
				}
				ac.groupBy = append(ac.groupBy, e)
				ac.gbText = append(ac.gbText, restore(src))
			}
		}
		out = &scope{parent: s.parent, agg: ac}
	}
	// Fields.
	b.clause = "field list"
	var exprs []expression.Expr
	var cols []*OutputColumn
	for fi, f := range sel.Fields.Fields {
		b.exprNum = fi + 1
		if f.WildCard != nil {
			n := 0
			for i, c := range in.cols {
				if c.Hidden || c.UsingDup {
					continue
				}
				if f.WildCard.Table.L != "" && !strings.EqualFold(c.Table, f.WildCard.Table.O) {
					continue
				}
				if f.WildCard.Schema.L != "" && !strings.EqualFold(c.DB, f.WildCard.Schema.O) {
					continue
				}
				b.used[c] = true
				var e expression.Expr = &expression.Column{Index: i, Ft: c.Ft, Name: c.Name}
				if ac != nil {
					var err error
					e, err = b.expr(out, &ast.ColumnNameExpr{Name: &ast.ColumnName{Table: ast.NewCIStr(c.Table), Name: ast.NewCIStr(c.Name)}})
					if err != nil {
						return nil, err
					}
				}
				exprs = append(exprs, e)
				nc := *c
				cols = append(cols, &nc)
				n++
			}
			if n == 0 && f.WildCard.Table.L != "" {
				return nil, errno.NewStd(mysql.ErrBadTable, f.WildCard.Table.O)
			}
			if n == 0 && len(in.cols) == 0 {
				return nil, errno.NewStd(mysql.ErrNoTablesUsed)
			}
			continue
		}
		if utf8.RuneCountInString(f.AsName.O) > maxAliasChars {
			return nil, errno.NewStd(mysql.ErrTooLongIdent, f.AsName.O)
		}
		e, err := b.expr(out, f.Expr)
		if err != nil {
			return nil, err
		}
		exprs = append(exprs, e)
		cols = append(cols, b.fieldColumn(f, e, in))
	}
	visible := len(cols)
	var aggPlan *Aggregation
	if ac != nil {
		aggPlan = &Aggregation{Child: p}
		p = aggPlan
	}
	// HAVING.
	var having expression.Expr
	if sel.Having != nil {
		b.clause = "having clause"
		hs := out
		if ac == nil {
			// HAVING without aggregation may name select aliases.
			hs = in
		}
		e, err := b.havingExpr(hs, sel.Having.Expr, sel.Fields.Fields, exprs)
		if err != nil {
			return nil, err
		}
		having = e
	}
	// ORDER BY: positions and aliases name fields; other expressions become
	// hidden trailing columns of the projection.
	var by []ByItem
	if sel.OrderBy != nil {
		b.clause = "order clause"
		for oi, item := range sel.OrderBy.Items {
			b.exprNum = oi + 1
			e, err := b.orderItem(out, item.Expr, cols[:visible], sel.Fields.Fields)
			if err != nil {
				return nil, err
			}
			if c, ok := e.(*projRef); ok {
				by = append(by, ByItem{Expr: &expression.Column{Index: c.idx, Ft: cols[c.idx].Ft}, Desc: item.Desc})
				continue
			}
			idx := len(exprs)
			exprs = append(exprs, e)
			cols = append(cols, &OutputColumn{Name: "", Ft: *e.Type(), Hidden: true})
			by = append(by, ByItem{Expr: &expression.Column{Index: idx, Ft: *e.Type()}, Desc: item.Desc})
		}
	}
	if aggPlan != nil {
		aggPlan.GroupBy = ac.groupBy
		aggPlan.Aggs = ac.aggs
		var acols []*OutputColumn
		for _, g := range ac.groupBy {
			acols = append(acols, &OutputColumn{Ft: *g.Type()})
		}
		for _, a := range ac.aggs {
			acols = append(acols, &OutputColumn{Ft: a.Ft})
		}
		aggPlan.cols = acols
	}
	if having != nil {
		p = &Selection{baseSchema: baseSchema{cols: p.Columns()}, Child: p, Cond: having}
	}
	p = &Projection{baseSchema: baseSchema{cols: cols}, Child: p, Exprs: exprs}
	if sel.Distinct {
		gb := make([]expression.Expr, 0, visible)
		for i := 0; i < visible; i++ {
			gb = append(gb, &expression.Column{Index: i, Ft: cols[i].Ft})
		}
		var aggs []*AggDesc
		for i := visible; i < len(cols); i++ {
			aggs = append(aggs, &AggDesc{Name: "firstrow", Args: []expression.Expr{&expression.Column{Index: i, Ft: cols[i].Ft}}, Ft: cols[i].Ft})
		}
		p = &Aggregation{baseSchema: baseSchema{cols: cols}, Child: p, GroupBy: gb, Aggs: aggs}
	}
	if len(by) > 0 {
		if sel.Limit != nil {
			off, cnt, err := b.limitExprs(sel.Limit)
			if err != nil {
				return nil, err
			}
			p = &TopN{baseSchema: baseSchema{cols: cols}, Child: p, By: by, Offset: off, Count: cnt}
		} else {
			p = &Sort{baseSchema: baseSchema{cols: cols}, Child: p, By: by}
		}
	} else if sel.Limit != nil {
		var err error
		if p, err = b.buildLimit(p, sel.Limit); err != nil {
			return nil, err
		}
	}
	if visible < len(cols) {
		trim := make([]expression.Expr, visible)
		for i := range trim {
			trim[i] = &expression.Column{Index: i, Ft: cols[i].Ft}
		}
		p = &Projection{baseSchema: baseSchema{cols: cols[:visible]}, Child: p, Exprs: trim}
	}
	if in.correlated || out.correlated {
		s.correlated = true
	}
	return p, nil
}

// projRef is a placeholder expression naming a projection column (an ORDER
// BY position or alias).
type projRef struct {
	expression.Column
	idx int
}

func (b *builder) orderItem(s *scope, n ast.ExprNode, fields []*OutputColumn, sf []*ast.SelectField) (expression.Expr, error) {
	if pe, ok := n.(*ast.PositionExpr); ok && pe.P == nil {
		if pe.N < 1 || pe.N > len(fields) {
			return nil, errUnknownColumn(fmt.Sprint(pe.N), b.clause)
		}
		return &projRef{idx: pe.N - 1}, nil
	}
	if v, ok := n.(*driver.ValueExpr); ok {
		if v.Kind() == driver.KindInt64 || v.Kind() == driver.KindUint64 {
			pos := int(v.GetInt64())
			if pos < 1 || pos > len(fields) {
				return nil, errUnknownColumn(strings.TrimSpace(v.GetDatumString()), b.clause)
			}
			return &projRef{idx: pos - 1}, nil
		}
	}
	if cn, ok := n.(*ast.ColumnNameExpr); ok && cn.Name.Table.L == "" {
		for i, f := range sf {
			if f.AsName.L != "" && f.AsName.L == cn.Name.Name.L {
				return &projRef{idx: i}, nil
			}
		}
		// A bare name that is a select-list column also names it.
		for i, f := range sf {
			if f.AsName.L == "" {
				if fc, ok := f.Expr.(*ast.ColumnNameExpr); ok && fc.Name.Name.L == cn.Name.Name.L && fc.Name.Table.L == "" && i < len(fields) {
					return &projRef{idx: i}, nil
				}
			}
		}
	}
	return b.expr(s, n)
}

// groupByItem builds a GROUP BY item (a position and a select alias name
// the select expression) and returns the AST it stands for.
func (b *builder) groupByItem(s *scope, n ast.ExprNode, fields []*ast.SelectField) (expression.Expr, ast.ExprNode, error) {
	if pe, ok := n.(*ast.PositionExpr); ok && pe.P == nil {
		if pe.N < 1 || pe.N > len(fields) || fields[pe.N-1].Expr == nil {
			return nil, nil, errUnknownColumn(fmt.Sprint(pe.N), "group statement")
		}
		e, err := b.expr(s, fields[pe.N-1].Expr)
		return e, fields[pe.N-1].Expr, err
	}
	if v, ok := n.(*driver.ValueExpr); ok && (v.Kind() == driver.KindInt64 || v.Kind() == driver.KindUint64) {
		pos := int(v.GetInt64())
		if pos < 1 || pos > len(fields) || fields[pos-1].Expr == nil {
			return nil, nil, errUnknownColumn(v.GetDatumString(), "group statement")
		}
		e, err := b.expr(s, fields[pos-1].Expr)
		return e, fields[pos-1].Expr, err
	}
	if cn, ok := n.(*ast.ColumnNameExpr); ok && cn.Name.Table.L == "" {
		if idx, _ := s.find("", "", cn.Name.Name.L); idx < 0 {
			for _, f := range fields {
				if f.AsName.L == cn.Name.Name.L && f.Expr != nil {
					if selectExprHasAgg(f.Expr) {
						return nil, nil, errno.NewStd(mysql.ErrWrongGroupField, cn.Name.Name.O)
					}
					e, err := b.expr(s, f.Expr)
					return e, f.Expr, err
				}
			}
		}
	}
	e, err := b.expr(s, n)
	return e, n, err
}

func (b *builder) havingExpr(s *scope, n ast.ExprNode, fields []*ast.SelectField, exprs []expression.Expr) (expression.Expr, error) {
	// Aliases of the select list may be used in HAVING.
	aliases := map[string]expression.Expr{}
	for i, f := range fields {
		if f.AsName.L != "" && i < len(exprs) {
			aliases[f.AsName.L] = exprs[i]
		}
	}
	hs := *s
	hs.aliases = aliases
	e, err := b.expr(&hs, n)
	if hs.correlated {
		s.correlated = true
	}
	return e, err
}

func (b *builder) fieldColumn(f *ast.SelectField, e expression.Expr, in *scope) *OutputColumn {
	oc := &OutputColumn{Ft: *e.Type()}
	if cn, ok := f.Expr.(*ast.ColumnNameExpr); ok {
		// The source column, found by name in the FROM scope (the
		// expression's index may point into an aggregation's output).
		if idx, err := in.find(cn.Name.Schema.L, cn.Name.Table.L, cn.Name.Name.L); err == nil && idx >= 0 {
			src := in.cols[idx]
			oc.DB, oc.Table, oc.OrgTable, oc.OrgName, oc.Name = src.DB, src.Table, src.OrgTable, src.OrgName, src.Name
			if src.Stored {
				oc.Name = cn.Name.Name.O
			}
		}
	}
	if oc.Name == "" {
		oc.Name = fieldText(f)
	}
	if f.AsName.L != "" {
		oc.Name = f.AsName.O
	}
	return oc
}

// maxAliasChars bounds a column alias, as in MySQL (1059 beyond).
const maxAliasChars = 256

func fieldText(f *ast.SelectField) string {
	if v, ok := f.Expr.(*driver.ValueExpr); ok && (v.Kind() == driver.KindString || v.Kind() == driver.KindBytes) {
		return v.GetString()
	}
	if f.Text() != "" {
		return f.Text()
	}
	if cn, ok := f.Expr.(*ast.ColumnNameExpr); ok {
		return cn.Name.Name.O
	}
	if v, ok := f.Expr.(*driver.ValueExpr); ok {
		return v.GetDatumString()
	}
	return restore(f.Expr)
}

func (b *builder) limitExprs(l *ast.Limit) (off, cnt expression.Expr, err error) {
	cnt, err = b.expr(&scope{}, l.Count)
	if err != nil {
		return nil, nil, err
	}
	if l.Offset != nil {
		off, err = b.expr(&scope{}, l.Offset)
	}
	return off, cnt, err
}

func (b *builder) buildLimit(p Plan, l *ast.Limit) (Plan, error) {
	off, cnt, err := b.limitExprs(l)
	if err != nil {
		return nil, err
	}
	if ts, ok := p.(*TableScan); ok {
		ts.KeepOrder = true
	}
	return &Limit{baseSchema: baseSchema{cols: p.Columns()}, Child: p, Offset: off, Count: cnt}, nil
}

type aggFinder struct{ found bool }

func (a *aggFinder) Enter(n ast.Node) (ast.Node, bool) {
	switch n.(type) {
	case *ast.AggregateFuncExpr:
		a.found = true
		return n, true
	case *ast.SubqueryExpr:
		return n, true
	}
	return n, false
}
func (a *aggFinder) Leave(n ast.Node) (ast.Node, bool) { return n, true }

func selectExprHasAgg(e ast.Node) bool {
	f := &aggFinder{}
	e.Accept(f)
	return f.found
}

func selectHasAgg(sel *ast.SelectStmt) bool {
	for _, f := range sel.Fields.Fields {
		if f.Expr != nil && selectExprHasAgg(f.Expr) {
			return true
		}
	}
	if sel.Having != nil && selectExprHasAgg(sel.Having.Expr) {
		return true
	}
	if sel.OrderBy != nil {
		for _, item := range sel.OrderBy.Items {
			if selectExprHasAgg(item.Expr) {
				return true
			}
		}
	}
	return false
}

// BuildScalar builds an expression that reads no table (SET values, DO).
// Bare identifiers (SET x = ON) are not columns here; callers handle them.
func BuildScalar(ctx *Context, node ast.ExprNode) (expression.Expr, *Statement, error) {
	b := &builder{ctx: ctx, stmt: &Statement{SchemaVersion: ctx.Schema.Version()}, paramIndex: map[*driver.ParamMarkerExpr]int{}, used: map[*OutputColumn]bool{}}
	b.collectParams(node)
	e, err := b.expr(&scope{}, node)
	if err != nil {
		return nil, nil, err
	}
	for _, l := range b.leaves {
		b.chooseAccess(l.scan)
	}
	return e, b.stmt, nil
}

// propagateConstants adds x = c for every x = y and y = c among the
// conjuncts (columns of one comparison class), so a constant bound on one
// side of a join also bounds the other side's key: in
// "c_w_id = w_id AND w_id = ?" the customer scan gets c_w_id = ? and can
// use its primary key.
func propagateConstants(conds []expression.Expr) []expression.Expr {
	consts := map[int]expression.Expr{}
	type pair struct{ a, b *expression.Column }
	var pairs []pair
	for _, c := range conds {
		f, ok := c.(*expression.ScalarFunc)
		if !ok || f.Name != "eq" || expression.HasSubquery(c) {
			continue
		}
		l, lok := f.Args[0].(*expression.Column)
		r, rok := f.Args[1].(*expression.Column)
		switch {
		case lok && rok:
			if sameClass(&l.Ft, &r.Ft) {
				pairs = append(pairs, pair{l, r})
			}
		case lok && expression.IsConstant(f.Args[1]):
			if _, seen := consts[l.Index]; !seen {
				consts[l.Index] = f.Args[1]
			}
		case rok && expression.IsConstant(f.Args[0]):
			if _, seen := consts[r.Index]; !seen {
				consts[r.Index] = f.Args[0]
			}
		}
	}
	if len(pairs) == 0 || len(consts) == 0 {
		return conds
	}
	out := conds
	for changed := true; changed; {
		changed = false
		for _, p := range pairs {
			for _, dir := range [2][2]*expression.Column{{p.a, p.b}, {p.b, p.a}} {
				from, to := dir[0], dir[1]
				v, ok := consts[from.Index]
				if !ok {
					continue
				}
				if _, done := consts[to.Index]; done {
					continue
				}
				eq, err := expression.NewFunction("eq", to, v)
				if err != nil {
					continue
				}
				consts[to.Index] = v
				out = append(out, eq)
				changed = true
			}
		}
	}
	return out
}

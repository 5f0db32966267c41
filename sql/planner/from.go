package planner

import (
	"errors"
	"strings"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/sql/catalog"
	"github.com/shoaldb/shoal/sql/expression"
	"github.com/shoaldb/shoal/types"
)

// HandleColumnName names the hidden row id column.
const HandleColumnName = "_tidb_rowid"

func (b *builder) resolveTable(tn *ast.TableName) (string, *catalog.TableInfo, error) {
	db := tn.Schema.O
	if db == "" {
		db = b.ctx.CurrentDB
	}
	if db == "" {
		return "", nil, errNoDB()
	}
	t := b.ctx.Schema.Table(db, tn.Name.O)
	if t == nil {
		if b.ctx.Schema.DB(db) == nil && strings.EqualFold(db, "information_schema") {
			if mt := memTable(tn.Name.L); mt != nil {
				return "information_schema", mt, nil
			}
		}
		if strings.EqualFold(db, "mysql") {
			if mt := mysqlMemTable(tn.Name.L); mt != nil {
				return "mysql", mt, nil
			}
		}
		return "", nil, errNoSuchTable(db, tn.Name.O)
	}
	return b.ctx.Schema.DB(db).Name, t, nil
}

// newTableScan builds a full scan over t with its output columns.
func newTableScan(db string, t *catalog.TableInfo, alias string) *TableScan {
	ts := &TableScan{Table: t, DBName: db, Alias: alias}
	if alias == "" {
		alias = t.Name
	}
	cols := make([]*OutputColumn, 0, len(t.Columns)+1)
	// information_schema's tables are views in MySQL 8 (over its data
	// dictionary): their columns keep their upper-case names.
	stored := !strings.EqualFold(db, "information_schema")
	for _, c := range t.Columns {
		// Rows hold every column; one under an online schema change is
		// there for writers only.
		cols = append(cols, &OutputColumn{DB: db, Table: alias, OrgTable: t.Name, Name: c.Name, OrgName: c.Name, Ft: c.Type, Hidden: !c.Public(), Stored: stored})
	}
	if !t.PKIsHandle && !t.CommonHandle && !IsMemTable(t) {
		ts.ExtraHandle = true
		cols = append(cols, &OutputColumn{DB: db, Table: alias, OrgTable: t.Name, Name: HandleColumnName, OrgName: HandleColumnName,
			Ft: types.FieldType{Tp: mysql.TypeLonglong, Flen: 20}, Hidden: true})
	}
	ts.cols = cols
	return ts
}

func (b *builder) buildFrom(s *scope, n ast.ResultSetNode, offset int, pushable bool) (Plan, []*leaf, error) {
	switch x := n.(type) {
	case *ast.Join:
		if x.Right == nil {
			return b.buildFrom(s, x.Left, offset, pushable)
		}
		if x.NaturalJoin || len(x.Using) > 0 {
			return b.buildUsingJoin(s, x, offset)
		}
		jt := InnerJoin
		leftNode, rightNode := x.Left, x.Right
		swapped := false
		switch x.Tp {
		case ast.LeftJoin:
			jt = LeftJoin
		case ast.RightJoin:
			jt = LeftJoin
			leftNode, rightNode = x.Right, x.Left
			swapped = true
		}
		lp, ll, err := b.buildFrom(s, leftNode, offset, pushable)
		if err != nil {
			return nil, nil, err
		}
		lw := len(lp.Columns())
		rp, rl, err := b.buildFrom(s, rightNode, offset+lw, pushable && jt == InnerJoin)
		if err != nil {
			return nil, nil, err
		}
		cols := append(append([]*OutputColumn{}, lp.Columns()...), rp.Columns()...)
		j := &Join{baseSchema: baseSchema{cols: cols}, Left: lp, Right: rp, Type: jt}
		leaves := append(ll, rl...)
		if x.On != nil {
			js := &scope{cols: cols, parent: s.parent}
			cond, err := b.expr(js, x.On.Expr)
			if err != nil {
				return nil, nil, err
			}
			if js.correlated {
				s.correlated = true
			}
			var rest []expression.Expr
			for _, c := range conjuncts(cond, nil) {
				// Conditions on the inner side of a left join may be pushed
				// into that side; on an inner join, into either side.
				c = expression.ShiftColumns(c, -offset)
				if expression.HasSubquery(c) {
					rest = append(rest, expression.ShiftColumns(c, offset))
					continue
				}
				target := leaves
				if jt == LeftJoin {
					target = rl
				}
				if !b.pushToLeafs(c, target, true) {
					rest = append(rest, expression.ShiftColumns(c, offset))
				}
			}
			j.Other = andAll(extractEquiKeys(j, rest))
		}
		if swapped {
			// Restore the written column order: right join lists its left
			// table first.
			rw := len(rp.Columns())
			exprs := make([]expression.Expr, 0, len(cols))
			pcols := make([]*OutputColumn, 0, len(cols))
			for i := 0; i < rw; i++ {
				exprs = append(exprs, &expression.Column{Index: lw + i, Ft: cols[lw+i].Ft})
				pcols = append(pcols, cols[lw+i])
			}
			for i := 0; i < lw; i++ {
				exprs = append(exprs, &expression.Column{Index: i, Ft: cols[i].Ft})
				pcols = append(pcols, cols[i])
			}
			// Leaves keep offsets of the unswapped row, so nothing more may be
			// pushed into them from WHERE.
			for _, l := range leaves {
				l.pushable = false
			}
			return &Projection{baseSchema: baseSchema{cols: pcols}, Child: j, Exprs: exprs}, leaves, nil
		}
		return j, leaves, nil
	case *ast.TableSource:
		alias := x.AsName.O
		switch src := x.Source.(type) {
		case *ast.TableName:
			db, t, err := b.resolveTable(src)
			if err != nil {
				return nil, nil, err
			}
			if t.View != "" {
				if alias == "" {
					alias = t.Name
				}
				return b.buildView(s, db, t, alias)
			}
			ts := newTableScan(db, t, alias)
			l := &leaf{scan: ts, offset: offset, width: len(ts.cols), pushable: pushable}
			b.leaves = append(b.leaves, l)
			return ts, []*leaf{l}, nil
		default:
			child := &scope{parent: s.parent}
			p, err := b.buildResultSet(child, src.(ast.ResultSetNode))
			if err != nil {
				return nil, nil, err
			}
			if child.correlated {
				s.correlated = true
			}
			cols := make([]*OutputColumn, 0, len(p.Columns()))
			for _, c := range p.Columns() {
				nc := *c
				nc.Table, nc.DB, nc.Stored = alias, "", false
				cols = append(cols, &nc)
			}
			exprs := make([]expression.Expr, len(cols))
			for i, c := range cols {
				exprs[i] = &expression.Column{Index: i, Ft: c.Ft}
			}
			return &Projection{baseSchema: baseSchema{cols: cols}, Child: p, Exprs: exprs}, nil, nil
		}
	case *ast.TableName:
		return b.buildFrom(s, &ast.TableSource{Source: x}, offset, pushable)
	}
	return nil, nil, errNotSupported(strings.TrimPrefix(fmtType(n), "*ast."))
}

// pushToLeaf pushes a WHERE conjunct (over the whole FROM row) into the one
// table scan whose columns it reads, if that scan may take it.
func (b *builder) pushToLeaf(c expression.Expr, leaves []*leaf) bool {
	if expression.HasSubquery(c) {
		// A subquery's correlated references index the whole FROM row; only a
		// single-table FROM has the same layout below and above.
		if len(leaves) == 1 && leaves[0].offset == 0 && leaves[0].pushable {
			leaves[0].scan.conds = append(leaves[0].scan.conds, c)
			return true
		}
		return false
	}
	return b.pushToLeafs(c, leaves, false)
}

// pushToLeafs pushes c (indexes relative to the enclosing FROM row) into a
// leaf; force ignores the pushable flag (ON conditions of the inner side).
func (b *builder) pushToLeafs(c expression.Expr, leaves []*leaf, force bool) bool {
	cols := expression.Columns(c, nil)
	if len(cols) == 0 {
		return false
	}
	for _, l := range leaves {
		if !l.pushable && !force {
			continue
		}
		inside := true
		for _, idx := range cols {
			if idx < l.offset || idx >= l.offset+l.width {
				inside = false
				break
			}
		}
		if inside {
			l.scan.conds = append(l.scan.conds, expression.ShiftColumns(c, l.offset))
			return true
		}
	}
	return false
}

// extractEquiKeys moves conditions of the form left.col = right.col into the
// join's hash keys and returns the rest.
func extractEquiKeys(j *Join, conds []expression.Expr) []expression.Expr {
	lw := len(j.Left.Columns())
	var rest []expression.Expr
	for _, c := range conds {
		f, ok := c.(*expression.ScalarFunc)
		if ok && f.Name == "eq" && !expression.HasSubquery(c) {
			l, r := f.Args[0], f.Args[1]
			lc, rc := expression.Columns(l, nil), expression.Columns(r, nil)
			side := func(cols []int) int {
				s := 0
				for _, i := range cols {
					if i < lw {
						s |= 1
					} else {
						s |= 2
					}
				}
				return s
			}
			ls, rs := side(lc), side(rc)
			if ls == 2 && rs == 1 {
				l, r, ls, rs = r, l, rs, ls
			}
			if ls == 1 && rs == 2 && sameClass(l.Type(), r.Type()) {
				j.EqLeft = append(j.EqLeft, l)
				j.EqRight = append(j.EqRight, expression.ShiftColumns(r, lw))
				continue
			}
		}
		rest = append(rest, c)
	}
	return rest
}

// sameClass: hash join keys must compare the way = does, which holds when
// both sides are numbers or both are binary-collated strings.
func sameClass(a, b *types.FieldType) bool {
	num := func(ft *types.FieldType) bool {
		return ft.IsInteger() || ft.Tp == mysql.TypeDouble || ft.Tp == mysql.TypeFloat || ft.Tp == mysql.TypeNewDecimal
	}
	if num(a) && num(b) {
		return true
	}
	str := func(ft *types.FieldType) bool {
		return ft.IsString() && ft.Tp != mysql.TypeNewDecimal && !types.HasSortKeys(ft.Collate)
	}
	return str(a) && str(b)
}

// pushIntoJoin places conditions (over p's row) at the lowest inner join
// whose two sides they connect, as hash keys where they are equalities, so a
// comma join of many tables never forms a cross product it can avoid. It
// returns the conditions it could not place.
func pushIntoJoin(p Plan, conds []expression.Expr) []expression.Expr {
	j, ok := p.(*Join)
	if !ok || j.Type != InnerJoin || len(conds) == 0 {
		return conds
	}
	lw := len(j.Left.Columns())
	var left, right, here, rest []expression.Expr
	for _, c := range conds {
		cols := expression.Columns(c, nil)
		if expression.HasSubquery(c) || len(cols) == 0 {
			rest = append(rest, c)
			continue
		}
		inLeft, inRight := true, true
		for _, i := range cols {
			if i < lw {
				inRight = false
			} else {
				inLeft = false
			}
		}
		switch {
		case inLeft:
			left = append(left, c)
		case inRight:
			right = append(right, expression.ShiftColumns(c, lw))
		default:
			here = append(here, c)
		}
	}
	here = append(here, pushIntoJoin(j.Left, left)...)
	for _, c := range pushIntoJoin(j.Right, right) {
		here = append(here, expression.ShiftColumns(c, -lw))
	}
	here = extractEquiKeys(j, here)
	if len(here) > 0 {
		var all []expression.Expr
		if j.Other != nil {
			all = conjuncts(j.Other, nil)
		}
		j.Other = andAll(append(all, here...))
	}
	return rest
}

func errViewInvalid(db, view string) error {
	return errno.New(mysql.ErrViewInvalid, "View '%s.%s' references invalid table(s) or column(s) or function(s) or definer/invoker of view lack rights to use them", db, view)
}

// buildView expands a view into a derived table.
func (b *builder) buildView(s *scope, db string, t *catalog.TableInfo, alias string) (Plan, []*leaf, error) {
	if b.viewDepth > 16 {
		return nil, nil, errNotSupported("views nested this deep")
	}
	stmts, _, err := parser.New().ParseSQL(t.View)
	if err != nil || len(stmts) != 1 {
		return nil, nil, errViewInvalid(db, t.Name)
	}
	saved := b.ctx
	b.ctx = &Context{Schema: saved.Schema, CurrentDB: db, ReadTS: saved.ReadTS}
	b.viewDepth++
	child := &scope{parent: s.parent}
	p, err := b.buildResultSet(child, stmts[0].(ast.ResultSetNode))
	b.viewDepth--
	b.ctx = saved
	var se *errno.SQLError
	if errors.As(err, &se) && (se.Code == mysql.ErrNoSuchTable || se.Code == mysql.ErrBadField || se.Code == mysql.ErrBadDB) {
		// What the view names is gone (a table renamed or dropped):
		// MySQL reports the view, not the table.
		return nil, nil, errViewInvalid(db, t.Name)
	}
	if err != nil {
		return nil, nil, err
	}
	var cols []*OutputColumn
	var exprs []expression.Expr
	for i, c := range p.Columns() {
		if c.Hidden {
			continue
		}
		nc := *c
		nc.Table, nc.DB, nc.OrgTable, nc.Stored = alias, db, t.Name, false
		if len(t.ViewCols) > len(cols) {
			nc.Name, nc.OrgName = t.ViewCols[len(cols)], t.ViewCols[len(cols)]
		}
		cols = append(cols, &nc)
		exprs = append(exprs, &expression.Column{Index: i, Ft: c.Ft})
	}
	return &Projection{baseSchema: baseSchema{cols: cols}, Child: p, Exprs: exprs}, nil, nil
}

// ViewColumns plans a view's SELECT and returns its column names.
func ViewColumns(ctx *Context, sel ast.StmtNode) ([]string, error) {
	st, err := Build(ctx, sel)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, c := range st.Root.Columns() {
		if !c.Hidden {
			names = append(names, c.Name)
		}
	}
	return names, nil
}

// buildUsingJoin plans JOIN ... USING (cols) and NATURAL JOIN as a join on
// the equalities, projected the way MySQL shows it: the shared columns once
// (from the left side, or the right for a RIGHT JOIN), then the other left
// columns, then the other right columns. The duplicates stay reachable by
// qualified name only.
func (b *builder) buildUsingJoin(s *scope, x *ast.Join, offset int) (Plan, []*leaf, error) {
	lp, _, err := b.buildFrom(s, x.Left, offset, false)
	if err != nil {
		return nil, nil, err
	}
	rp, _, err := b.buildFrom(s, x.Right, offset+len(lp.Columns()), false)
	if err != nil {
		return nil, nil, err
	}
	lcols, rcols := lp.Columns(), rp.Columns()
	lw := len(lcols)
	var names []string
	if x.NaturalJoin {
		for _, lc := range lcols {
			if lc.Hidden || lc.UsingDup {
				continue
			}
			for _, rc := range rcols {
				if !rc.Hidden && !rc.UsingDup && strings.EqualFold(lc.Name, rc.Name) {
					names = append(names, lc.Name)
					break
				}
			}
		}
	} else {
		for _, u := range x.Using {
			names = append(names, u.Name.O)
		}
	}
	find := func(cols []*OutputColumn, name string) int {
		for i, c := range cols {
			if !c.Hidden && !c.UsingDup && strings.EqualFold(c.Name, name) {
				return i
			}
		}
		return -1
	}
	jt := InnerJoin
	if x.Tp == ast.LeftJoin {
		jt = LeftJoin
	}
	leftP, rightP := lp, rp
	if x.Tp == ast.RightJoin {
		jt = LeftJoin
		leftP, rightP = rp, lp
	}
	cols := append(append([]*OutputColumn{}, leftP.Columns()...), rightP.Columns()...)
	j := &Join{baseSchema: baseSchema{cols: cols}, Left: leftP, Right: rightP, Type: jt}
	// Positions in the written (left, right) order, mapped to the join row.
	pos := func(i int, right bool) int {
		if x.Tp == ast.RightJoin {
			if right {
				return i
			}
			return len(rcols) + i
		}
		if right {
			return lw + i
		}
		return i
	}
	var conds []expression.Expr
	usedL, usedR := map[int]bool{}, map[int]bool{}
	var exprs []expression.Expr
	var out []*OutputColumn
	for _, n := range names {
		li, ri := find(lcols, n), find(rcols, n)
		if li < 0 || ri < 0 {
			return nil, nil, errUnknownColumn(n, "from clause")
		}
		usedL[li], usedR[ri] = true, true
		lpos, rpos := pos(li, false), pos(ri, true)
		eq, err := expression.NewFunction("eq", &expression.Column{Index: lpos, Ft: lcols[li].Ft}, &expression.Column{Index: rpos, Ft: rcols[ri].Ft})
		if err != nil {
			return nil, nil, err
		}
		conds = append(conds, eq)
		src, srcPos := lcols[li], lpos
		if x.Tp == ast.RightJoin {
			src, srcPos = rcols[ri], rpos
		}
		exprs = append(exprs, &expression.Column{Index: srcPos, Ft: src.Ft})
		c := *src
		out = append(out, &c)
	}
	j.Other = andAll(extractEquiKeys(j, conds))
	for i, c := range lcols {
		if !usedL[i] {
			exprs = append(exprs, &expression.Column{Index: pos(i, false), Ft: c.Ft})
			out = append(out, c)
		}
	}
	for i, c := range rcols {
		if !usedR[i] {
			exprs = append(exprs, &expression.Column{Index: pos(i, true), Ft: c.Ft})
			out = append(out, c)
		}
	}
	// The shared columns of the other side, by qualified name only.
	for i := range lcols {
		if usedL[i] && x.Tp == ast.RightJoin {
			c := *lcols[i]
			c.UsingDup = true
			exprs = append(exprs, &expression.Column{Index: pos(i, false), Ft: c.Ft})
			out = append(out, &c)
		}
	}
	for i := range rcols {
		if usedR[i] && x.Tp != ast.RightJoin {
			c := *rcols[i]
			c.UsingDup = true
			exprs = append(exprs, &expression.Column{Index: pos(i, true), Ft: c.Ft})
			out = append(out, &c)
		}
	}
	return &Projection{baseSchema: baseSchema{cols: out}, Child: j, Exprs: exprs}, nil, nil
}

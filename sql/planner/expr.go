package planner

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/sql/expression"
	"github.com/shoaldb/shoal/types"
)

// scope is the set of columns an expression can name: the current input's
// columns, then enclosing queries' (for correlated subqueries).
type scope struct {
	cols   []*OutputColumn
	parent *scope
	// correlated is set when a name resolved to an enclosing scope.
	correlated bool
	// agg, when non-nil, maps aggregate calls and group-by expressions onto
	// the columns of an Aggregation (expressions above GROUP BY).
	agg *aggContext
	// insertValues > 0: VALUES(col) in ON DUPLICATE KEY UPDATE reads the
	// proposed row, stored after the existing row's insertValues columns.
	insertValues int
	// aliases are select-list aliases a HAVING clause may name.
	aliases map[string]expression.Expr
}

// aggContext builds the Aggregation under a SELECT while its fields, HAVING
// and ORDER BY are converted.
type aggContext struct {
	input   *scope // the scope under the aggregation
	groupBy []expression.Expr
	gbText  []string // restored text of each GROUP BY item
	aggs    []*AggDesc
	aggText []string
}

func (s *scope) find(db, table, name string) (int, error) {
	idx := -1
	for i, c := range s.cols {
		if c.Hidden || !strings.EqualFold(c.Name, name) || (c.UsingDup && table == "") {
			continue
		}
		if table != "" && !strings.EqualFold(c.Table, table) {
			continue
		}
		if db != "" && !strings.EqualFold(c.DB, db) {
			continue
		}
		if idx >= 0 {
			// Same underlying column reached twice (USING/NATURAL) is fine.
			return -1, errAmbiguous(name, "field list")
		}
		idx = i
	}
	return idx, nil
}

func restore(n ast.Node) string {
	var sb strings.Builder
	if err := n.Restore(newRestoreCtx(&sb)); err != nil {
		return ""
	}
	return sb.String()
}

// exprBuilder converts AST expressions in a scope.
func (b *builder) expr(s *scope, n ast.ExprNode) (expression.Expr, error) {
	if s.agg != nil {
		switch x := n.(type) {
		case *ast.AggregateFuncExpr:
			return b.aggRef(s, x)
		case *ast.ColumnNameExpr, *ast.BinaryOperationExpr, *ast.FuncCallExpr, *ast.UnaryOperationExpr, *ast.ParenthesesExpr:
			txt := restore(x)
			for i, g := range s.agg.gbText {
				if g == txt {
					return &expression.Column{Index: i, Ft: *s.agg.groupBy[i].Type()}, nil
				}
			}
			if cn, ok := x.(*ast.ColumnNameExpr); ok {
				// A column that is not grouped: MySQL (without
				// ONLY_FULL_GROUP_BY) returns a value from the group.
				if idx, err := s.agg.input.find(cn.Name.Schema.L, cn.Name.Table.L, cn.Name.Name.L); err == nil && idx >= 0 {
					if err := b.checkFullGroupBy(s.agg, idx); err != nil {
						return nil, err
					}
					b.used[s.agg.input.cols[idx]] = true
					arg := &expression.Column{Index: idx, Ft: s.agg.input.cols[idx].Ft, Name: cn.Name.Name.O}
					return b.addAgg(s, &AggDesc{Name: "firstrow", Args: []expression.Expr{arg}, Ft: arg.Ft}, "firstrow:"+txt), nil
				}
			}
		}
	}
	switch x := n.(type) {
	case *ast.ParenthesesExpr:
		return b.expr(s, x.Expr)
	case *driver.ParamMarkerExpr:
		idx, ok := b.paramIndex[x]
		if !ok {
			return nil, errno.New(mysql.ErrUnknown, "unexpected parameter marker")
		}
		return &expression.Param{Index: idx, Ft: types.FieldType{Tp: mysql.TypeVarString}}, nil
	case *driver.ValueExpr:
		d, err := literalDatum(&x.Datum)
		if err != nil {
			return nil, err
		}
		return expression.NewConstant(d), nil
	case *ast.TimeUnitExpr:
		// INTERVAL units (DATE_ADD, TIMESTAMPDIFF, EXTRACT) reach the
		// functions as their keyword.
		return expression.NewConstant(types.NewString(x.Unit.String())), nil
	case *ast.ColumnNameExpr:
		return b.columnRef(s, x.Name)
	case *ast.BinaryOperationExpr:
		if lr, ok := x.L.(*ast.RowExpr); ok {
			return b.rowCompare(s, x, lr)
		}
		l, err := b.expr(s, x.L)
		if err != nil {
			return nil, err
		}
		r, err := b.expr(s, x.R)
		if err != nil {
			return nil, err
		}
		name, ok := binaryOps[x.Op]
		if !ok {
			return nil, errNotSupported("operator " + x.Op.String())
		}
		f, err := expression.NewFunction(name, l, r)
		if err == nil && name == "minus" && b.ctx.NoUnsignedSubtraction {
			f = expression.SignedSubtraction(f)
		}
		return f, err
	case *ast.UnaryOperationExpr:
		v, err := b.expr(s, x.V)
		if err != nil {
			return nil, err
		}
		switch x.Op {
		case opcode.Minus:
			if c, ok := v.(*expression.Constant); ok && c.Value.Kind() == types.KindUint64 && c.Value.Uint() == 1<<63 {
				return expression.NewConstant(types.NewInt(-1 << 63)), nil
			}
			return expression.NewFunction("unaryminus", v)
		case opcode.Plus:
			return v, nil
		case opcode.Not, opcode.Not2:
			return expression.NewFunction("not", v)
		}
		return nil, errNotSupported("operator " + x.Op.String())
	case *ast.IsNullExpr:
		v, err := b.expr(s, x.Expr)
		if err != nil {
			return nil, err
		}
		f, err := expression.NewFunction("isnull", v)
		if err != nil || !x.Not {
			return f, err
		}
		return expression.NewFunction("not", f)
	case *ast.IsTruthExpr:
		v, err := b.expr(s, x.Expr)
		if err != nil {
			return nil, err
		}
		name := "istrue"
		if x.True == 0 {
			name = "isfalse"
		}
		f, err := expression.NewFunction(name, v)
		if err != nil || !x.Not {
			return f, err
		}
		return expression.NewFunction("not", f)
	case *ast.BetweenExpr:
		v, err := b.expr(s, x.Expr)
		if err != nil {
			return nil, err
		}
		lo, err := b.expr(s, x.Left)
		if err != nil {
			return nil, err
		}
		hi, err := b.expr(s, x.Right)
		if err != nil {
			return nil, err
		}
		ge, _ := expression.NewFunction("ge", v, lo)
		le, _ := expression.NewFunction("le", v, hi)
		f, err := expression.NewFunction("and", ge, le)
		if err != nil || !x.Not {
			return f, err
		}
		return expression.NewFunction("not", f)
	case *ast.PatternInExpr:
		if row, ok := x.Expr.(*ast.RowExpr); ok && x.Sel == nil {
			return b.rowIn(s, x, row)
		}
		v, err := b.expr(s, x.Expr)
		if err != nil {
			return nil, err
		}
		var f expression.Expr
		if x.Sel != nil {
			sq, ok := x.Sel.(*ast.SubqueryExpr)
			if !ok {
				return nil, errNotSupported("IN expression")
			}
			f, err = b.subquery(s, sq.Query, expression.SubqueryIn, v, "eq", false)
		} else {
			args := []expression.Expr{v}
			for _, item := range x.List {
				e, err := b.expr(s, item)
				if err != nil {
					return nil, err
				}
				args = append(args, e)
			}
			f, err = expression.NewFunction("in", args...)
		}
		if err != nil || !x.Not {
			return f, err
		}
		return expression.NewFunction("not", f)
	case *ast.PatternLikeOrIlikeExpr:
		v, err := b.expr(s, x.Expr)
		if err != nil {
			return nil, err
		}
		p, err := b.expr(s, x.Pattern)
		if err != nil {
			return nil, err
		}
		// ESCAPE '' means no escape character, as does the default under
		// NO_BACKSLASH_ESCAPES (MySQL's rule).
		escText := string([]byte{x.Escape})
		if x.EscapeExplicit && x.Escape == 0 || !x.EscapeExplicit && b.ctx.NoBackslashEscapes {
			escText = ""
		}
		esc := expression.NewConstant(types.NewString(escText))
		f, err := expression.NewFunction("like", v, p, esc)
		if err != nil || !x.Not {
			return f, err
		}
		return expression.NewFunction("not", f)
	case *ast.CaseExpr:
		var args []expression.Expr
		name := "case"
		if x.Value != nil {
			v, err := b.expr(s, x.Value)
			if err != nil {
				return nil, err
			}
			args = append(args, v)
			name = "case_operand"
		}
		for _, w := range x.WhenClauses {
			c, err := b.expr(s, w.Expr)
			if err != nil {
				return nil, err
			}
			r, err := b.expr(s, w.Result)
			if err != nil {
				return nil, err
			}
			args = append(args, c, r)
		}
		if x.ElseClause != nil {
			e, err := b.expr(s, x.ElseClause)
			if err != nil {
				return nil, err
			}
			args = append(args, e)
		}
		return expression.NewFunction(name, args...)
	case *ast.FuncCallExpr:
		if x.FnName.L == "values" && s.insertValues > 0 && len(x.Args) == 1 {
			if cn, ok := x.Args[0].(*ast.ColumnNameExpr); ok {
				idx, err := s.find("", "", cn.Name.Name.L)
				if err != nil {
					return nil, err
				}
				if idx < 0 {
					return nil, errUnknownColumn(cn.Name.Name.O, "field list")
				}
				return &expression.Column{Index: s.insertValues + idx, Ft: s.cols[idx].Ft}, nil
			}
		}
		args := make([]expression.Expr, 0, len(x.Args))
		for _, a := range x.Args {
			e, err := b.expr(s, a)
			if err != nil {
				return nil, err
			}
			args = append(args, e)
		}
		return expression.NewFunction(x.FnName.L, args...)
	case *ast.FuncCastExpr:
		v, err := b.expr(s, x.Expr)
		if err != nil {
			return nil, err
		}
		return expression.NewCast(v, x.Tp)
	case *ast.AggregateFuncExpr:
		return nil, errInvalidGroupFunc()
	case *ast.SubqueryExpr:
		return b.subquery(s, x.Query, expression.SubqueryScalar, nil, "", false)
	case *ast.ExistsSubqueryExpr:
		sq, ok := x.Sel.(*ast.SubqueryExpr)
		if !ok {
			return nil, errNotSupported("EXISTS expression")
		}
		f, err := b.subquery(s, sq.Query, expression.SubqueryExists, nil, "", false)
		if err != nil || !x.Not {
			return f, err
		}
		return expression.NewFunction("not", f)
	case *ast.CompareSubqueryExpr:
		l, err := b.expr(s, x.L)
		if err != nil {
			return nil, err
		}
		sq, ok := x.R.(*ast.SubqueryExpr)
		if !ok {
			return nil, errNotSupported("subquery comparison")
		}
		name, ok := binaryOps[x.Op]
		if !ok {
			return nil, errNotSupported("subquery comparison")
		}
		return b.subquery(s, sq.Query, expression.SubqueryCompare, l, name, x.All)
	case *ast.VariableExpr:
		if x.Value != nil {
			return nil, errNotSupported("assignment in expression")
		}
		ft := types.FieldType{Tp: mysql.TypeVarString, Flen: 255, Charset: "utf8mb4", Collate: "utf8mb4_bin"}
		return &expression.Variable{Name: strings.ToLower(x.Name), System: x.IsSystem, Global: x.IsGlobal, Ft: ft}, nil
	case *ast.ValuesExpr:
		if s.insertValues == 0 || x.Column == nil {
			return expression.NewConstant(types.Datum{}), nil // NULL outside ON DUPLICATE KEY UPDATE, as MySQL
		}
		idx, err := s.find("", "", x.Column.Name.Name.L)
		if err != nil {
			return nil, err
		}
		if idx < 0 {
			return nil, errUnknownColumn(x.Column.Name.Name.O, "field list")
		}
		return &expression.Column{Index: s.insertValues + idx, Ft: s.cols[idx].Ft}, nil
	case *ast.DefaultExpr:
		return nil, errNotSupported("DEFAULT here")
	case *ast.RowExpr:
		return nil, errno.New(mysql.ErrOperandColumns, "Operand should contain 1 column(s)")
	}
	return nil, errNotSupported(strings.TrimPrefix(fmtType(n), "*ast."))
}

var binaryOps = map[opcode.Op]string{
	opcode.Plus: "plus", opcode.Minus: "minus", opcode.Mul: "mul", opcode.Div: "div",
	opcode.IntDiv: "intdiv", opcode.Mod: "mod",
	opcode.EQ: "eq", opcode.NE: "ne", opcode.LT: "lt", opcode.LE: "le", opcode.GT: "gt", opcode.GE: "ge",
	opcode.NullEQ: "nulleq", opcode.LogicAnd: "and", opcode.LogicOr: "or", opcode.LogicXor: "xor",
}

// literalDatum converts a parser literal to a Datum.
func literalDatum(d *driver.Datum) (types.Datum, error) {
	switch d.Kind() {
	case driver.KindNull:
		return types.Datum{}, nil
	case driver.KindInt64:
		return types.NewInt(d.GetInt64()), nil
	case driver.KindUint64:
		return types.NewUint(d.GetUint64()), nil
	case driver.KindFloat32, driver.KindFloat64:
		return types.NewFloat(d.GetFloat64()), nil
	case driver.KindString:
		return types.NewString(d.GetString()), nil
	case driver.KindBytes:
		return types.NewBytes(d.GetBytes()), nil
	case driver.KindMysqlDecimal:
		v, err := types.ParseDecimal(d.GetMysqlDecimal().String())
		if err != nil {
			return types.Datum{}, errno.New(mysql.ErrDataOutOfRange, "DECIMAL value is out of range")
		}
		return v, nil
	case driver.KindBinaryLiteral:
		return types.NewBytes([]byte(d.GetBinaryLiteral())), nil
	}
	return types.Datum{}, errNotSupported("literal")
}

func (b *builder) columnRef(s *scope, name *ast.ColumnName) (expression.Expr, error) {
	if s.aliases != nil && name.Table.L == "" {
		if e, ok := s.aliases[name.Name.L]; ok {
			return e, nil
		}
	}
	depth := 0
	for cur := s; cur != nil; cur = cur.parent {
		search := cur
		if cur.agg != nil && depth > 0 {
			search = cur.agg.input
		}
		idx, err := search.find(name.Schema.L, name.Table.L, name.Name.L)
		if err != nil {
			return nil, err
		}
		if idx >= 0 {
			col := search.cols[idx]
			b.used[col] = true
			if depth == 0 {
				return &expression.Column{Index: idx, Ft: col.Ft, Name: col.Name}, nil
			}
			for c := s; c != nil && c != cur; c = c.parent {
				c.correlated = true
			}
			return &expression.OuterColumn{Depth: depth, Index: idx, Ft: col.Ft}, nil
		}
		depth++
	}
	full := name.Name.O
	if name.Table.O != "" {
		full = name.Table.O + "." + full
	}
	return nil, errUnknownColumn(full, b.clause)
}

func (b *builder) aggRef(s *scope, x *ast.AggregateFuncExpr) (expression.Expr, error) {
	in := s.agg.input
	name := strings.ToLower(x.F)
	desc := &AggDesc{Name: name, Distinct: x.Distinct, Separator: ","}
	args := x.Args
	if name == "group_concat" && len(args) > 1 {
		// The parser appends the separator as the last argument.
		if v, ok := args[len(args)-1].(*driver.ValueExpr); ok {
			desc.Separator = v.GetString()
			args = args[:len(args)-1]
		}
	}
	for _, a := range args {
		e, err := b.expr(in, a)
		if err != nil {
			return nil, err
		}
		desc.Args = append(desc.Args, e)
	}
	switch name {
	case "count":
		desc.Ft = types.FieldType{Tp: mysql.TypeLonglong, Flen: 21, Flag: mysql.BinaryFlag}
		if len(desc.Args) == 1 && !desc.Distinct {
			if c, ok := desc.Args[0].(*expression.Constant); ok && !c.Value.IsNull() {
				desc.Args = nil // COUNT(1), COUNT(*)
			}
		}
	case "sum", "avg":
		at := desc.Args[0].Type()
		switch {
		case at.IsInteger() || at.Tp == mysql.TypeNewDecimal:
			dec := 0
			if at.Tp == mysql.TypeNewDecimal {
				dec = at.Decimal
			}
			if name == "avg" {
				dec += 4
			}
			desc.Ft = types.FieldType{Tp: mysql.TypeNewDecimal, Flen: 65, Decimal: dec, Flag: mysql.BinaryFlag}
		default:
			desc.Ft = types.FieldType{Tp: mysql.TypeDouble, Flen: 22, Decimal: -1, Flag: mysql.BinaryFlag}
		}
	case "min", "max", "firstrow":
		desc.Ft = *desc.Args[0].Type()
		desc.Ft.Flag &^= mysql.NotNullFlag | mysql.PriKeyFlag | mysql.AutoIncrementFlag
	case "group_concat":
		desc.Ft = types.FieldType{Tp: mysql.TypeBlob, Flen: 1024, Charset: "utf8mb4", Collate: "utf8mb4_bin"}
	case "bit_or", "bit_and", "bit_xor":
		desc.Ft = types.FieldType{Tp: mysql.TypeLonglong, Flen: 21, Flag: mysql.UnsignedFlag | mysql.BinaryFlag}
	default:
		return nil, errNotSupported("aggregate function " + name)
	}
	return b.addAgg(s, desc, restore(x)), nil
}

func (b *builder) addAgg(s *scope, desc *AggDesc, text string) expression.Expr {
	ac := s.agg
	for i, t := range ac.aggText {
		if t == text {
			return &expression.Column{Index: len(ac.groupBy) + i, Ft: ac.aggs[i].Ft}
		}
	}
	ac.aggs = append(ac.aggs, desc)
	ac.aggText = append(ac.aggText, text)
	return &expression.Column{Index: len(ac.groupBy) + len(ac.aggs) - 1, Ft: desc.Ft}
}

// subquery plans a subquery in a child scope of s.
func (b *builder) subquery(s *scope, q ast.ResultSetNode, mode expression.SubqueryMode, left expression.Expr, op string, all bool) (expression.Expr, error) {
	if mode == expression.SubqueryScalar {
		if e, err := b.decorrelateScalarAgg(s, q); e != nil || err != nil {
			return e, err
		}
	}
	child := &scope{parent: s}
	p, err := b.buildResultSet(child, q)
	if err != nil {
		return nil, err
	}
	cols := visibleCount(p.Columns())
	if mode != expression.SubqueryExists && cols != 1 {
		return nil, errno.New(mysql.ErrOperandColumns, "Operand should contain 1 column(s)")
	}
	id := len(b.stmt.Subqueries)
	b.stmt.Subqueries = append(b.stmt.Subqueries, &SubqueryPlan{Plan: p, Correlated: child.correlated})
	sq := &expression.Subquery{ID: id, Mode: mode, Correlated: child.correlated, Left: left, Op: op, All: all}
	switch mode {
	case expression.SubqueryScalar:
		sq.Ft = p.Columns()[0].Ft
		sq.Ft.Flag &^= mysql.NotNullFlag
	default:
		sq.Ft = types.FieldType{Tp: mysql.TypeLonglong, Flen: 1, Flag: mysql.BinaryFlag}
	}
	return sq, nil
}

func visibleCount(cols []*OutputColumn) int {
	n := 0
	for _, c := range cols {
		if !c.Hidden {
			n++
		}
	}
	return n
}

func (b *builder) rowValues(s *scope, n ast.ExprNode, width int) ([]expression.Expr, error) {
	row, ok := n.(*ast.RowExpr)
	if !ok || len(row.Values) != width {
		return nil, errno.New(mysql.ErrOperandColumns, "Operand should contain %d column(s)", width)
	}
	out := make([]expression.Expr, len(row.Values))
	for i, v := range row.Values {
		e, err := b.expr(s, v)
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}

// rowCompare expands (a, b) = (x, y) into a = x AND b = y (and != into its
// negation, <=> likewise).
func (b *builder) rowCompare(s *scope, x *ast.BinaryOperationExpr, l *ast.RowExpr) (expression.Expr, error) {
	name, ok := binaryOps[x.Op]
	if !ok || (name != "eq" && name != "ne" && name != "nulleq") {
		return nil, errNotSupported("row comparison " + x.Op.String())
	}
	ls, err := b.rowValues(s, l, len(l.Values))
	if err != nil {
		return nil, err
	}
	rs, err := b.rowValues(s, x.R, len(l.Values))
	if err != nil {
		return nil, err
	}
	op := name
	if op == "ne" {
		op = "eq"
	}
	parts := make([]expression.Expr, len(ls))
	for i := range ls {
		if parts[i], err = expression.NewFunction(op, ls[i], rs[i]); err != nil {
			return nil, err
		}
	}
	e := parts[0]
	if len(parts) > 1 {
		e, _ = expression.NewFunction("and", parts...)
	}
	if name == "ne" {
		return expression.NewFunction("not", e)
	}
	return e, nil
}

// rowIn expands (a, b) IN ((x, y), ...) into an OR of ANDs of equalities,
// which has IN's NULL semantics and which access-path selection turns into
// point lookups or index ranges.
func (b *builder) rowIn(s *scope, x *ast.PatternInExpr, row *ast.RowExpr) (expression.Expr, error) {
	ls, err := b.rowValues(s, row, len(row.Values))
	if err != nil {
		return nil, err
	}
	var ors []expression.Expr
	for _, item := range x.List {
		rs, err := b.rowValues(s, item, len(ls))
		if err != nil {
			return nil, err
		}
		parts := make([]expression.Expr, len(ls))
		for i := range ls {
			if parts[i], err = expression.NewFunction("eq", ls[i], rs[i]); err != nil {
				return nil, err
			}
		}
		e := parts[0]
		if len(parts) > 1 {
			e, _ = expression.NewFunction("and", parts...)
		}
		ors = append(ors, e)
	}
	e := ors[0]
	if len(ors) > 1 {
		e, _ = expression.NewFunction("or", ors...)
	}
	if x.Not {
		return expression.NewFunction("not", e)
	}
	return e, nil
}

// checkFullGroupBy enforces ONLY_FULL_GROUP_BY for a column read outside an
// aggregate: it must be grouped, or functionally dependent on a grouped
// primary key of its table.
func (b *builder) checkFullGroupBy(ac *aggContext, idx int) error {
	if !b.ctx.OnlyFullGroupBy {
		return nil
	}
	grouped := map[int]bool{}
	for _, g := range ac.groupBy {
		if c, ok := g.(*expression.Column); ok {
			grouped[c.Index] = true
		}
	}
	if grouped[idx] {
		return nil
	}
	col := ac.input.cols[idx]
	if t := b.ctx.Schema.Table(col.DB, col.OrgTable); t != nil && len(ac.groupBy) > 0 {
		for _, key := range t.Indices {
			if !key.Primary && !key.Unique || !key.Public() {
				continue
			}
			all := true
			for _, ic := range key.Columns {
				found := false
				for i, c := range ac.input.cols {
					if grouped[i] && c.Table == col.Table && c.DB == col.DB && strings.EqualFold(c.OrgName, ic.Name) &&
						(key.Primary || t.Columns[ic.Offset].Type.NotNull()) {
						found = true
						break
					}
				}
				if !found {
					all = false
					break
				}
			}
			if all {
				return nil
			}
		}
	}
	name := col.Name
	if col.Table != "" {
		name = col.Table + "." + name
		if col.DB != "" {
			name = col.DB + "." + name
		}
	}
	switch {
	case b.clause == "having clause":
		return errno.New(mysql.ErrFieldNotInGroupBy, "Expression #%d of HAVING clause is not in GROUP BY clause and contains nonaggregated column '%s' which is not functionally dependent on columns in GROUP BY clause; this is incompatible with sql_mode=only_full_group_by", max(b.exprNum, 1), name)
	case len(ac.groupBy) == 0:
		return errno.New(mysql.ErrMixOfGroupFuncAndFields, "In aggregated query without GROUP BY, expression #%d of %s contains nonaggregated column '%s'; this is incompatible with sql_mode=only_full_group_by", b.exprNum, clauseName(b.clause), name)
	}
	return errno.New(mysql.ErrFieldNotInGroupBy, "Expression #%d of %s is not in GROUP BY clause and contains nonaggregated column '%s' which is not functionally dependent on columns in GROUP BY clause; this is incompatible with sql_mode=only_full_group_by", b.exprNum, clauseName(b.clause), name)
}

func clauseName(c string) string {
	if c == "order clause" {
		return "ORDER BY clause"
	}
	return "SELECT list"
}

package ddl

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/sql/catalog"
	"github.com/shoaldb/shoal/sql/executor"
	"github.com/shoaldb/shoal/sql/expression"
	"github.com/shoaldb/shoal/sql/planner"
	"github.com/shoaldb/shoal/tablecodec"
)

// The expressions a table keeps (generated columns, CHECK constraints,
// expression defaults) follow MySQL 8's rules, checked here before the
// table changes: what each may contain, which columns each may read, and
// the check names (unique within the schema).

// exprKind says whose rules an expression follows.
type exprKind int

const (
	kindGenerated exprKind = iota
	kindCheck
	kindDefault
)

// nondeterministic are the functions whose value does not follow from the
// row (time, session, randomness, locks): refused in generated columns and
// CHECK constraints, allowed in expression defaults.
var nondeterministic = map[string]bool{
	"connection_id": true, "current_user": true, "user": true, "session_user": true, "system_user": true,
	"database": true, "schema": true, "found_rows": true, "last_insert_id": true, "row_count": true,
	"now": true, "current_timestamp": true, "localtime": true, "localtimestamp": true, "curdate": true,
	"current_date": true, "curtime": true, "current_time": true, "sysdate": true, "utc_date": true,
	"utc_time": true, "utc_timestamp": true, "unix_timestamp": true, "rand": true, "uuid": true,
	"uuid_short": true, "sleep": true, "get_lock": true, "release_lock": true, "release_all_locks": true,
	"is_free_lock": true, "is_used_lock": true, "benchmark": true, "load_file": true, "version": true,
	"current_role": true, "master_pos_wait": true, "source_pos_wait": true, "name_const": true,
	"values": true, "default": true, "random_bytes": true, "statement_digest": true,
}

// exprRefs walks an expression: the columns it names, and the first thing
// it may not contain under kind's rules (an error naming owner).
type exprRefs struct {
	kind  exprKind
	owner string
	cols  []string
	err   error
}

func (r *exprRefs) Enter(n ast.Node) (ast.Node, bool) {
	if r.err != nil {
		return n, true
	}
	switch x := n.(type) {
	case *ast.ColumnNameExpr:
		r.cols = append(r.cols, x.Name.Name.O)
	case *ast.SubqueryExpr, *ast.ExistsSubqueryExpr, *ast.AggregateFuncExpr, *ast.WindowFuncExpr,
		*ast.DefaultExpr, *ast.ValuesExpr:
		r.err = r.disallowed("")
	case *ast.VariableExpr:
		if r.kind == kindCheck {
			r.err = errno.NewConstraint(errno.ErrCheckConstraintVariables, r.owner)
		} else {
			r.err = r.disallowed("")
		}
	case *ast.RowExpr:
		if r.kind == kindCheck {
			r.err = errno.NewConstraint(errno.ErrCheckConstraintRowValue, r.owner)
		}
	case *ast.FuncCallExpr:
		if r.kind != kindDefault && nondeterministic[x.FnName.L] {
			r.err = r.disallowed(x.FnName.L)
		}
	}
	return n, r.err != nil
}

func (r *exprRefs) Leave(n ast.Node) (ast.Node, bool) { return n, r.err == nil }

// disallowed is kind's error for a function (named, when name is set) or
// construct the expression may not contain.
func (r *exprRefs) disallowed(name string) error {
	switch r.kind {
	case kindCheck:
		if name != "" {
			return errno.NewConstraint(errno.ErrCheckConstraintNamedFunctionIsNotAllowed, r.owner, name)
		}
		return errno.NewConstraint(errno.ErrCheckConstraintFunctionIsNotAllowed, r.owner)
	case kindDefault:
		if name != "" {
			return errno.NewConstraint(errno.ErrDefaultValGeneratedNamedFunctionIsNotAllowed, r.owner, name)
		}
		return errno.NewConstraint(errno.ErrDefaultValGeneratedFunctionIsNotAllowed, r.owner)
	}
	if name != "" {
		return errno.NewConstraint(errno.ErrGeneratedColumnNamedFunctionIsNotAllowed, r.owner, name)
	}
	return errno.NewStd(mysql.ErrGeneratedColumnFunctionIsNotAllowed, r.owner)
}

func scanExpr(kind exprKind, owner string, n ast.ExprNode) ([]string, error) {
	r := &exprRefs{kind: kind, owner: owner}
	n.Accept(r)
	return r.cols, r.err
}

// pendingExpr is an expression met in a column definition or constraint,
// judged once every column of the table is known.
type pendingExpr struct {
	kind exprKind
	node ast.ExprNode
	// col is the column it belongs to (generated, default, or a
	// column-level CHECK); nil for a table-level CHECK.
	col  *catalog.ColumnInfo
	name string // the CHECK's name as declared ("" when unnamed)
	// notEnforced: CHECK ... NOT ENFORCED.
	notEnforced bool
}

// columnExprOption takes a column option that declares an expression
// (GENERATED ALWAYS AS, CHECK, DEFAULT (expr)); ok reports whether it was
// one.
func columnExprOption(c *catalog.ColumnInfo, o *ast.ColumnOption, pending *[]pendingExpr) (ok bool) {
	switch o.Tp {
	case ast.ColumnOptionGenerated:
		// Set now, so the other columns' expressions see it is generated.
		c.GeneratedExpr = exprText(o.Expr)
		c.GeneratedStored = o.Stored
		*pending = append(*pending, pendingExpr{kind: kindGenerated, node: o.Expr, col: c})
		return true
	case ast.ColumnOptionCheck:
		*pending = append(*pending, pendingExpr{kind: kindCheck, node: o.Expr, col: c, name: o.ConstraintName, notEnforced: !o.Enforced})
		return true
	case ast.ColumnOptionDefaultValue:
		if isExprDefault(o.Expr) {
			c.HasDefault = true
			c.DefaultIsExpr = true
			*pending = append(*pending, pendingExpr{kind: kindDefault, node: o.Expr, col: c})
			return true
		}
	}
	return false
}

// isExprDefault reports whether a DEFAULT is an expression default: a
// function call other than CURRENT_TIMESTAMP and its synonyms (which are
// the literal kind of default for temporal columns), or a column.
func isExprDefault(e ast.ExprNode) bool {
	switch x := e.(type) {
	case *ast.FuncCallExpr:
		switch x.FnName.L {
		case "current_timestamp", "now", "localtime", "localtimestamp":
			return false
		}
		return true
	case *ast.ColumnNameExpr:
		return true
	}
	return false
}

// checkGeneratedOptions refuses the options MySQL's grammar does not allow
// on a generated column.
func checkGeneratedOptions(c *catalog.ColumnInfo, cd *ast.ColumnDef) error {
	if !c.IsGenerated() && !hasGenerated(cd) {
		return nil
	}
	for _, o := range cd.Options {
		switch o.Tp {
		case ast.ColumnOptionDefaultValue:
			return errno.NewStd(mysql.ErrWrongUsage, "DEFAULT", "generated column")
		case ast.ColumnOptionAutoIncrement:
			return errno.NewStd(mysql.ErrUnsupportedOnGeneratedColumn, "AUTO_INCREMENT")
		case ast.ColumnOptionOnUpdate:
			return errno.NewStd(mysql.ErrWrongUsage, "ON UPDATE", "generated column")
		}
	}
	return nil
}

func hasGenerated(cd *ast.ColumnDef) bool {
	for _, o := range cd.Options {
		if o.Tp == ast.ColumnOptionGenerated {
			return true
		}
	}
	return false
}

// applyExprs judges the pending expressions against t (every column in
// place) and stores them: generated expressions and expression defaults
// on their columns, CHECK constraints in t.Checks with MySQL's generated
// names for unnamed ones. taken holds the check names already used in the
// schema (lower case); it gains the new ones.
func applyExprs(t *catalog.TableInfo, pending []pendingExpr, taken map[string]bool) error {
	for _, p := range pending {
		if p.kind == kindCheck {
			continue
		}
		if err := applyColumnExpr(t, p); err != nil {
			return err
		}
	}
	next := maxGeneratedCheckNumber(t)
	for _, p := range pending {
		if p.kind != kindCheck {
			continue
		}
		name := p.name
		if name == "" {
			for {
				next++
				name = fmt.Sprintf("%s_chk_%d", t.Name, next)
				if !taken[strings.ToLower(name)] {
					break
				}
			}
		}
		if len(name) > 64 {
			return errno.NewStd(mysql.ErrTooLongIdent, name)
		}
		if taken[strings.ToLower(name)] {
			return errno.NewConstraint(errno.ErrCheckConstraintDupName, name)
		}
		if err := judgeCheck(t, p, name); err != nil {
			return err
		}
		taken[strings.ToLower(name)] = true
		t.Checks = append(t.Checks, &catalog.CheckInfo{Name: name, Expr: exprText(p.node), NotEnforced: p.notEnforced})
	}
	return nil
}

// maxGeneratedCheckNumber is the highest N among t's checks named
// <table>_chk_N: MySQL numbers a new unnamed check after it.
func maxGeneratedCheckNumber(t *catalog.TableInfo) int {
	prefix := strings.ToLower(t.Name) + "_chk_"
	n := 0
	for _, ck := range t.Checks {
		if rest, ok := strings.CutPrefix(strings.ToLower(ck.Name), prefix); ok {
			if v, err := strconv.Atoi(rest); err == nil && v > n {
				n = v
			}
		}
	}
	return n
}

func applyColumnExpr(t *catalog.TableInfo, p pendingExpr) error {
	c := p.col
	cols, err := scanExpr(p.kind, c.Name, p.node)
	if err != nil {
		return err
	}
	for _, name := range cols {
		ref := t.FindColumn(name)
		if ref == nil {
			where := "generated column function"
			if p.kind == kindDefault {
				where = "default value expression"
			}
			return errno.NewStd(mysql.ErrBadField, name, where)
		}
		switch p.kind {
		case kindGenerated:
			if ref.AutoIncrement {
				return errno.NewStd(mysql.ErrGeneratedColumnRefAutoInc, c.Name)
			}
			if ref.IsGenerated() && ref.Offset >= c.Offset || ref == c {
				return errno.NewStd(mysql.ErrGeneratedColumnNonPrior)
			}
		case kindDefault:
			if ref.AutoIncrement {
				return errno.NewConstraint(errno.ErrDefaultValGeneratedRefAutoInc, c.Name)
			}
			if ref.Offset >= c.Offset && (ref.IsGenerated() || ref.DefaultIsExpr) {
				return errno.NewConstraint(errno.ErrDefaultValGeneratedNonPrior, c.Name)
			}
		}
	}
	if _, err := planner.CompileRowExpr(t, p.node, "field list"); err != nil {
		return err
	}
	text := exprText(p.node)
	if p.kind == kindGenerated {
		c.GeneratedExpr = text
	} else {
		c.Default = &text
	}
	return nil
}

func judgeCheck(t *catalog.TableInfo, p pendingExpr, name string) error {
	cols, err := scanExpr(kindCheck, name, p.node)
	if err != nil {
		return err
	}
	for _, cn := range cols {
		ref := t.FindColumn(cn)
		if ref == nil {
			return errno.NewConstraint(errno.ErrCheckConstraintRefersUnknownColumn, name, cn)
		}
		if p.col != nil && ref.ID != p.col.ID {
			return errno.NewConstraint(errno.ErrColumnCheckConstraintReferencesOtherColumn, name)
		}
		if ref.AutoIncrement {
			return errno.NewConstraint(errno.ErrCheckConstraintRefersAutoIncrementColumn, name)
		}
	}
	if !isBooleanExpr(p.node) {
		return errno.NewConstraint(errno.ErrNonBooleanExprForCheckConstraint, name)
	}
	_, err = planner.CompileRowExpr(t, p.node, "check constraint")
	return err
}

// isBooleanExpr reports whether a CHECK condition is a truth value
// (comparison, logic, IS, IN, LIKE, BETWEEN, a function) rather than a
// bare column or literal, which MySQL refuses (3812).
func isBooleanExpr(n ast.ExprNode) bool {
	switch x := n.(type) {
	case *ast.ParenthesesExpr:
		return isBooleanExpr(x.Expr)
	case *ast.BinaryOperationExpr:
		switch x.Op {
		case opcode.EQ, opcode.NE, opcode.LT, opcode.LE, opcode.GT, opcode.GE, opcode.NullEQ,
			opcode.LogicAnd, opcode.LogicOr, opcode.LogicXor:
			return true
		}
		return false
	case *ast.UnaryOperationExpr:
		return x.Op == opcode.Not || x.Op == opcode.Not2
	case *ast.IsNullExpr, *ast.IsTruthExpr, *ast.PatternInExpr, *ast.PatternLikeOrIlikeExpr,
		*ast.BetweenExpr, *ast.PatternRegexpExpr, *ast.FuncCallExpr:
		return true
	}
	return false
}

// schemaCheckNames are the CHECK names used in a schema, lower case
// (MySQL keeps them unique per schema).
func schemaCheckNames(is *catalog.InfoSchema, db string, except *catalog.TableInfo) map[string]bool {
	taken := map[string]bool{}
	for _, t := range is.Tables(db) {
		if except != nil && t.ID == except.ID {
			continue
		}
		for _, ck := range t.Checks {
			taken[strings.ToLower(ck.Name)] = true
		}
	}
	return taken
}

func columnsOnly(pending []pendingExpr) []pendingExpr {
	var out []pendingExpr
	for _, p := range pending {
		if p.kind != kindCheck {
			out = append(out, p)
		}
	}
	return out
}

func checksOnly(pending []pendingExpr) []pendingExpr {
	var out []pendingExpr
	for _, p := range pending {
		if p.kind == kindCheck {
			out = append(out, p)
		}
	}
	return out
}

// storedExprColumns lists the columns a stored expression names.
func storedExprColumns(text string) ([]string, error) {
	n, err := planner.ParseExprText(text)
	if err != nil {
		return nil, err
	}
	r := &exprRefs{kind: kindDefault}
	n.Accept(r)
	return r.cols, nil
}

func namesColumn(cols []string, name string) bool {
	for _, c := range cols {
		if strings.EqualFold(c, name) {
			return true
		}
	}
	return false
}

// columnExprDependency is the error MySQL gives for renaming or dropping
// column c of t while another column's generated expression (3108) or
// expression default (3837) names it.
func columnExprDependency(t *catalog.TableInfo, c *catalog.ColumnInfo) error {
	for _, other := range t.Columns {
		if other.ID == c.ID {
			continue
		}
		text := other.GeneratedExpr
		if text == "" && other.DefaultIsExpr && other.Default != nil {
			text = *other.Default
		}
		if text == "" {
			continue
		}
		cols, err := storedExprColumns(text)
		if err != nil {
			return err
		}
		if !namesColumn(cols, c.Name) {
			continue
		}
		if other.IsGenerated() {
			return errno.NewStd(mysql.ErrDependentByGeneratedColumn, c.Name)
		}
		return errno.NewConstraint(errno.ErrDependentByDefaultGeneratedValue, c.Name, t.Name)
	}
	return nil
}

// dropColumnExprs settles what t's expressions say about dropping column
// c, as MySQL: a generated column (3108) or expression default (3837)
// reading it refuses the drop; a CHECK reading only it goes with it, one
// reading other columns too refuses the drop (3959).
func dropColumnExprs(t *catalog.TableInfo, c *catalog.ColumnInfo) error {
	if err := columnExprDependency(t, c); err != nil {
		return err
	}
	kept := t.Checks[:0]
	for _, ck := range t.Checks {
		cols, err := storedExprColumns(ck.Expr)
		if err != nil {
			return err
		}
		if !namesColumn(cols, c.Name) {
			kept = append(kept, ck)
			continue
		}
		for _, name := range cols {
			if !strings.EqualFold(name, c.Name) {
				return errno.NewConstraint(errno.ErrDependentByCheckConstraint, ck.Name, c.Name)
			}
		}
	}
	t.Checks = kept
	return nil
}

// checkGeneratedRows computes the STORED generated columns being added to
// t (as nt has them) for every row of t read in txn, so that a value a
// column cannot hold (NULL in a NOT NULL one, out of range) fails the
// ALTER, as MySQL's rebuild of the table does.
func checkGeneratedRows(ctx context.Context, txn kv.Txn, t, nt *catalog.TableInfo, pending []pendingExpr) error {
	type gen struct {
		c *catalog.ColumnInfo
		e expression.Expr
	}
	var gens []gen
	for _, p := range pending {
		c := nt.ColumnByID(p.col.ID)
		if !c.GeneratedStored {
			// MySQL adds a VIRTUAL column without validation unless
			// asked (WITH VALIDATION): its rows are not rewritten.
			continue
		}
		// Compiled over t: the expression reads only columns t has, at
		// the same offsets (new columns go last).
		e, err := planner.CompileRowExprText(t, c.GeneratedExpr)
		if err != nil {
			return err
		}
		gens = append(gens, gen{c, e})
	}
	prefix := kv.Key(tablecodec.RecordPrefix(t.ID))
	it, err := txn.Iter(ctx, prefix, prefix.PrefixNext())
	if err != nil {
		return err
	}
	defer it.Close()
	rowNum := 0
	for ; it.Valid(); err = it.Next() {
		if err != nil {
			return err
		}
		rowNum++
		_, h, err := tablecodec.DecodeRecordKey(it.Key())
		if err != nil {
			return err
		}
		row, err := executor.DecodeRecord(t, h.Clone(), it.Value())
		if err != nil {
			return err
		}
		for _, g := range gens {
			if _, err := executor.GeneratedValue(g.e, g.c, row, rowNum); err != nil {
				return err
			}
		}
	}
	return err
}

package session

import (
	"strconv"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/shoaldb/shoal/errno"
)

// diagnostics is the session's diagnostics area: the conditions (notes,
// warnings, errors) SHOW WARNINGS and SHOW ERRORS list, as MySQL keeps it.
//
// Invariants (MySQL's rules):
//   - SHOW WARNINGS / SHOW ERRORS (and their COUNT(*) forms) leave it alone.
//   - Any other statement that uses a table clears it when it starts; one
//     that uses none (SELECT 1, SET, USE) clears it only when it raises a
//     condition itself, so SELECT @@warning_count reads the previous
//     statement's count.
//   - At most max_error_count conditions are kept; warning_count and
//     error_count count all of them.
type diagnostics struct {
	conds []condition
	// total and errors count every condition of the area (kept or not).
	total, errors int
	// stmtConds counts the running (or last) statement's conditions: the
	// warning count of its OK or EOF packet.
	stmtConds int
	// clearPending: the running statement uses no table, so its first
	// condition replaces the area.
	clearPending bool
}

type condition struct {
	err   error
	error bool
}

func (d *diagnostics) clear() {
	d.conds, d.total, d.errors = d.conds[:0], 0, 0
}

// beginStatement applies the clearing rules for a statement about to run.
func (s *Session) beginStatement(node ast.StmtNode) {
	d := &s.diag
	d.stmtConds = 0
	if isDiagnosticStmt(node) {
		d.clearPending = false
		return
	}
	d.clearPending = !usesTables(node)
	if !d.clearPending {
		d.clear()
	}
}

// beginFailedParse starts the diagnostics of text that did not parse:
// MySQL clears the area and records the syntax error.
func (s *Session) beginFailedParse() {
	s.diag.stmtConds = 0
	s.diag.clearPending = true
}

// addWarnings records notes and warnings of the running statement.
func (s *Session) addWarnings(ws ...error) {
	if len(ws) == 0 {
		return
	}
	limit := s.maxErrorCount()
	for _, w := range ws {
		s.addCondition(condition{err: w}, limit)
	}
}

// addError records the error a statement failed with.
func (s *Session) addError(err error) {
	if err == nil {
		return
	}
	se := errno.ToSQLError(err)
	// Nested entry points (EXECUTE runs ExecutePrepared) report the same
	// error on their way out: record it once.
	if d := &s.diag; d.stmtConds > 0 && d.errors > 0 && len(d.conds) > 0 {
		if last := d.conds[len(d.conds)-1]; last.error && last.err == error(se) {
			return
		}
	}
	s.addCondition(condition{err: se, error: true}, s.maxErrorCount())
}

// addCondition records c, keeping at most limit conditions.
func (s *Session) addCondition(c condition, limit int) {
	d := &s.diag
	if d.clearPending {
		d.clear()
		d.clearPending = false
	}
	d.total++
	d.stmtConds++
	if c.error {
		d.errors++
	}
	if len(d.conds) < limit {
		d.conds = append(d.conds, c)
	}
}

// maxErrorCount is max_error_count: how many conditions are kept.
func (s *Session) maxErrorCount() int {
	v, _ := s.getSysVar("max_error_count", false)
	n, err := strconv.Atoi(v)
	if err != nil {
		return 1024
	}
	return n
}

func isDiagnosticStmt(node ast.StmtNode) bool {
	x, ok := node.(*ast.ShowStmt)
	return ok && (x.Tp == ast.ShowWarnings || x.Tp == ast.ShowErrors)
}

// usesTables reports whether a statement reads or writes a table (MySQL's
// test for clearing the diagnostics area at its start). SHOW statements
// read the data dictionary's tables in MySQL 8.0, so they count.
func usesTables(node ast.StmtNode) bool {
	if _, ok := node.(*ast.ShowStmt); ok {
		return true
	}
	var f tableFinder
	node.Accept(&f)
	return f.found
}

type tableFinder struct{ found bool }

func (f *tableFinder) Enter(n ast.Node) (ast.Node, bool) {
	if _, ok := n.(*ast.TableName); ok {
		f.found = true
	}
	return n, f.found
}

func (f *tableFinder) Leave(n ast.Node) (ast.Node, bool) { return n, true }

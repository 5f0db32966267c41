package session

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
)

// maxStmtDepth bounds how deeply a statement's syntax tree may nest
// (operands of 1+1+..., nested parentheses, functions, subqueries). Every
// stage after the parser (AST walks, planning, expression building and
// evaluation, executor construction) recurses once or a few times per
// level, and Go ends the whole process when a goroutine's stack passes its
// limit, so a statement nested deeper than this is refused before any of
// them runs, as MySQL refuses it with 1436 when its thread stack would
// overrun. The bound is well above what generated SQL uses (a 5000-term
// OR chain is 5000 deep) and keeps every stage's stack in the tens of MB.
const maxStmtDepth = 10000

// depthGuard is an AST visitor that stops descending past maxStmtDepth,
// so its own recursion is bounded too.
type depthGuard struct {
	depth, limit int
	tooDeep      bool
}

func (g *depthGuard) Enter(n ast.Node) (ast.Node, bool) {
	g.depth++
	if g.depth > g.limit {
		g.tooDeep = true
		return n, true
	}
	return n, g.tooDeep
}

func (g *depthGuard) Leave(n ast.Node) (ast.Node, bool) {
	g.depth--
	return n, true
}

// errTooDeep is MySQL's code for a statement its stack cannot take.
func errTooDeep(limit int) error {
	return errno.New(mysql.ErrStackOverrunNeedMore,
		"Thread stack overrun: the statement nests deeper than %d levels; simplify it (for example use IN (...) for long OR chains)", limit)
}

// checkDepth refuses statements nested deeper than maxStmtDepth.
func checkDepth(stmts []ast.StmtNode) error {
	for _, st := range stmts {
		g := &depthGuard{limit: maxStmtDepth}
		st.Accept(g)
		if g.tooDeep {
			return errTooDeep(maxStmtDepth)
		}
	}
	return nil
}

// The parser itself walks the whole tree once (to set expression flags)
// before it returns, recursing per level, so a statement too deep for the
// stack must be refused before it is parsed. maxTextDepth bounds a cheap
// over-estimate of the nesting from the text (see textDepth); it is
// several times maxStmtDepth because one syntax level takes up to ~3
// counted words or operator characters (NOT BETWEEN x AND y, <=>), so
// statements the AST check would allow pass it, while what it lets through
// stays shallow enough for the parser's walk.
const maxTextDepth = 5 * maxStmtDepth

// wordOperators are the keywords that add a level to an expression.
var wordOperators = map[string]bool{
	"AND": true, "OR": true, "XOR": true, "NOT": true, "DIV": true, "MOD": true,
	"CASE": true, "WHEN": true, "THEN": true, "ELSE": true, "BETWEEN": true,
	"LIKE": true, "REGEXP": true, "RLIKE": true, "IS": true, "IN": true,
	"SELECT": true, "BINARY": true, "INTERVAL": true, "COLLATE": true,
	"JOIN": true, "STRAIGHT_JOIN": true, "UNION": true, "EXCEPT": true, "INTERSECT": true,
}

// tableListWords start (true) or end (false) a list of tables, whose
// commas join (FROM t1, t2, ... is a left-deep join tree).
var tableListWords = map[string]bool{
	"FROM": true, "UPDATE": true, "USING": true,
	"WHERE": false, "SET": false, "GROUP": false, "HAVING": false, "ORDER": false,
	"LIMIT": false, "WINDOW": false, "UNION": false, "EXCEPT": false, "INTERSECT": false,
	"FOR": false, "LOCK": false, "INTO": false, "VALUES": false,
}

// textDepth over-estimates how deeply sql nests: at each parenthesis level
// it counts the operators since the last comma (a left-deep chain such as
// 1+1+... nests once per operator), and adds the levels around it. String
// literals, quoted identifiers and comments are skipped. It stops counting
// once the estimate passes limit.
func textDepth(sql string, limit int) int {
	runs := []int{0}        // operators counted at each open parenthesis level
	tables := []bool{false} // whether each level is in a list of tables
	sum, best := 0, 0       // sum of runs plus open levels; its maximum
	note := func() {
		if sum > best {
			best = sum
		}
	}
	for i := 0; i < len(sql) && best <= limit; {
		c := sql[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			i = skipQuoted(sql, i)
		case c == '#' || (c == '-' && i+2 < len(sql) && sql[i+1] == '-' && (sql[i+2] == ' ' || sql[i+2] == '\t' || sql[i+2] == '\n')):
			for i < len(sql) && sql[i] != '\n' {
				i++
			}
		case c == '/' && i+2 < len(sql) && sql[i+1] == '*' && (sql[i+2] == '!' || sql[i+2] == '+' || sql[i+2] == 'T'):
			// Executable comments and hints hold SQL the parser reads:
			// scan their contents (the closing */ counts once, harmlessly).
			i += 3
		case c == '/' && i+1 < len(sql) && sql[i+1] == '*':
			end := strings.Index(sql[i+2:], "*/")
			if end < 0 {
				return best
			}
			i += end + 4
		case c == '(':
			runs = append(runs, 0)
			tables = append(tables, false)
			sum++
			note()
			i++
		case c == ')':
			if len(runs) > 1 {
				sum -= runs[len(runs)-1] + 1
				runs = runs[:len(runs)-1]
				tables = tables[:len(tables)-1]
			}
			i++
		case c == ',' && tables[len(tables)-1]:
			// Tables listed with commas form a left-deep join tree.
			runs[len(runs)-1]++
			sum++
			note()
			i++
		case c == ',' || c == ';':
			top := len(runs) - 1
			sum -= runs[top]
			runs[top] = 0
			if c == ';' {
				runs, tables, sum = runs[:1], tables[:1], 0
				runs[0], tables[0] = 0, false
			}
			i++
		case strings.IndexByte("+-*/%=<>!&|^~", c) >= 0:
			// Each character: a run of them can be as many unary operators.
			i++
			runs[len(runs)-1]++
			sum++
			note()
		case c == '_' || c == '$' || c >= 0x80 || 'a' <= c|0x20 && c|0x20 <= 'z' || '0' <= c && c <= '9':
			j := i
			for j < len(sql) && (sql[j] == '_' || sql[j] == '$' || sql[j] >= 0x80 || 'a' <= sql[j]|0x20 && sql[j]|0x20 <= 'z' || '0' <= sql[j] && sql[j] <= '9' || sql[j] == '.') {
				j++
			}
			if j-i <= 13 {
				w := strings.ToUpper(sql[i:j])
				if wordOperators[w] {
					runs[len(runs)-1]++
					sum++
					note()
				}
				if t, ok := tableListWords[w]; ok {
					tables[len(tables)-1] = t
				}
			}
			i = j
		default:
			i++
		}
	}
	return best
}

// skipQuoted returns the index after the quoted string starting at i
// (doubled quotes and backslash escapes stay inside).
func skipQuoted(sql string, i int) int {
	q := sql[i]
	for i++; i < len(sql); i++ {
		switch sql[i] {
		case '\\':
			if q != '`' {
				i++
			}
		case q:
			if i+1 < len(sql) && sql[i+1] == q {
				i++
				continue
			}
			return i + 1
		}
	}
	return i
}

package session

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/embedded"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/types"
)

// kindLedger is one ledger seen through int64 keys, named by the parser
// type its keys are constants of.
type kindLedger struct {
	parserType string
	entries    map[int64]ledgerEntry
}

func asInt64[K ~int | ~int8 | ~uint8 | ~int32 | ~uint64](m map[K]ledgerEntry) map[int64]ledgerEntry {
	out := map[int64]ledgerEntry{}
	for k, e := range m {
		out[int64(k)] = e
	}
	return out
}

func kindLedgers() []kindLedger {
	return []kindLedger{
		{"TableOptionType", asInt64(tableOptionLedger)},
		{"ColumnOptionType", asInt64(columnOptionLedger)},
		{"ConstraintType", asInt64(constraintLedger)},
		{"AlterTableType", asInt64(alterTableLedger)},
		{"ColumnPositionType", asInt64(columnPositionLedger)},
		{"DatabaseOptionType", asInt64(databaseOptionLedger)},
		{"IndexKeyType", asInt64(indexKeyTypeLedger)},
		{"IndexType", asInt64(indexTypeLedger)},
		{"IndexVisibility", asInt64(indexVisibilityLedger)},
		{"LockType", asInt64(ddlLockLedger)},
		{"AlgorithmType", asInt64(ddlAlgorithmLedger)},
		{"TemporaryKeyword", asInt64(temporaryLedger)},
		{"ViewAlgorithm", asInt64(viewAlgorithmLedger)},
		{"ViewSecurity", asInt64(viewSecurityLedger)},
		{"ViewCheckOption", asInt64(viewCheckLedger)},
		{"SelectLockType", asInt64(selectLockLedger)},
		{"SelectIntoType", asInt64(selectIntoLedger)},
		{"FlushStmtType", asInt64(flushLedger)},
		{"AdminStmtType", asInt64(adminLedger)},
		{"ShowStmtType", asInt64(showLedger)},
	}
}

// fieldLedgers are ledgers over a parser struct's fields.
func fieldLedgers() map[reflect.Type]map[string]ledgerEntry {
	return map[reflect.Type]map[string]ledgerEntry{
		reflect.TypeOf(ast.IndexOption{}):            indexOptionFieldLedger,
		reflect.TypeOf(ast.IndexPartSpecification{}): indexPartLedger,
		reflect.TypeOf(ast.SelectStmtOpts{}):         selectOptsLedger,
		reflect.TypeOf(ast.TableName{}):              tableNameLedger,
	}
}

// TestLedgerCoversParser fails when the parser can produce a statement,
// option or clause kind that the ledger does not judge, or when the ledger
// names one the parser no longer has.
func TestLedgerCoversParser(t *testing.T) {
	k := loadParserKinds(t)
	if len(k.stmts) < 50 {
		t.Fatalf("found only %d statement types in the parser's ast package: %v", len(k.stmts), k.stmts)
	}
	for _, name := range k.stmts {
		if _, ok := stmtLedger[name]; !ok {
			t.Errorf("statement ast.%s is not in stmtLedger", name)
		}
	}
	for name := range stmtLedger {
		if !contains(k.stmts, name) {
			t.Errorf("stmtLedger names ast.%s, which the parser does not have", name)
		}
	}
	for _, l := range kindLedgers() {
		consts := k.consts[l.parserType]
		if len(consts) == 0 {
			t.Errorf("the parser has no constants of ast.%s", l.parserType)
		}
		for v, names := range consts {
			if _, ok := l.entries[v]; !ok {
				t.Errorf("ast.%s %s (%d) is not in the ledger", l.parserType, strings.Join(names, "/"), v)
			}
		}
		for v := range l.entries {
			if _, ok := consts[v]; !ok {
				t.Errorf("the ledger of ast.%s has value %d, which the parser does not", l.parserType, v)
			}
		}
	}
	for tp, l := range fieldLedgers() {
		for i := 0; i < tp.NumField(); i++ {
			f := tp.Field(i)
			if !f.IsExported() || f.Anonymous {
				continue
			}
			if _, ok := l[f.Name]; !ok {
				t.Errorf("field %s of ast.%s is not in the ledger", f.Name, tp.Name())
			}
		}
		for name := range l {
			if _, ok := tp.FieldByName(name); !ok {
				t.Errorf("the ledger of ast.%s names field %s, which it does not have", tp.Name(), name)
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func isCode(err error, code uint16) bool {
	var se *errno.SQLError
	return errors.As(err, &se) && se.Code == code
}

// ledgerSession is a root session in database test on a fresh store.
func ledgerSession(t *testing.T) Conn {
	t.Helper()
	store, err := embedded.Open(t.TempDir(), embedded.Options{NoSync: true, BlockCacheSize: 8 << 20, MemTableSize: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	b, err := NewBackend(store, Config{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.NewSession(context.Background(), "root", "localhost", "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func execAll(ctx context.Context, s Conn, sql string) error {
	rss, err := s.Execute(ctx, sql)
	for _, rs := range rss {
		if rs == nil {
			continue
		}
		var rows []types.Row
		for {
			if e := rs.Next(ctx, &rows); e != nil {
				if err == nil {
					err = e
				}
				break
			}
			if len(rows) == 0 {
				break
			}
		}
		rs.Close()
	}
	return err
}

// resetLedgerSchema recreates table t and drops what examples create.
const resetLedgerSchema = "ROLLBACK; SET SESSION transaction_read_only = OFF; USE test; DROP TABLE IF EXISTS t, t_opt, t_col, t_con, t_idx, t_new, t_tmp, t_part; " +
	"DROP VIEW IF EXISTS v_ledger, v_alg, v_sec, v_sec2, v_chk, v_chk2; DROP DATABASE IF EXISTS d_opt; DROP DATABASE IF EXISTS ledger_db; " +
	"DROP USER IF EXISTS ledger_u, ledger_v; " +
	"CREATE TABLE t (a INT PRIMARY KEY, b INT, s VARCHAR(20))"

type ledgerCase struct {
	name    string
	sql     string
	refused bool
}

func ledgerCases() []ledgerCase {
	var cases []ledgerCase
	add := func(name string, e ledgerEntry) {
		if e.example != "" {
			cases = append(cases, ledgerCase{name: name, sql: e.example, refused: e.support == refused})
		}
		if e.refusedExample != "" {
			cases = append(cases, ledgerCase{name: name + " (refused value)", sql: e.refusedExample, refused: true})
		}
	}
	for name, e := range stmtLedger {
		add("statement "+name, e)
	}
	for _, l := range kindLedgers() {
		for v, e := range l.entries {
			add(fmt.Sprintf("%s %d", l.parserType, v), e)
		}
	}
	for tp, l := range fieldLedgers() {
		for f, e := range l {
			add(tp.Name()+"."+f, e)
		}
	}
	for name, e := range clauseLedger {
		add(name, e)
	}
	sort.Slice(cases, func(i, j int) bool { return cases[i].name < cases[j].name })
	return cases
}

// TestLedgerExamples runs every example through a real session: a refused
// kind must fail with 1235 and an accepted one must succeed.
func TestLedgerExamples(t *testing.T) {
	ctx := context.Background()
	s := ledgerSession(t)
	for _, c := range ledgerCases() {
		if err := execAll(ctx, s, resetLedgerSchema); err != nil {
			t.Fatalf("reset before %s: %v", c.name, err)
		}
		err := execAll(ctx, s, c.sql)
		switch {
		case c.refused && !isCode(err, mysql.ErrNotSupportedYet):
			t.Errorf("%s: %q gave %v, want error 1235", c.name, c.sql, err)
		case !c.refused && err != nil:
			t.Errorf("%s: %q failed: %v", c.name, c.sql, err)
		}
	}
}

// TestLedgerEntriesAreWellFormed: each entry says why, implemented ones
// name a test that exists, and refused ones mostly carry an example.
func TestLedgerEntriesAreWellFormed(t *testing.T) {
	check := func(name string, e ledgerEntry) {
		if e.note == "" {
			t.Errorf("%s: no note", name)
		}
		switch e.support {
		case implemented:
			path := "../" + e.note
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s: covering test %s: %v", name, e.note, err)
			}
		case noEffect:
			if e.example == "" {
				t.Errorf("%s: accepted without effect but no example shows it is accepted", name)
			}
		case refused, notAKind:
		default:
			t.Errorf("%s: no support class", name)
		}
	}
	for name, e := range stmtLedger {
		check(name, e)
	}
	for _, l := range kindLedgers() {
		for v, e := range l.entries {
			check(fmt.Sprintf("%s %d", l.parserType, v), e)
		}
	}
	for tp, l := range fieldLedgers() {
		for f, e := range l {
			check(tp.Name()+"."+f, e)
		}
	}
	for name, e := range clauseLedger {
		check(name, e)
	}
}

func queryStrings(t *testing.T, s Conn, sql string) [][]string {
	t.Helper()
	ctx := context.Background()
	rss, err := s.Execute(ctx, sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	var out [][]string
	for _, rs := range rss {
		if rs == nil {
			continue
		}
		var rows []types.Row
		for {
			if err := rs.Next(ctx, &rows); err != nil {
				t.Fatalf("%s: %v", sql, err)
			}
			if len(rows) == 0 {
				break
			}
			for _, r := range rows {
				var line []string
				for _, d := range r {
					line = append(line, string(d.AppendText(nil)))
				}
				out = append(out, line)
			}
		}
		rs.Close()
	}
	return out
}

// TestLedgerAcceptedKindsTakeEffect covers the entries whose covering
// test is this file: options that were accepted and ignored before.
func TestLedgerAcceptedKindsTakeEffect(t *testing.T) {
	ctx := context.Background()
	s := ledgerSession(t)
	mustExec := func(sql string) {
		t.Helper()
		if err := execAll(ctx, s, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	want := func(sql, expect string) {
		t.Helper()
		var lines []string
		for _, r := range queryStrings(t, s, sql) {
			lines = append(lines, strings.Join(r, "|"))
		}
		if got := strings.Join(lines, "\n"); got != expect {
			t.Errorf("%s:\n got %q\nwant %q", sql, got, expect)
		}
	}

	// AUTO_INCREMENT=N: the first id is N.
	mustExec("CREATE TABLE ai (id INT AUTO_INCREMENT PRIMARY KEY, v INT) AUTO_INCREMENT=100")
	mustExec("INSERT INTO ai (v) VALUES (1), (2)")
	want("SELECT id FROM ai ORDER BY id", "100\n101")

	// The table's COLLATE reaches columns without their own.
	mustExec("CREATE TABLE ci (a INT PRIMARY KEY, s VARCHAR(5), b VARCHAR(5) COLLATE utf8mb4_bin) DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci")
	mustExec("INSERT INTO ci VALUES (1, 'abc', 'abc')")
	want("SELECT s = 'ABC', b = 'ABC' FROM ci", "1|0")

	// ADD COLUMN keeps its COMMENT.
	mustExec("ALTER TABLE ci ADD COLUMN c INT COMMENT 'the c'")
	create := queryStrings(t, s, "SHOW CREATE TABLE ci")[0][1]
	if !strings.Contains(create, "COMMENT 'the c'") {
		t.Errorf("SHOW CREATE TABLE after ADD COLUMN ... COMMENT:\n%s", create)
	}

	// USING HASH: a BTREE with Note 3502, as InnoDB.
	mustExec("CREATE TABLE h (a INT, KEY (a) USING HASH)")
	want("SHOW WARNINGS", "Note|3502|This storage engine does not support the HASH index algorithm, storage engine default was used instead.")

	// INSERT DELAYED runs as INSERT with warning 3005.
	mustExec("INSERT DELAYED INTO ai (v) VALUES (3)")
	want("SHOW WARNINGS", "Warning|3005|INSERT DELAYED is no longer supported. The statement was converted to INSERT.")
	want("SELECT COUNT(*) FROM ai", "3")

	// SQL_NO_CACHE warns 1681 (MySQL 8 has no query cache).
	want("SELECT SQL_NO_CACHE COUNT(*) FROM ai", "3")
	want("SHOW WARNINGS", "Warning|1681|'SQL_NO_CACHE' is deprecated and will be removed in a future release.")
	// ... and only it: subqueries and union arms carry no SQL_CACHE flag
	// (the statement reads a table, so it clears the last one's warnings).
	want("SELECT (SELECT 1) UNION SELECT a FROM (SELECT COUNT(*) AS a FROM ai) x", "1\n3")
	want("SHOW WARNINGS", "")

	// An index hint naming no index of the table is 1176.
	err := execAll(ctx, s, "SELECT * FROM ai FORCE INDEX (nope)")
	if !isCode(err, mysql.ErrKeyDoesNotExist) {
		t.Errorf("FORCE INDEX (nope): %v, want 1176", err)
	}
	want("SELECT COUNT(*) FROM ai USE INDEX (PRIMARY)", "3")

	// READ COMMITTED is refused, REPEATABLE READ kept, whichever way set.
	for _, sql := range []string{
		"SET TRANSACTION ISOLATION LEVEL READ COMMITTED",
		"SET SESSION transaction_isolation = 'READ-UNCOMMITTED'",
		"SET GLOBAL TRANSACTION ISOLATION LEVEL READ COMMITTED",
	} {
		if err := execAll(ctx, s, sql); !isCode(err, mysql.ErrNotSupportedYet) {
			t.Errorf("%s: %v, want 1235", sql, err)
		}
	}
	mustExec("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
	want("SELECT @@transaction_isolation", "REPEATABLE-READ")

	// A prepared statement is judged at PREPARE (its executions reuse a
	// plan and skip the ledger).
	if _, err := s.Prepare(ctx, "SELECT SQL_CALC_FOUND_ROWS a FROM ai"); !isCode(err, mysql.ErrNotSupportedYet) {
		t.Errorf("PREPARE of a refused kind: %v, want 1235", err)
	}
	if err := execAll(ctx, s, "PREPARE p FROM 'SELECT b FROM ai GROUP BY b WITH ROLLUP'"); !isCode(err, mysql.ErrNotSupportedYet) {
		t.Errorf("SQL PREPARE of a refused kind: %v, want 1235", err)
	}

	// SHOW of objects shoal cannot create lists none.
	for _, sql := range []string{"SHOW TRIGGERS", "SHOW PROCEDURE STATUS", "SHOW FUNCTION STATUS", "SHOW EVENTS"} {
		if rows := queryStrings(t, s, sql); len(rows) != 0 {
			t.Errorf("%s: %v", sql, rows)
		}
	}
}

package session

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/sql/catalog"
	"github.com/shoaldb/shoal/sql/executor"
	"github.com/shoaldb/shoal/sql/sqlmode"
	"github.com/shoaldb/shoal/types"
)

// SHOW CREATE TABLE / VIEW / DATABASE print DDL that parses back to the
// same object and to nothing else: identifiers go through
// executor.QuoteIdent (backticks, ` doubled; only where needed when
// sql_quote_show_create = 0) and string literals through
// executor.QuoteString, as MySQL does, so a dump replayed from this text
// cannot run statements smuggled in a name, a default or a comment.

// quoteShowCreate reports sql_quote_show_create (default 1).
func (s *Session) quoteShowCreate() bool {
	v, err := s.getSysVar("sql_quote_show_create", false)
	return err != nil || !(v == "0" || strings.EqualFold(v, "OFF"))
}

// showCreateQuoter quotes names for SHOW CREATE: always unless
// sql_quote_show_create = 0, in double quotes under ANSI_QUOTES (MySQL).
func (s *Session) showCreateQuoter() func(string) string {
	always, char := s.quoteShowCreate(), byte('`')
	if s.sqlMode().Has(sqlmode.ANSIQuotes) {
		char = '"'
	}
	return func(name string) string { return executor.QuoteIdentWith(name, always, char) }
}

func (s *Session) showCreateTableOrView(wantView bool, db string, t *catalog.TableInfo) (ResultSet, error) {
	quote := s.showCreateQuoter()
	if t.View != "" {
		return &staticResultSet{fields: stringFields("View", "Create View", "character_set_client", "collation_connection"),
			rows: []types.Row{{s2d(t.Name), s2d(showCreateView(t, quote, s.sqlMode().Has(sqlmode.ANSIQuotes))), s2d("utf8mb4"), s2d("utf8mb4_bin")}}}, nil
	}
	if wantView {
		return nil, errno.New(mysql.ErrWrongObject, "'%s.%s' is not VIEW", db, t.Name)
	}
	return &staticResultSet{fields: stringFields("Table", "Create Table"), rows: []types.Row{{s2d(t.Name), s2d(showCreateTable(t, quote, !s.sqlMode().Has(sqlmode.ANSI)))}}}, nil
}

func (s *Session) showCreateDatabase(is *catalog.InfoSchema, x *ast.ShowStmt) (ResultSet, error) {
	db := is.DB(x.DBName)
	if db == nil {
		return nil, errno.NewStd(mysql.ErrBadDB, x.DBName)
	}
	ifNotExists := ""
	if x.IfNotExists {
		ifNotExists = "/*!32312 IF NOT EXISTS*/ "
	}
	text := fmt.Sprintf("CREATE DATABASE %s%s /*!40100 DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin */",
		ifNotExists, s.showCreateQuoter()(db.Name))
	return &staticResultSet{fields: stringFields("Database", "Create Database"), rows: []types.Row{{s2d(db.Name), s2d(text)}}}, nil
}

func showCreateView(t *catalog.TableInfo, q func(string) string, ansiQuotes bool) string {
	var b strings.Builder
	b.WriteString("CREATE VIEW ")
	b.WriteString(q(t.Name))
	if len(t.ViewCols) > 0 {
		cols := make([]string, len(t.ViewCols))
		for i, c := range t.ViewCols {
			cols[i] = q(c)
		}
		b.WriteString(" (" + strings.Join(cols, ",") + ")")
	}
	// The SELECT is kept as the parser restored it at CREATE VIEW, names in
	// backticks and strings escaped; under ANSI_QUOTES it is restored again
	// with names in double quotes, as MySQL prints it then.
	b.WriteString(" AS ")
	b.WriteString(viewSelectText(t.View, ansiQuotes))
	return b.String()
}

func viewSelectText(stored string, ansiQuotes bool) string {
	if !ansiQuotes {
		return stored
	}
	stmts, _, err := parser.New().ParseSQL(stored)
	if err != nil || len(stmts) != 1 {
		return stored
	}
	var sb strings.Builder
	flags := format.RestoreStringSingleQuotes | format.RestoreKeyWordUppercase | format.RestoreNameDoubleQuotes | format.RestoreStringEscapeBackslash
	if err := stmts[0].Restore(format.NewRestoreCtx(flags, &sb)); err != nil {
		return stored
	}
	return sb.String()
}

// showCreateTable prints t's definition; tableOptions false (sql_mode
// ANSI, MySQL's "foreign DB mode") leaves out ENGINE, the character set
// and COMMENT after the closing parenthesis.
func showCreateTable(t *catalog.TableInfo, q func(string) string, tableOptions bool) string {
	var b strings.Builder
	kind := "TABLE"
	if t.Temporary {
		kind = "TEMPORARY TABLE"
	}
	fmt.Fprintf(&b, "CREATE %s %s (\n", kind, q(t.Name))
	var lines []string
	for _, c := range t.PublicColumns() {
		ft := &c.Type
		l := fmt.Sprintf("  %s %s", q(c.Name), showColumnType(ft))
		if ft.IsString() && ft.Charset != "binary" && ft.Tp != mysql.TypeNewDecimal && ft.Collate != "" && ft.Collate != "utf8mb4_bin" {
			l += " COLLATE " + ft.Collate
		}
		if c.IsGenerated() {
			l += " GENERATED ALWAYS AS (" + c.GeneratedExpr + ")"
			if c.GeneratedStored {
				l += " STORED"
			} else {
				l += " VIRTUAL"
			}
		}
		if ft.NotNull() {
			l += " NOT NULL"
		} else if ft.Tp == mysql.TypeTimestamp {
			// MySQL spells NULL out for TIMESTAMP, once NOT NULL by default.
			l += " NULL"
		}
		if c.AutoIncrement {
			l += " AUTO_INCREMENT"
		}
		if c.IsGenerated() {
			// A generated column has no default.
		} else if c.DefaultIsExpr && c.Default != nil {
			l += " DEFAULT (" + *c.Default + ")"
		} else if c.Default != nil {
			if *c.Default == "CURRENT_TIMESTAMP" {
				l += " DEFAULT " + executor.CurrentTimestampText(ft)
			} else {
				l += " DEFAULT " + executor.QuoteString(*c.Default)
			}
		} else if !ft.NotNull() && !c.NoDefault && !c.AutoIncrement && ft.Tp != mysql.TypeBlob && ft.Tp != mysql.TypeTinyBlob && ft.Tp != mysql.TypeMediumBlob && ft.Tp != mysql.TypeLongBlob {
			l += " DEFAULT NULL"
		}
		if c.OnUpdate {
			l += " ON UPDATE " + executor.CurrentTimestampText(ft)
		}
		if c.Comment != "" {
			l += " COMMENT " + executor.QuoteString(c.Comment)
		}
		lines = append(lines, l)
	}
	for _, idx := range t.PublicIndices() {
		cols := make([]string, len(idx.Columns))
		for i, ic := range idx.Columns {
			cols[i] = q(ic.Name)
			if ic.Length > 0 {
				cols[i] += fmt.Sprintf("(%d)", ic.Length)
			}
		}
		switch {
		case idx.Primary:
			l := "  PRIMARY KEY (" + strings.Join(cols, ",") + ")"
			if t.PKIsHandle || t.CommonHandle {
				l += " /*T![clustered_index] CLUSTERED */"
			} else {
				l += " /*T![clustered_index] NONCLUSTERED */"
			}
			lines = append(lines, l)
		case idx.Unique:
			lines = append(lines, fmt.Sprintf("  UNIQUE KEY %s (%s)", q(idx.Name), strings.Join(cols, ",")))
		default:
			lines = append(lines, fmt.Sprintf("  KEY %s (%s)", q(idx.Name), strings.Join(cols, ",")))
		}
	}
	lines = append(lines, showChecks(t, q)...)
	b.WriteString(strings.Join(lines, ",\n"))
	b.WriteString("\n)")
	if !tableOptions {
		return b.String()
	}
	b.WriteString(" ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin")
	if t.Comment != "" {
		b.WriteString(" COMMENT=" + executor.QuoteString(t.Comment))
	}
	return b.String()
}

// showChecks prints the CHECK constraints as MySQL 8 does: after the
// keys, ordered by name, NOT ENFORCED in a versioned comment.
func showChecks(t *catalog.TableInfo, q func(string) string) []string {
	checks := slices.Clone(t.Checks)
	slices.SortFunc(checks, func(a, b *catalog.CheckInfo) int {
		return strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name))
	})
	var lines []string
	for _, ck := range checks {
		l := "  CONSTRAINT " + q(ck.Name) + " CHECK (" + ck.Expr + ")"
		if ck.NotEnforced {
			l += " /*!80016 NOT ENFORCED */"
		}
		lines = append(lines, l)
	}
	return lines
}

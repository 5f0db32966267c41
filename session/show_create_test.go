package session

import (
	"context"
	"testing"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/shoaldb/shoal/types"
)

// showCreateText runs a SHOW CREATE statement and returns its second column.
func showCreateText(t *testing.T, s *Session, sql string) string {
	t.Helper()
	rss, err := s.Execute(context.Background(), sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	defer rss[0].Close()
	var rows []types.Row
	if err := rss[0].Next(context.Background(), &rows); err != nil || len(rows) != 1 {
		t.Fatalf("%s: %v, %d rows", sql, err, len(rows))
	}
	return rows[0][1].String()
}

// parsesToOne checks that text is exactly one statement of the wanted kind.
func parsesToOne[T ast.StmtNode](t *testing.T, text string) {
	t.Helper()
	stmts, _, err := parser.New().ParseSQL(text)
	if err != nil {
		t.Fatalf("SHOW CREATE text does not parse: %v\n%s", err, text)
	}
	if len(stmts) != 1 {
		t.Fatalf("SHOW CREATE text is %d statements:\n%s", len(stmts), text)
	}
	if _, ok := stmts[0].(T); !ok {
		t.Fatalf("SHOW CREATE text is a %T:\n%s", stmts[0], text)
	}
}

// SHOW CREATE TABLE / VIEW / DATABASE text, replayed in another database
// (as a dump restore does), is one statement that recreates the same
// object, however hostile its names, defaults and comments.
func TestShowCreateReplaysToTheSameObject(t *testing.T) {
	_, p := openProbe(t)
	b := newNode(t, p, Config{})
	for _, quote := range []string{"1", "0"} {
		s := newSess(t, b)
		src, dst := "src"+quote, "dst"+quote
		mustExec(t, s, "SET sql_quote_show_create = "+quote)
		mustExec(t, s, "CREATE DATABASE "+src)
		mustExec(t, s, "CREATE DATABASE "+dst)
		mustExec(t, s, "USE "+src)
		mustExec(t, s, "CREATE TABLE `t` (`id` INT PRIMARY KEY)")
		mustExec(t, s, "CREATE TABLE `a``b` (`x`` INT); DROP TABLE t; --` VARCHAR(30) DEFAULT 'q''\\\\'' ; DROP TABLE t; -- ' "+
			"COMMENT 'c\\'); DROP TABLE t; --', `select` INT PRIMARY KEY, `1` ENUM('it''s', 'b\\\\s'), `é` INT COMMENT '\\n\\r\\0', "+
			"KEY `k``); DROP TABLE t; --` (`x`` INT); DROP TABLE t; --`(5))) COMMENT 'tab''le\\\\'")
		mustExec(t, s, "CREATE VIEW `v``); DROP TABLE t; --` AS SELECT `select` AS `s``q`, 'x''\\\\y' AS lit FROM `a``b`")
		table := showCreateText(t, s, "SHOW CREATE TABLE `a``b`")
		view := showCreateText(t, s, "SHOW CREATE VIEW `v``); DROP TABLE t; --`")
		database := showCreateText(t, s, "SHOW CREATE DATABASE "+src)
		parsesToOne[*ast.CreateTableStmt](t, table)
		parsesToOne[*ast.CreateViewStmt](t, view)
		parsesToOne[*ast.CreateDatabaseStmt](t, database)

		mustExec(t, s, "USE "+dst)
		mustExec(t, s, "CREATE TABLE `t` (`id` INT PRIMARY KEY)")
		mustExec(t, s, table)
		mustExec(t, s, view)
		if got := showCreateText(t, s, "SHOW CREATE TABLE `a``b`"); got != table {
			t.Errorf("quote=%s: replayed table differs:\n%s\nwant\n%s", quote, got, table)
		}
		if got := showCreateText(t, s, "SHOW CREATE VIEW `v``); DROP TABLE t; --`"); got != view {
			t.Errorf("quote=%s: replayed view differs:\n%s\nwant\n%s", quote, got, view)
		}
		mustExec(t, s, "DROP DATABASE "+src)
		mustExec(t, s, database)
		if got := showCreateText(t, s, "SHOW CREATE DATABASE "+src); got != database {
			t.Errorf("quote=%s: replayed database differs:\n%s\nwant\n%s", quote, got, database)
		}
		// Nothing else ran: the table named t is still there.
		mustExec(t, s, "SELECT * FROM "+dst+".t")
	}
}

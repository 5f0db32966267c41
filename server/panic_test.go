package server

import (
	"database/sql"
	"io"
	"log/slog"
	"testing"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/shoaldb/shoal/embedded"
	"github.com/shoaldb/shoal/session"
)

// TestPanicReleasesLocks: a statement that panics ends only its
// connection; the connection's open pessimistic transaction is rolled back,
// so another client can lock the same row at once, and the server serves on.
func TestPanicReleasesLocks(t *testing.T) {
	store, err := embedded.Open(t.TempDir(), embedded.Options{NoSync: true, BlockCacheSize: 8 << 20, MemTableSize: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	backend, err := session.NewBackend(store, session.Config{})
	if err != nil {
		t.Fatal(err)
	}
	session.SetStatementHookForTesting(func(n ast.StmtNode) {
		if _, ok := n.(*ast.DoStmt); ok {
			panic("injected panic")
		}
	})
	t.Cleanup(func() { session.SetStatementHookForTesting(nil) })
	srv := serveBackend(t, Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, backend, nil)
	dsn := "root@tcp(" + srv.Addr().String() + ")/test?timeout=10s&readTimeout=30s"
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	mustExec := func(c interface {
		Exec(string, ...any) (sql.Result, error)
	}, q string) {
		t.Helper()
		if _, err := c.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	mustExec(db, "CREATE TABLE t (id INT PRIMARY KEY, v INT)")
	mustExec(db, "INSERT INTO t VALUES (1, 1)")

	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	mustExec(tx, "UPDATE t SET v = 2 WHERE id = 1") // holds the row's lock
	if _, err := tx.Exec("DO 1"); err == nil {
		t.Fatal("the injected panic did not fail the statement")
	}
	_ = tx.Rollback()

	other, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	mustExec2 := func(q string) {
		t.Helper()
		if _, err := other.ExecContext(t.Context(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	mustExec2("SET innodb_lock_wait_timeout = 5")
	mustExec2("BEGIN")
	mustExec2("UPDATE t SET v = 3 WHERE id = 1") // 1205 if the lock were left
	mustExec2("COMMIT")
	var v int
	if err := other.QueryRowContext(t.Context(), "SELECT v FROM t WHERE id = 1").Scan(&v); err != nil || v != 3 {
		t.Fatalf("v %d err %v", v, err)
	}
}

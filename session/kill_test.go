package session_test

// Stopping work, over the MySQL protocol against an embedded store and a
// real protocol server on 127.0.0.1: SHOW PROCESSLIST and
// information_schema.PROCESSLIST, KILL QUERY / KILL CONNECTION,
// max_execution_time and its hint, SLEEP().

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/shoaldb/shoal/embedded"
	"github.com/shoaldb/shoal/server"
	"github.com/shoaldb/shoal/session"
)

// startKillServer serves an embedded store on a free loopback port and
// returns a DSN prefix for it.
func startKillServer(t *testing.T) (*server.Server, string) {
	t.Helper()
	store, err := embedded.Open(t.TempDir(), embedded.Options{NoSync: true, BlockCacheSize: 8 << 20, MemTableSize: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	b, err := session.NewBackend(store, session.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := server.New(server.Config{}, b)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return srv, "root@tcp(" + ln.Addr().String() + ")/test"
}

// conn opens one dedicated connection (a session) of db.
func killConn(t *testing.T, db *sql.DB) *sql.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func mustExec(t *testing.T, c *sql.Conn, q string, args ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.ExecContext(ctx, q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func connID(t *testing.T, c *sql.Conn) uint64 {
	t.Helper()
	var id uint64
	if err := c.QueryRowContext(context.Background(), "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

func mysqlErrNum(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

// waitForCommand waits (bounded) until connection id shows command cmd
// in information_schema.PROCESSLIST, and returns its INFO.
func waitForCommand(t *testing.T, c *sql.Conn, id uint64, cmd string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		var got string
		var info sql.NullString
		err := c.QueryRowContext(context.Background(), "SELECT COMMAND, INFO FROM information_schema.PROCESSLIST WHERE ID = ?", id).Scan(&got, &info)
		if err == nil && got == cmd {
			return info.String
		}
		if err != nil && err != sql.ErrNoRows {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("connection %d never showed command %s", id, cmd)
	return ""
}

// fillKillTable creates test.t with n rows.
func fillKillTable(t *testing.T, c *sql.Conn, n int) {
	t.Helper()
	mustExec(t, c, "CREATE TABLE t (id INT PRIMARY KEY, v INT)")
	var sb strings.Builder
	for i := 1; i <= n; i++ {
		if sb.Len() == 0 {
			sb.WriteString("INSERT INTO t VALUES ")
		} else {
			sb.WriteString(",")
		}
		fmt.Fprintf(&sb, "(%d,%d)", i, i)
		if i%500 == 0 || i == n {
			mustExec(t, c, sb.String())
			sb.Reset()
		}
	}
}

func TestProcessList(t *testing.T) {
	_, dsn := startKillServer(t)
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	a, b := killConn(t, db), killConn(t, db)
	idA, idB := connID(t, a), connID(t, b)

	long := "SELECT SLEEP(30) /* " + strings.Repeat("x", 120) + " */"
	done := make(chan error, 1)
	go func() {
		_, err := b.ExecContext(context.Background(), long)
		done <- err
	}()
	if info := waitForCommand(t, a, idB, "Query"); info != long {
		t.Fatalf("INFO = %q, want the whole statement", info)
	}

	rows, err := a.QueryContext(context.Background(), "SHOW PROCESSLIST")
	if err != nil {
		t.Fatal(err)
	}
	cols, _ := rows.Columns()
	if got := strings.Join(cols, ","); got != "Id,User,Host,db,Command,Time,State,Info" {
		t.Fatalf("columns %s", got)
	}
	seen := map[uint64]string{}
	for rows.Next() {
		var id uint64
		var user, host, command, state string
		var dbName, info sql.NullString
		var secs int64
		if err := rows.Scan(&id, &user, &host, &dbName, &command, &secs, &state, &info); err != nil {
			t.Fatal(err)
		}
		if user != "root" || dbName.String != "test" || !strings.HasPrefix(host, "127.0.0.1:") {
			t.Fatalf("row %d: user %q db %q host %q", id, user, dbName.String, host)
		}
		seen[id] = command + "|" + info.String
	}
	rows.Close()
	if got := seen[idA]; got != "Query|SHOW PROCESSLIST" {
		t.Fatalf("own row %q", got)
	}
	if got := seen[idB]; got != "Query|"+long[:100] {
		t.Fatalf("other row %q, want the first 100 characters", got)
	}

	// KILL QUERY: the SLEEP returns 1, as MySQL's does when it is all the
	// statement does; the session stays usable.
	mustExec(t, a, fmt.Sprintf("KILL QUERY %d", idB))
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("killed SLEEP: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("KILL QUERY did not stop SLEEP")
	}
	waitForCommand(t, a, idB, "Sleep")
	if got := connID(t, b); got != idB {
		t.Fatalf("session B now %d", got)
	}
}

func TestKillQueryAndConnection(t *testing.T) {
	_, dsn := startKillServer(t)
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	a, b, c := killConn(t, db), killConn(t, db), killConn(t, db)
	idB := connID(t, b)
	fillKillTable(t, a, 200)

	// A long scan killed: 1317, the session usable, its transaction open.
	mustExec(t, b, "BEGIN")
	mustExec(t, b, "UPDATE t SET v = v + 1 WHERE id = 1")
	done := make(chan error, 1)
	go func() {
		_, err := b.ExecContext(context.Background(), "SELECT SLEEP(0.05) FROM t")
		done <- err
	}()
	waitForCommand(t, a, idB, "Query")
	mustExec(t, a, fmt.Sprintf("KILL QUERY %d", idB))
	select {
	case err := <-done:
		if mysqlErrNum(err) != 1317 || !strings.Contains(err.Error(), "Query execution was interrupted") {
			t.Fatalf("killed scan: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("KILL QUERY did not stop the scan")
	}
	var v int
	if err := b.QueryRowContext(context.Background(), "SELECT v FROM t WHERE id = 1").Scan(&v); err != nil || v != 2 {
		t.Fatalf("after KILL QUERY the transaction reads v=%d, %v; want its own update (2)", v, err)
	}

	// KILL CONNECTION: the connection goes, its locks are released.
	mustExec(t, b, "SELECT * FROM t WHERE id = 2 FOR UPDATE")
	mustExec(t, a, fmt.Sprintf("KILL CONNECTION %d", idB))
	if _, err := b.ExecContext(context.Background(), "SELECT 1"); err == nil {
		t.Fatal("killed connection still answers")
	}
	mustExec(t, c, "SET innodb_lock_wait_timeout = 5")
	mustExec(t, c, "BEGIN")
	mustExec(t, c, "SELECT * FROM t WHERE id = 2 FOR UPDATE")
	if err := c.QueryRowContext(context.Background(), "SELECT v FROM t WHERE id = 1").Scan(&v); err != nil || v != 1 {
		t.Fatalf("the killed connection's update survived: v=%d, %v", v, err)
	}
	mustExec(t, c, "ROLLBACK")

	// Unknown thread; killing oneself.
	if _, err := a.ExecContext(context.Background(), "KILL 999999"); mysqlErrNum(err) != 1094 || !strings.Contains(err.Error(), "Unknown thread id: 999999") {
		t.Fatalf("KILL unknown: %v", err)
	}
	if _, err := a.ExecContext(context.Background(), fmt.Sprintf("KILL QUERY %d", connID(t, a))); mysqlErrNum(err) != 1317 {
		t.Fatalf("KILL QUERY of oneself: %v", err)
	}
	if got := connID(t, a); got == 0 {
		t.Fatal("session gone after KILL QUERY of itself")
	}
}

func TestKillInterruptsLockWait(t *testing.T) {
	_, dsn := startKillServer(t)
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	a, b := killConn(t, db), killConn(t, db)
	idB := connID(t, b)
	fillKillTable(t, a, 3)
	mustExec(t, a, "BEGIN")
	mustExec(t, a, "UPDATE t SET v = 10 WHERE id = 1")
	mustExec(t, b, "BEGIN")
	done := make(chan error, 1)
	go func() {
		_, err := b.ExecContext(context.Background(), "UPDATE t SET v = 20 WHERE id = 1")
		done <- err
	}()
	waitForCommand(t, a, idB, "Query")
	time.Sleep(100 * time.Millisecond) // let it reach the lock wait (either way it must fail with 1317)
	mustExec(t, a, fmt.Sprintf("KILL QUERY %d", idB))
	select {
	case err := <-done:
		if mysqlErrNum(err) != 1317 {
			t.Fatalf("killed lock wait: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("KILL QUERY did not end the lock wait")
	}
	mustExec(t, a, "COMMIT")
	mustExec(t, b, "UPDATE t SET v = 30 WHERE id = 1")
	mustExec(t, b, "COMMIT")
}

func TestMaxExecutionTime(t *testing.T) {
	_, dsn := startKillServer(t)
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	a := killConn(t, db)
	fillKillTable(t, a, 200)
	check := func(q string) {
		t.Helper()
		_, err := a.ExecContext(context.Background(), q)
		if mysqlErrNum(err) != 3024 || !strings.Contains(err.Error(), "maximum statement execution time exceeded") {
			t.Fatalf("%s: %v, want 3024", q, err)
		}
	}
	check("SELECT /*+ MAX_EXECUTION_TIME(100) */ SLEEP(0.05) FROM t")
	mustExec(t, a, "SET max_execution_time = 100")
	check("SELECT SLEEP(0.05) FROM t")
	// Not a SELECT: not limited.
	mustExec(t, a, "DO SLEEP(0.3)")
	mustExec(t, a, "SET max_execution_time = 0")
	var n int
	if err := a.QueryRowContext(context.Background(), "SELECT COUNT(*) FROM t WHERE SLEEP(0.001) = 0").Scan(&n); err != nil || n != 200 {
		t.Fatalf("unlimited SELECT: %d, %v", n, err)
	}
}

// gone waits (bounded) until connection id is no longer listed.
func waitGone(t *testing.T, c *sql.Conn, id uint64, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		var n int
		if err := c.QueryRowContext(context.Background(), "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = ?", id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("connection %d still listed after %v", id, within)
}

func TestWaitTimeoutClosesIdleSession(t *testing.T) {
	_, dsn := startKillServer(t)
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	a, b := killConn(t, db), killConn(t, db)
	fillKillTable(t, a, 3)
	idB := connID(t, b)
	mustExec(t, b, "SET wait_timeout = 1")
	mustExec(t, b, "BEGIN")
	mustExec(t, b, "SELECT * FROM t WHERE id = 1 FOR UPDATE")
	waitGone(t, a, idB, 10*time.Second)
	_, err = b.ExecContext(context.Background(), "SELECT 1")
	if mysqlErrNum(err) != 4031 {
		t.Fatalf("next statement on a session closed for inactivity: %v, want 4031", err)
	}
	// Its transaction was rolled back: the row lock is free.
	mustExec(t, a, "SET innodb_lock_wait_timeout = 5")
	mustExec(t, a, "BEGIN")
	mustExec(t, a, "SELECT * FROM t WHERE id = 1 FOR UPDATE")
	mustExec(t, a, "ROLLBACK")
	// A session that is not idle that long stays.
	var v string
	if err := a.QueryRowContext(context.Background(), "SELECT @@wait_timeout").Scan(&v); err != nil || v != "28800" {
		t.Fatalf("wait_timeout %q, %v", v, err)
	}
}

func TestClientDisconnectStopsStatement(t *testing.T) {
	_, dsn := startKillServer(t)
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	a, b := killConn(t, db), killConn(t, db)
	fillKillTable(t, a, 2000)
	idB := connID(t, b)
	// About 100 s of work unless it stops when its client goes.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := b.QueryContext(ctx, "SELECT SLEEP(0.05) FROM t")
		done <- err
	}()
	waitForCommand(t, a, idB, "Query")
	time.Sleep(100 * time.Millisecond) // past the disconnect watch's start
	cancel()                           // the driver closes the connection
	<-done
	waitGone(t, a, idB, 10*time.Second)
}

// TestGlobalKill: two SQL nodes share a store; KILL on one reaches a
// connection of the other (its id carries the other node's server id).
func TestGlobalKill(t *testing.T) {
	store, err := embedded.Open(t.TempDir(), embedded.Options{NoSync: true, BlockCacheSize: 8 << 20, MemTableSize: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	var dsns []string
	for range 2 {
		b, err := session.NewBackend(store, session.Config{SchemaSyncInterval: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(b.Close)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := server.New(server.Config{}, b)
		go srv.Serve(ln)
		t.Cleanup(func() { srv.Close() })
		dsns = append(dsns, "root@tcp("+ln.Addr().String()+")/test")
	}
	db1, err := sql.Open("mysql", dsns[0])
	if err != nil {
		t.Fatal(err)
	}
	defer db1.Close()
	db2, err := sql.Open("mysql", dsns[1])
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	a, b, watcher := killConn(t, db1), killConn(t, db2), killConn(t, db2)
	idA, idB := connID(t, a), connID(t, b)
	if idA>>32 == 0 || idB>>32 == 0 || idA>>32 == idB>>32 {
		t.Fatalf("connection ids %#x and %#x do not carry distinct server ids", idA, idB)
	}
	fillKillTable(t, a, 500)

	// KILL QUERY across nodes.
	done := make(chan error, 1)
	go func() {
		_, err := b.ExecContext(context.Background(), "SELECT SLEEP(0.05) FROM t")
		done <- err
	}()
	waitForCommand(t, watcher, idB, "Query") // listed on its own node only
	mustExec(t, a, fmt.Sprintf("KILL QUERY %d", idB))
	select {
	case err := <-done:
		if mysqlErrNum(err) != 1317 {
			t.Fatalf("remote KILL QUERY: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("remote KILL QUERY did not stop the query")
	}
	if got := connID(t, b); got != idB {
		t.Fatalf("session after remote KILL QUERY: %d", got)
	}

	// KILL CONNECTION across nodes.
	mustExec(t, a, fmt.Sprintf("KILL %d", idB))
	deadline := time.Now().Add(15 * time.Second)
	for {
		if _, err := b.ExecContext(context.Background(), "SELECT 1"); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("remote KILL CONNECTION did not end the connection")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestSleepArguments(t *testing.T) {
	_, dsn := startKillServer(t)
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c := killConn(t, db)
	for _, q := range []string{"SELECT SLEEP(-1)", "SELECT SLEEP(NULL)"} {
		if _, err := c.ExecContext(context.Background(), q); mysqlErrNum(err) != 1210 {
			t.Fatalf("strict %s: %v, want 1210", q, err)
		}
	}
	mustExec(t, c, "SET sql_mode = ''")
	if got := queryStrings(t, c, "SELECT SLEEP(-1)"); len(got) != 1 || got[0] != "0" {
		t.Fatalf("non-strict SLEEP(-1) = %v", got)
	}
	if got := queryStrings(t, c, "SHOW WARNINGS"); len(got) != 1 || got[0] != "Warning|1210|Incorrect arguments to sleep" {
		t.Fatalf("warnings %v", got)
	}
	if got := queryStrings(t, c, "SELECT SLEEP(0.01)"); got[0] != "0" {
		t.Fatalf("SLEEP(0.01) = %v", got)
	}
}

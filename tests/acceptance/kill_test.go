package acceptance

// Stopping work, with a real client against the real server: KILL QUERY
// and KILL CONNECTION from another connection, max_execution_time and its
// hint, wait_timeout, and a client that disconnects mid-query. Every wait
// is bounded.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

const (
	errQueryInterrupted = 1317 // ER_QUERY_INTERRUPTED, SQLSTATE 70100
	errMaxExecTime      = 3024 // ER_QUERY_TIMEOUT, SQLSTATE HY000
	errUnknownThread    = 1094 // ER_NO_SUCH_THREAD
	errIdleTimeout      = 4031 // ER_CLIENT_INTERACTION_TIMEOUT
)

// killRows is the table size: SELECT SLEEP(0.05) FROM t runs for minutes
// unless stopped.
const killRows = 2000

// waitProcess waits until connection id shows command cmd in the process
// list ("" means: until it is no longer listed).
func waitProcess(t *testing.T, s *session, id int64, cmd string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		var n int64
		var err error
		if cmd == "" {
			n, err = s.queryInt(fmt.Sprintf("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = %d", id))
			n = 1 - n
		} else {
			n, err = s.queryInt(fmt.Sprintf("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = %d AND COMMAND = '%s'", id, cmd))
		}
		if err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("connection %d never reached %q", id, cmd)
}

// runAsync runs q on s in the background; the result arrives on the
// channel.
func runAsync(s *session, q string) chan error {
	done := make(chan error, 1)
	go func() {
		_, err := s.exec(q)
		done <- err
	}()
	return done
}

func awaitErr(t *testing.T, done chan error, what string) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: the statement did not stop", what)
		return nil
	}
}

func TestStoppingWork(t *testing.T) {
	s := startServer(t)
	boot, err := s.Open("")
	if err != nil {
		t.Fatal(err)
	}
	openSession(t, boot, "boot").mustExec("CREATE DATABASE IF NOT EXISTS killtest")
	boot.Close()
	db, err := s.Open("killtest")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	admin := openSession(t, db, "admin")
	admin.mustExec("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
	for i := 0; i < killRows; i += 500 {
		var sb strings.Builder
		sb.WriteString("INSERT INTO t VALUES ")
		for j := i + 1; j <= i+500; j++ {
			if j > i+1 {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, "(%d,%d)", j, j)
		}
		admin.mustExec(sb.String())
	}

	t.Run("KillQuery", func(t *testing.T) {
		b := openSession(t, db, "b")
		id := b.mustInt("SELECT CONNECTION_ID()")
		b.mustExec("BEGIN")
		b.mustExec("UPDATE t SET v = -1 WHERE id = 1")
		done := runAsync(b, "SELECT SLEEP(0.05) FROM t")
		waitProcess(t, admin, id, "Query")
		admin.mustExec(fmt.Sprintf("KILL QUERY %d", id))
		if err := awaitErr(t, done, "KILL QUERY"); errNum(err) != errQueryInterrupted || errState(err) != "70100" {
			t.Fatalf("killed query: %v, want 1317 (70100)", err)
		}
		// The session is usable and its transaction still open.
		if v := b.mustInt("SELECT v FROM t WHERE id = 1"); v != -1 {
			t.Fatalf("after KILL QUERY the transaction reads %d", v)
		}
		b.mustExec("ROLLBACK")
	})

	t.Run("KillConnectionReleasesLocks", func(t *testing.T) {
		b, c := openSession(t, db, "b"), openSession(t, db, "c")
		id := b.mustInt("SELECT CONNECTION_ID()")
		b.mustExec("BEGIN")
		b.mustExec("SELECT * FROM t WHERE id = 2 FOR UPDATE")
		admin.mustExec(fmt.Sprintf("KILL CONNECTION %d", id))
		waitProcess(t, admin, id, "")
		if _, err := b.exec("SELECT 1"); err == nil {
			t.Fatal("killed connection still answers")
		}
		c.mustExec("SET innodb_lock_wait_timeout = 5")
		c.mustExec("BEGIN")
		c.mustExec("SELECT * FROM t WHERE id = 2 FOR UPDATE")
		c.mustExec("ROLLBACK")
		if _, err := admin.exec("KILL 987654"); errNum(err) != errUnknownThread {
			t.Fatalf("KILL of an unknown id: %v, want 1094", err)
		}
	})

	t.Run("MaxExecutionTime", func(t *testing.T) {
		if target != "shoal" {
			t.Skip("MariaDB names it max_statement_time")
		}
		b := openSession(t, db, "b")
		for _, q := range []string{"SELECT /*+ MAX_EXECUTION_TIME(200) */ SLEEP(0.05) FROM t", "SET max_execution_time = 200", "SELECT SLEEP(0.05) FROM t"} {
			_, err := b.exec(q)
			if strings.HasPrefix(q, "SET") {
				if err != nil {
					t.Fatal(err)
				}
				continue
			}
			if errNum(err) != errMaxExecTime || errState(err) != "HY000" {
				t.Fatalf("%s: %v, want 3024 (HY000)", q, err)
			}
		}
	})

	t.Run("WaitTimeout", func(t *testing.T) {
		b := openSession(t, db, "b")
		id := b.mustInt("SELECT CONNECTION_ID()")
		b.mustExec("SET wait_timeout = 2")
		b.mustExec("BEGIN")
		b.mustExec("SELECT * FROM t WHERE id = 3 FOR UPDATE")
		waitProcess(t, admin, id, "")
		_, err := b.exec("SELECT 1")
		if err == nil {
			t.Fatal("session idle past wait_timeout still answers")
		}
		if target == "shoal" && errNum(err) != errIdleTimeout {
			t.Fatalf("after wait_timeout: %v, want 4031", err)
		}
		c := openSession(t, db, "c")
		c.mustExec("SET innodb_lock_wait_timeout = 5")
		c.mustExec("BEGIN")
		c.mustExec("SELECT * FROM t WHERE id = 3 FOR UPDATE")
		c.mustExec("ROLLBACK")
	})

	t.Run("MemQuota", func(t *testing.T) {
		if target != "shoal" {
			t.Skip("tidb_mem_quota_query is TiDB's")
		}
		b := openSession(t, db, "b")
		b.mustExec("SET tidb_mem_quota_query = 65536") // a few hundred rows
		// The sort spills and still returns every row in order.
		ctx, cancel := context.WithTimeout(context.Background(), stmtTimeout)
		defer cancel()
		rows, err := b.c.QueryContext(ctx, "SELECT id FROM t ORDER BY v DESC, id")
		if err != nil {
			t.Fatal(err)
		}
		want := int64(killRows)
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
			if id != want {
				t.Fatalf("spilled sort returned id %d, want %d", id, want)
			}
			want--
		}
		if err := rows.Err(); err != nil || want != 0 {
			t.Fatalf("spilled sort ended at %d: %v", want, err)
		}
		rows.Close()
		// Hash aggregation spills too.
		if n := b.mustInt("SELECT COUNT(*) FROM (SELECT id, COUNT(*) FROM t GROUP BY id) x"); n != killRows {
			t.Fatalf("spilled aggregation: %d groups", n)
		}
		// A hash join partitions both sides to disk.
		if n := b.mustInt("SELECT COUNT(*) FROM t a JOIN t b ON a.v = b.v"); n != killRows {
			t.Fatalf("spilled join: %d rows", n)
		}
		if n := b.mustInt("SELECT COUNT(*) FROM t a LEFT JOIN t b ON a.v = b.v + 1"); n != killRows {
			t.Fatalf("spilled left join: %d rows", n)
		}
		// A nested-loop join's inner side cannot spill: 8175.
		if _, err := b.exec("SELECT COUNT(*) FROM t a JOIN t b ON a.v < b.v"); errNum(err) != 8175 {
			t.Fatalf("nested loop over the quota: %v, want 8175", err)
		}
		b.mustExec("SET tidb_mem_quota_query = DEFAULT")
		// Over the node's tidb_server_memory_limit the sort spills and the
		// nested loop fails with 8176.
		admin.mustExec("SET GLOBAL tidb_server_memory_limit = 65536")
		defer admin.mustExec("SET GLOBAL tidb_server_memory_limit = 0")
		if n := b.mustInt("SELECT COUNT(*) FROM (SELECT id FROM t ORDER BY v DESC LIMIT 5, 1990) x"); n != killRows-10 {
			t.Fatalf("sort under the server limit: %d rows", n)
		}
		if _, err := b.exec("SELECT COUNT(*) FROM t a JOIN t b ON a.v < b.v"); errNum(err) != 8176 {
			t.Fatalf("nested loop over the server limit: %v, want 8176", err)
		}
	})

	t.Run("ClientDisconnect", func(t *testing.T) {
		if target != "shoal" {
			t.Skip("MariaDB 10.11 runs the statement to its end after its client left")
		}
		b := openSession(t, db, "b")
		id := b.mustInt("SELECT CONNECTION_ID()")
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := b.c.ExecContext(ctx, "SELECT SLEEP(0.05) FROM t")
			done <- err
		}()
		waitProcess(t, admin, id, "Query")
		time.Sleep(200 * time.Millisecond)
		cancel() // the driver drops the connection
		awaitErr(t, done, "client disconnect")
		// The statement stops with its client: the connection leaves the
		// process list long before the statement's minutes of work.
		waitProcess(t, admin, id, "")
	})
}

package acceptance

// Transaction acceptance tests over the MySQL protocol: the bank invariant
// under concurrent pessimistic and optimistic transfers, lost updates on a
// hot row, lock wait timeouts, deadlock detection, SELECT ... FOR UPDATE
// (and NOWAIT), and snapshot isolation (repeatable reads, write skew
// allowed, write-write conflicts never lose an update).
//
// Every session is a dedicated connection (database/sql.Conn), so session
// variables and transactions stay on it. Every statement runs under a
// context deadline and every loop is bounded in time.

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoaldb/shoal/tests/testserver"
)

const (
	errLockWaitTimeout = 1205 // ER_LOCK_WAIT_TIMEOUT, SQLSTATE HY000
	errDeadlock        = 1213 // ER_LOCK_DEADLOCK, SQLSTATE 40001
	errWriteConflict   = 9007 // TiDB's write conflict (optimistic commit)
	errLockNowait      = 3572 // ER_LOCK_NOWAIT, SQLSTATE HY000
	stmtTimeout        = 30 * time.Second
)

// errNum returns the MySQL error number of err, or 0.
func errNum(err error) uint16 {
	if me := sqlErr(err); me != nil {
		return me.Number
	}
	return 0
}

// errState returns the SQLSTATE of err, or "".
func errState(err error) string {
	if me := sqlErr(err); me != nil {
		return string(me.SQLState[:])
	}
	return ""
}

// session is one client connection.
type session struct {
	t    *testing.T
	name string
	c    *sql.Conn
}

func openSession(t *testing.T, db *sql.DB, name string) *session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatalf("session %s: %v", name, err)
	}
	t.Cleanup(func() { c.Close() })
	return &session{t: t, name: name, c: c}
}

func (s *session) exec(q string) (int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), stmtTimeout)
	defer cancel()
	res, err := s.c.ExecContext(ctx, q)
	if err != nil {
		return 0, err
	}
	n, _ := res.RowsAffected()
	return n, nil
}

func (s *session) mustExec(q string) int64 {
	s.t.Helper()
	n, err := s.exec(q)
	if err != nil {
		s.t.Fatalf("session %s: %s: %v", s.name, q, err)
	}
	return n
}

// queryInt runs a query returning one integer (NULL reads as -1).
func (s *session) queryInt(q string) (int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), stmtTimeout)
	defer cancel()
	var v sql.NullInt64
	if err := s.c.QueryRowContext(ctx, q).Scan(&v); err != nil {
		return 0, err
	}
	if !v.Valid {
		return -1, nil
	}
	return v.Int64, nil
}

func (s *session) mustInt(q string) int64 {
	s.t.Helper()
	v, err := s.queryInt(q)
	if err != nil {
		s.t.Fatalf("session %s: %s: %v", s.name, q, err)
	}
	return v
}

// rollback ends whatever transaction the session has; an error here means
// the connection itself is unusable.
func (s *session) rollback() error {
	_, err := s.exec("ROLLBACK")
	return err
}

// txnSetup starts a server and creates database txn with the given DDL.
func txnSetup(t *testing.T, ddl ...string) (*testserver.Server, *sql.DB) {
	t.Helper()
	s := startServer(t)
	db, err := s.Open("")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxIdleConns(64)
	t.Cleanup(func() { db.Close() })
	mustExec(t, db, "CREATE DATABASE txn")
	db.Close()
	db, err = s.Open("txn")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxIdleConns(64)
	t.Cleanup(func() { db.Close() })
	for _, q := range ddl {
		mustExec(t, db, q)
	}
	return s, db
}

func requireShoal(t *testing.T, what string) {
	t.Helper()
	if target != "shoal" {
		t.Skipf("%s is specific to shoal/TiDB; target is %s", what, target)
	}
}

// adminCheck runs ADMIN CHECK TABLE on shoal (other targets lack it).
func adminCheck(t *testing.T, db *sql.DB, table string) {
	t.Helper()
	if target != "shoal" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rows, err := db.QueryContext(ctx, "ADMIN CHECK TABLE "+table)
	if err != nil {
		t.Errorf("ADMIN CHECK TABLE %s: %v", table, err)
		return
	}
	rows.Close()
}

// errorLog collects unexpected errors from goroutines, keeping the first few.
type errorLog struct {
	mu    sync.Mutex
	n     int
	first []string
}

func (l *errorLog) add(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n++
	if len(l.first) < 10 {
		l.first = append(l.first, fmt.Sprintf(format, args...))
	}
}

func (l *errorLog) report(t *testing.T, what string) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n > 0 {
		t.Errorf("%d %s; the first:\n  %s", l.n, what, strings.Join(l.first, "\n  "))
	}
}

// ---------------------------------------------------------------------------
// 1. Bank

const (
	bankAccounts = 20
	bankInitial  = 1000
	bankTotal    = bankAccounts * bankInitial
	bankDuration = 8 * time.Second
	bankWorkers  = 8
	bankReaders  = 2
)

type bankStats struct {
	committed, skipped, deadlocks, timeouts, conflicts, conflictsBeforeCommit atomic.Int64
	snapshotReads, autocommitReads                                            atomic.Int64
}

func TestBankPessimistic(t *testing.T) { runBank(t, false) }

func TestBankOptimistic(t *testing.T) {
	requireShoal(t, "optimistic transactions (tidb_txn_mode, BEGIN OPTIMISTIC)")
	runBank(t, true)
}

func runBank(t *testing.T, optimistic bool) {
	_, db := txnSetup(t,
		"CREATE TABLE acct (id INT PRIMARY KEY, balance BIGINT NOT NULL, KEY k_balance (balance))")
	var vals []string
	for i := 1; i <= bankAccounts; i++ {
		vals = append(vals, fmt.Sprintf("(%d, %d)", i, bankInitial))
	}
	mustExec(t, db, "INSERT INTO acct VALUES "+strings.Join(vals, ", "))

	var (
		st       bankStats
		unexp    errorLog
		badSums  errorLog
		wg       sync.WaitGroup
		start    = time.Now()
		deadline = start.Add(bankDuration)
	)
	for w := 0; w < bankWorkers; w++ {
		sess := openSession(t, db, fmt.Sprintf("worker%d", w))
		// A lock wait this long in a bank of millisecond transactions is
		// an undetected deadlock; the bound keeps the test short.
		sess.mustExec("SET SESSION innodb_lock_wait_timeout = 3")
		begin := "BEGIN"
		if optimistic {
			if w%2 == 0 {
				begin = "BEGIN OPTIMISTIC"
			} else {
				sess.mustExec("SET SESSION tidb_txn_mode = 'optimistic'")
			}
		}
		wg.Add(1)
		go func(w int, sess *session, begin string) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(w) + time.Now().UnixNano()))
			for time.Now().Before(deadline) {
				from := rng.Intn(bankAccounts) + 1
				to := rng.Intn(bankAccounts-1) + 1
				if to >= from {
					to++
				}
				amt := int64(rng.Intn(20) + 1)
				stage, done, err := bankTransfer(sess, begin, optimistic, rng.Intn(2) == 0, from, to, amt)
				if err == nil {
					if done {
						st.committed.Add(1)
					} else {
						st.skipped.Add(1)
					}
					continue
				}
				if rbErr := sess.rollback(); rbErr != nil {
					unexp.add("%s: ROLLBACK after %q failed: %v (worker stops)", sess.name, err, rbErr)
					return
				}
				switch n := errNum(err); {
				case !optimistic && n == errDeadlock:
					st.deadlocks.Add(1)
					if s := errState(err); s != "40001" {
						unexp.add("%s: 1213 at %s with SQLSTATE %s, want 40001", sess.name, stage, s)
					}
				case !optimistic && n == errLockWaitTimeout:
					st.timeouts.Add(1)
				case optimistic && n == errWriteConflict:
					st.conflicts.Add(1)
					if stage != "COMMIT" {
						st.conflictsBeforeCommit.Add(1)
					}
				default:
					unexp.add("%s: transfer %d->%d (%d) failed at %s: %v", sess.name, from, to, amt, stage, err)
				}
			}
		}(w, sess, begin)
	}
	for r := 0; r < bankReaders; r++ {
		sess := openSession(t, db, fmt.Sprintf("reader%d", r))
		wg.Add(1)
		go func(sess *session) {
			defer wg.Done()
			for i := 0; time.Now().Before(deadline); i++ {
				if i%2 == 0 {
					sum, err := sess.queryInt("SELECT SUM(balance) FROM acct")
					if err != nil {
						unexp.add("%s: autocommit SELECT SUM: %v", sess.name, err)
						continue
					}
					st.autocommitReads.Add(1)
					if sum != bankTotal {
						badSums.add("%s: autocommit SELECT SUM(balance) = %d at %s, want %d", sess.name, sum, time.Since(start).Round(time.Millisecond), bankTotal)
					}
					continue
				}
				if err := bankSnapshotRead(sess, &badSums, start); err != nil {
					unexp.add("%s: snapshot read: %v", sess.name, err)
					if sess.rollback() != nil {
						return
					}
					continue
				}
				st.snapshotReads.Add(1)
			}
		}(sess)
	}
	wg.Wait()
	elapsed := time.Since(start)

	t.Logf("%s bank, %s: %d transfers committed, %d skipped (insufficient funds), %d deadlocks (1213), %d lock wait timeouts (1205), %d write conflicts (9007; %d before COMMIT); %d snapshot and %d autocommit sum reads",
		map[bool]string{false: "pessimistic", true: "optimistic"}[optimistic], elapsed.Round(time.Millisecond),
		st.committed.Load(), st.skipped.Load(), st.deadlocks.Load(), st.timeouts.Load(), st.conflicts.Load(), st.conflictsBeforeCommit.Load(),
		st.snapshotReads.Load(), st.autocommitReads.Load())
	unexp.report(t, "unexpected errors")
	badSums.report(t, "reads saw a wrong total")
	if st.committed.Load() == 0 {
		t.Errorf("no transfer committed in %s", bankDuration)
	}
	if st.snapshotReads.Load() == 0 || st.autocommitReads.Load() == 0 {
		t.Errorf("readers made no progress: %d snapshot, %d autocommit reads", st.snapshotReads.Load(), st.autocommitReads.Load())
	}

	var sum, cnt, neg int64
	ctx, cancel := context.WithTimeout(context.Background(), stmtTimeout)
	defer cancel()
	if err := db.QueryRowContext(ctx, "SELECT SUM(balance), COUNT(*), SUM(balance < 0) FROM acct").Scan(&sum, &cnt, &neg); err != nil {
		t.Fatalf("final sum: %v", err)
	}
	if sum != bankTotal || cnt != bankAccounts || neg != 0 {
		t.Errorf("final state: SUM(balance)=%d COUNT(*)=%d negative balances=%d; want %d, %d, 0", sum, cnt, neg, bankTotal, bankAccounts)
	}
	var isum, icnt int64
	if err := db.QueryRowContext(ctx, "SELECT SUM(balance), COUNT(*) FROM acct WHERE balance >= -1000000000").Scan(&isum, &icnt); err != nil {
		t.Errorf("final sum through the balance index: %v", err)
	} else if isum != bankTotal || icnt != bankAccounts {
		t.Errorf("final state through the balance index: SUM=%d COUNT=%d; want %d, %d", isum, icnt, bankTotal, bankAccounts)
	}
	adminCheck(t, db, "acct")
}

// bankTransfer moves amt from one account to another in one transaction.
// Both rows are read first (with FOR UPDATE in pessimistic mode, in the
// given order) and the new balances written as literals computed from those
// reads, so any isolation failure shows in the total. It returns the stage
// of a failure, and whether money moved.
func bankTransfer(s *session, begin string, optimistic, fromFirst bool, from, to int, amt int64) (string, bool, error) {
	if _, err := s.exec(begin); err != nil {
		return begin, false, err
	}
	lock := " FOR UPDATE"
	if optimistic {
		lock = ""
	}
	order := []int{from, to}
	if !fromFirst {
		order = []int{to, from}
	}
	bal := map[int]int64{}
	for _, id := range order {
		q := fmt.Sprintf("SELECT balance FROM acct WHERE id = %d%s", id, lock)
		v, err := s.queryInt(q)
		if err != nil {
			return q, false, err
		}
		bal[id] = v
	}
	if bal[from] < amt {
		_, err := s.exec("COMMIT")
		return "COMMIT", false, err
	}
	for _, u := range []struct {
		id int
		v  int64
	}{{from, bal[from] - amt}, {to, bal[to] + amt}} {
		q := fmt.Sprintf("UPDATE acct SET balance = %d WHERE id = %d", u.v, u.id)
		n, err := s.exec(q)
		if err != nil {
			return q, false, err
		}
		if n != 1 {
			return q, false, fmt.Errorf("%s: %d rows affected, want 1", q, n)
		}
	}
	if _, err := s.exec("COMMIT"); err != nil {
		return "COMMIT", false, err
	}
	return "", true, nil
}

// bankSnapshotRead reads the total three ways inside one transaction; each
// must equal the bank's total.
func bankSnapshotRead(s *session, bad *errorLog, start time.Time) error {
	if _, err := s.exec("BEGIN"); err != nil {
		return err
	}
	sum1, err := s.queryInt("SELECT SUM(balance) FROM acct")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), stmtTimeout)
	defer cancel()
	rows, err := s.c.QueryContext(ctx, "SELECT id, balance FROM acct")
	if err != nil {
		return err
	}
	var sum2, n int64
	for rows.Next() {
		var id, b int64
		if err := rows.Scan(&id, &b); err != nil {
			rows.Close()
			return err
		}
		sum2 += b
		n++
	}
	if err := rows.Err(); err != nil {
		return err
	}
	rows.Close()
	time.Sleep(5 * time.Millisecond) // let writers commit in between
	sum3, err := s.queryInt("SELECT SUM(balance) FROM acct")
	if err != nil {
		return err
	}
	if _, err := s.exec("COMMIT"); err != nil {
		return err
	}
	if sum1 != bankTotal || sum2 != bankTotal || sum3 != bankTotal || n != bankAccounts {
		bad.add("%s: in one transaction (at %s): BEGIN; SELECT SUM(balance) -> %d; SELECT id, balance -> %d rows summing to %d; SELECT SUM(balance) -> %d; COMMIT; want %d each and %d rows",
			s.name, time.Since(start).Round(time.Millisecond), sum1, n, sum2, sum3, bankTotal, bankAccounts)
	}
	return nil
}

// ---------------------------------------------------------------------------
// 2. Lost updates

const (
	luWorkers  = 16
	luPerWork  = 100
	luDeadline = 12 * time.Second
)

// Increment styles of TestLostUpdate.
const (
	luAutocommit = iota // UPDATE ... v = v + 1 in autocommit
	luExplicit          // BEGIN; UPDATE ... v = v + 1; COMMIT
	luReadFirst         // BEGIN; SELECT v; UPDATE ... v = v + 1; COMMIT (the snapshot is older than the row)
	luForUpdate         // BEGIN; SELECT v ... FOR UPDATE; UPDATE ... v = <read + 1>; COMMIT
)

func TestLostUpdate(t *testing.T) {
	_, db := txnSetup(t, "CREATE TABLE counter (id INT PRIMARY KEY, v BIGINT NOT NULL)")
	cases := []struct {
		name       string
		style      int
		optimistic bool
	}{
		{"PessimisticAutocommit", luAutocommit, false},
		{"PessimisticExplicit", luExplicit, false},
		{"PessimisticReadThenUpdate", luReadFirst, false},
		{"PessimisticSelectForUpdate", luForUpdate, false},
		{"OptimisticAutocommit", luAutocommit, true},
		{"OptimisticExplicit", luExplicit, true},
		{"OptimisticReadThenUpdate", luReadFirst, true},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.optimistic {
				requireShoal(t, "tidb_txn_mode")
			}
			id := i + 1
			mustExec(t, db, fmt.Sprintf("INSERT INTO counter VALUES (%d, 0)", id))
			runLostUpdate(t, db, id, c.style, c.optimistic)
		})
	}
	adminCheck(t, db, "counter")
}

// luIncrement does one increment in the given style; it returns the
// statement that failed.
func luIncrement(s *session, id, style int) (string, error) {
	upd := fmt.Sprintf("UPDATE counter SET v = v + 1 WHERE id = %d", id)
	sel := fmt.Sprintf("SELECT v FROM counter WHERE id = %d", id)
	checkOne := func(q string, n int64, err error) (string, error) {
		if err == nil && n != 1 {
			err = fmt.Errorf("%d rows affected, want 1", n)
		}
		if err != nil {
			return q, err
		}
		return "", nil
	}
	if style == luAutocommit {
		n, err := s.exec(upd)
		return checkOne(upd, n, err)
	}
	if _, err := s.exec("BEGIN"); err != nil {
		return "BEGIN", err
	}
	switch style {
	case luExplicit:
		n, err := s.exec(upd)
		if q, err := checkOne(upd, n, err); err != nil {
			return q, err
		}
	case luReadFirst:
		if _, err := s.queryInt(sel); err != nil {
			return sel, err
		}
		time.Sleep(time.Millisecond) // let others commit after our snapshot
		n, err := s.exec(upd)
		if q, err := checkOne(upd, n, err); err != nil {
			return q, err
		}
	case luForUpdate:
		q := sel + " FOR UPDATE"
		v, err := s.queryInt(q)
		if err != nil {
			return q, err
		}
		q = fmt.Sprintf("UPDATE counter SET v = %d WHERE id = %d", v+1, id)
		n, err := s.exec(q)
		if q, err := checkOne(q, n, err); err != nil {
			return q, err
		}
	}
	if _, err := s.exec("COMMIT"); err != nil {
		return "COMMIT", err
	}
	return "", nil
}

func runLostUpdate(t *testing.T, db *sql.DB, id, style int, optimistic bool) {
	var (
		acked, conflicts atomic.Int64
		unexp            errorLog
		wg               sync.WaitGroup
		start            = time.Now()
		deadline         = start.Add(luDeadline)
		incomplete       atomic.Int64
	)
	for w := 0; w < luWorkers; w++ {
		sess := openSession(t, db, fmt.Sprintf("w%d", w))
		sess.mustExec("SET SESSION innodb_lock_wait_timeout = 10")
		if optimistic {
			sess.mustExec("SET SESSION tidb_txn_mode = 'optimistic'")
		}
		wg.Add(1)
		go func(sess *session) {
			defer wg.Done()
			for k := 0; k < luPerWork; k++ {
				if time.Now().After(deadline) {
					incomplete.Add(int64(luPerWork - k))
					return
				}
				stage, err := luIncrement(sess, id, style)
				if err == nil {
					acked.Add(1)
					continue
				}
				if optimistic && errNum(err) == errWriteConflict {
					conflicts.Add(1)
					if stage != "COMMIT" {
						unexp.add("%s: 9007 at %s, expected only at COMMIT in optimistic mode: %v", sess.name, stage, err)
					}
				} else {
					unexp.add("%s: increment failed at %s: %v", sess.name, stage, err)
				}
				if style != luAutocommit {
					if rbErr := sess.rollback(); rbErr != nil {
						unexp.add("%s: ROLLBACK: %v (worker stops)", sess.name, rbErr)
						return
					}
				}
			}
		}(sess)
	}
	wg.Wait()
	elapsed := time.Since(start)
	ctx, cancel := context.WithTimeout(context.Background(), stmtTimeout)
	defer cancel()
	var v int64
	if err := db.QueryRowContext(ctx, fmt.Sprintf("SELECT v FROM counter WHERE id = %d", id)).Scan(&v); err != nil {
		t.Fatalf("final read: %v", err)
	}
	t.Logf("%d of %d increments acknowledged in %s, %d write conflicts (9007), %d not attempted (time bound); final v = %d",
		acked.Load(), luWorkers*luPerWork, elapsed.Round(time.Millisecond), conflicts.Load(), incomplete.Load(), v)
	unexp.report(t, "increments failed unexpectedly")
	if v != acked.Load() {
		t.Errorf("final v = %d, but %d increments were acknowledged (%d lost)", v, acked.Load(), acked.Load()-v)
	}
	if acked.Load() == 0 {
		t.Errorf("no increment was acknowledged")
	}
}

// ---------------------------------------------------------------------------
// 3. Lock wait timeout

func TestLockWait(t *testing.T) {
	_, db := txnSetup(t,
		"CREATE TABLE t (id INT PRIMARY KEY, v INT NOT NULL)",
		"INSERT INTO t VALUES (1, 0), (2, 0)")
	a := openSession(t, db, "A")
	b := openSession(t, db, "B")
	c := openSession(t, db, "C")
	b.mustExec("SET SESSION innodb_lock_wait_timeout = 1")
	c.mustExec("SET SESSION innodb_lock_wait_timeout = 1")
	if v := b.mustInt("SELECT @@innodb_lock_wait_timeout"); v != 1 {
		t.Fatalf("B: SELECT @@innodb_lock_wait_timeout = %d after SET SESSION ... = 1", v)
	}

	b.mustExec("BEGIN")
	b.mustExec("UPDATE t SET v = 100 WHERE id = 2") // an earlier statement of B's transaction
	a.mustExec("BEGIN")
	if n := a.mustExec("UPDATE t SET v = v + 1 WHERE id = 1"); n != 1 {
		t.Fatalf("A: UPDATE id=1 affected %d rows", n)
	}

	t0 := time.Now()
	_, err := b.exec("UPDATE t SET v = v + 10 WHERE id = 1")
	wait := time.Since(t0)
	t.Logf("B's blocked UPDATE returned after %s: %v", wait.Round(time.Millisecond), err)
	if err == nil {
		t.Fatalf("A: BEGIN; UPDATE t SET v=v+1 WHERE id=1 (uncommitted); B (innodb_lock_wait_timeout=1): UPDATE t SET v=v+10 WHERE id=1 succeeded after %s; want error 1205", wait)
	}
	if errNum(err) != errLockWaitTimeout || errState(err) != "HY000" {
		t.Errorf("B's UPDATE of the locked row: %v; want error 1205 (SQLSTATE HY000)", err)
	}
	if wait < 900*time.Millisecond || wait > 5*time.Second {
		t.Errorf("B's UPDATE of the locked row failed after %s; want about 1 s (innodb_lock_wait_timeout=1), between 0.9 and 5 s", wait)
	}

	// B's transaction is still open and kept its first statement: B sees
	// its own write, C does not.
	if v := b.mustInt("SELECT v FROM t WHERE id = 2"); v != 100 {
		t.Errorf("after the 1205, B reads id=2 as %d; want 100 (its earlier UPDATE is kept)", v)
	}
	if v := c.mustInt("SELECT v FROM t WHERE id = 2"); v != 0 {
		t.Errorf("after B's 1205, C reads id=2 as %d; want 0 (B's transaction is not committed: a lock wait timeout rolls back the statement, not the transaction)", v)
	}

	a.mustExec("COMMIT")
	t0 = time.Now()
	if n, err := b.exec("UPDATE t SET v = v + 10 WHERE id = 1"); err != nil || n != 1 {
		t.Errorf("B's retry after A committed: %d rows, %v (after %s); want 1 row", n, err, time.Since(t0))
	}
	if v := b.mustInt("SELECT v FROM t WHERE id = 1"); v != 11 {
		t.Errorf("B reads id=1 as %d after its retried UPDATE; want 11 (A's +1 then B's +10)", v)
	}
	b.mustExec("COMMIT")

	// No lock is left behind: C updates both rows at once.
	t0 = time.Now()
	for _, q := range []string{"UPDATE t SET v = v + 1000 WHERE id = 1", "UPDATE t SET v = v + 1000 WHERE id = 2"} {
		if n, err := c.exec(q); err != nil || n != 1 {
			t.Errorf("C (autocommit, lock wait timeout 1 s): %s: %d rows, %v; a lock was left behind", q, n, err)
		}
	}
	if d := time.Since(t0); d > 900*time.Millisecond {
		t.Errorf("C's two autocommit UPDATEs took %s; a lock was left behind", d)
	}
	v1 := c.mustInt("SELECT v FROM t WHERE id = 1")
	v2 := c.mustInt("SELECT v FROM t WHERE id = 2")
	if v1 != 1011 || v2 != 1100 {
		t.Errorf("final rows: id=1 v=%d, id=2 v=%d; want 1011 and 1100", v1, v2)
	}
}

// ---------------------------------------------------------------------------
// 4. Deadlock

func TestDeadlock(t *testing.T) {
	_, db := txnSetup(t,
		"CREATE TABLE t (id INT PRIMARY KEY, v INT NOT NULL)",
		"INSERT INTO t VALUES (1, 0), (2, 0)")
	a := openSession(t, db, "A")
	b := openSession(t, db, "B")
	c := openSession(t, db, "C")
	for _, s := range []*session{a, b} {
		s.mustExec("SET SESSION innodb_lock_wait_timeout = 20")
	}
	c.mustExec("SET SESSION innodb_lock_wait_timeout = 1")

	// Each round: A adds da to both rows, B adds db; the victim's add must
	// vanish entirely, the survivor's must land on both rows.
	rounds := []struct {
		name   string
		lock   func(id, d int) string
		da, db int
	}{
		{"UPDATE", func(id, d int) string { return fmt.Sprintf("UPDATE t SET v = v + %d WHERE id = %d", d, id) }, 1, 100},
		{"SELECT FOR UPDATE", func(id, d int) string { return fmt.Sprintf("SELECT v FROM t WHERE id = %d FOR UPDATE", id) }, 0, 0},
	}
	var want1, want2 int64
	for _, r := range rounds {
		t.Run(strings.ReplaceAll(r.name, " ", "_"), func(t *testing.T) {
			run := func(s *session, q string) error {
				if strings.HasPrefix(q, "SELECT") {
					_, err := s.queryInt(q)
					return err
				}
				_, err := s.exec(q)
				return err
			}
			a.mustExec("BEGIN")
			b.mustExec("BEGIN")
			if err := run(a, r.lock(1, r.da)); err != nil {
				t.Fatalf("A locks row 1: %v", err)
			}
			if err := run(b, r.lock(2, r.db)); err != nil {
				t.Fatalf("B locks row 2: %v", err)
			}
			type result struct {
				err error
				at  time.Time
			}
			aDone, bDone := make(chan result, 1), make(chan result, 1)
			go func() { err := run(a, r.lock(2, r.da)); aDone <- result{err, time.Now()} }()
			select {
			case res := <-aDone:
				t.Fatalf("A's request for row 2 (locked by B) returned at once: %v; want it to wait", res.err)
			case <-time.After(300 * time.Millisecond):
			}
			t0 := time.Now()
			go func() { err := run(b, r.lock(1, r.db)); bDone <- result{err, time.Now()} }()
			var ra, rb result
			timeout := time.After(25 * time.Second)
			for got := 0; got < 2; got++ {
				select {
				case ra = <-aDone:
				case rb = <-bDone:
				case <-timeout:
					t.Fatalf("A and B still blocked 25 s after the deadlock formed (A: lock 1, B: lock 2, A: lock 2, B: lock 1)")
				}
			}
			t.Logf("A's request for row 2: %v after %s; B's request for row 1: %v after %s",
				ra.err, ra.at.Sub(t0).Round(time.Millisecond), rb.err, rb.at.Sub(t0).Round(time.Millisecond))
			var victim, survivor *session
			var vRes, sRes result
			var survivorD int
			switch {
			case errNum(ra.err) == errDeadlock && rb.err == nil:
				victim, survivor, vRes, sRes, survivorD = a, b, ra, rb, r.db
			case errNum(rb.err) == errDeadlock && ra.err == nil:
				victim, survivor, vRes, sRes, survivorD = b, a, rb, ra, r.da
			default:
				a.rollback()
				b.rollback()
				t.Fatalf("deadlock (%s): A: %v; B: %v; want exactly one 1213 (SQLSTATE 40001) and the other to succeed", r.name, ra.err, rb.err)
			}
			if s := errState(vRes.err); s != "40001" {
				t.Errorf("victim %s got %v; want SQLSTATE 40001", victim.name, vRes.err)
			}
			if d := vRes.at.Sub(t0); d > 10*time.Second {
				t.Errorf("the deadlock was reported after %s; want well before innodb_lock_wait_timeout (20 s), < 10 s", d)
			}
			if d := sRes.at.Sub(t0); d > 10*time.Second {
				t.Errorf("survivor %s proceeded %s after the deadlock formed; want < 10 s", survivor.name, d)
			}
			// The victim's transaction was rolled back: its row lock is gone
			// (the survivor got it) and its write is invisible to itself.
			// The server rolled the victim back by itself: the survivor got
			// the victim's lock before the victim sent anything more, the
			// victim no longer sees its own writes, and a COMMIT from it now
			// commits nothing.
			if v := victim.mustInt("SELECT SUM(v) FROM t"); v != want1+want2 {
				t.Errorf("victim %s reads SUM(v) = %d after 1213; want %d (its transaction, with its own earlier write, was rolled back)", victim.name, v, want1+want2)
			}
			if _, err := victim.exec("COMMIT"); err != nil {
				t.Errorf("victim %s: COMMIT after 1213 (a no-op): %v", victim.name, err)
				victim.rollback()
			}
			survivor.mustExec("COMMIT")
			want1 += int64(survivorD)
			want2 += int64(survivorD)
			v1 := c.mustInt("SELECT v FROM t WHERE id = 1")
			v2 := c.mustInt("SELECT v FROM t WHERE id = 2")
			if v1 != want1 || v2 != want2 {
				t.Errorf("after the deadlock: row 1 = %d, row 2 = %d; want %d and %d (the survivor %s's writes only, the victim's rolled back)", v1, v2, want1, want2, survivor.name)
			}
			// No lock remains: C (lock wait timeout 1 s) locks both rows.
			c.mustExec("BEGIN")
			for _, id := range []int{1, 2} {
				if _, err := c.queryInt(fmt.Sprintf("SELECT v FROM t WHERE id = %d FOR UPDATE", id)); err != nil {
					t.Errorf("C: SELECT ... WHERE id = %d FOR UPDATE after the deadlock: %v; a lock remained", id, err)
				}
			}
			c.mustExec("COMMIT")
		})
	}
}

// ---------------------------------------------------------------------------
// 5. SELECT ... FOR UPDATE

func TestForUpdate(t *testing.T) {
	_, db := txnSetup(t,
		"CREATE TABLE t (id INT PRIMARY KEY, v INT NOT NULL)",
		"INSERT INTO t VALUES (1, 10), (2, 20)")
	a := openSession(t, db, "A")
	w := openSession(t, db, "W")
	r := openSession(t, db, "R")
	w.mustExec("SET SESSION innodb_lock_wait_timeout = 10")

	t.Run("BlocksWriter", func(t *testing.T) {
		a.mustExec("BEGIN")
		if v := a.mustInt("SELECT v FROM t WHERE id = 1 FOR UPDATE"); v != 10 {
			t.Fatalf("A: SELECT v ... FOR UPDATE = %d, want 10", v)
		}
		type result struct {
			n   int64
			err error
			at  time.Time
		}
		wDone := make(chan result, 1)
		go func() {
			n, err := w.exec("UPDATE t SET v = v + 1 WHERE id = 1")
			wDone <- result{n, err, time.Now()}
		}()
		select {
		case res := <-wDone:
			a.rollback()
			t.Fatalf("A: BEGIN; SELECT v FROM t WHERE id=1 FOR UPDATE; W: UPDATE t SET v=v+1 WHERE id=1 returned (%d rows, %v) while A holds the lock; want it to block until A commits", res.n, res.err)
		case <-time.After(700 * time.Millisecond):
		}
		// A plain read does not block and sees the committed value.
		t0 := time.Now()
		if v := r.mustInt("SELECT v FROM t WHERE id = 1"); v != 10 {
			t.Errorf("R: plain SELECT while A holds FOR UPDATE and W waits: %d, want 10", v)
		}
		r.mustExec("BEGIN")
		if v := r.mustInt("SELECT v FROM t WHERE id = 1"); v != 10 {
			t.Errorf("R: SELECT in a transaction while A holds FOR UPDATE: %d, want 10", v)
		}
		if d := time.Since(t0); d > 2*time.Second {
			t.Errorf("R's plain SELECTs took %s while A holds the row lock; they must not block", d)
		}
		// A writes through its lock and commits; W then applies on top.
		a.mustExec("UPDATE t SET v = 50 WHERE id = 1")
		select {
		case res := <-wDone:
			t.Fatalf("W's UPDATE returned (%d, %v) before A committed", res.n, res.err)
		case <-time.After(100 * time.Millisecond):
		}
		commitAt := time.Now()
		a.mustExec("COMMIT")
		var res result
		select {
		case res = <-wDone:
		case <-time.After(15 * time.Second):
			t.Fatalf("W's UPDATE still blocked 15 s after A committed")
		}
		if res.err != nil || res.n != 1 {
			t.Errorf("W's UPDATE after A's commit: %d rows, %v; want 1 row", res.n, res.err)
		}
		if res.at.Before(commitAt) {
			t.Errorf("W's UPDATE finished before A's COMMIT was sent")
		}
		// R's transaction still sees its snapshot.
		if v := r.mustInt("SELECT v FROM t WHERE id = 1"); v != 10 {
			t.Errorf("R: repeated SELECT in its transaction after A and W committed: %d, want 10 (snapshot)", v)
		}
		r.mustExec("COMMIT")
		if v := r.mustInt("SELECT v FROM t WHERE id = 1"); v != 51 {
			t.Errorf("final v = %d, want 51 (A's 50, then W's +1)", v)
		}
	})

	t.Run("Nowait", func(t *testing.T) {
		a.mustExec("BEGIN")
		a.mustInt("SELECT v FROM t WHERE id = 2 FOR UPDATE")
		defer a.rollback()
		w.mustExec("SET SESSION innodb_lock_wait_timeout = 3")
		w.mustExec("BEGIN")
		defer w.rollback()
		t0 := time.Now()
		v, err := w.queryInt("SELECT v FROM t WHERE id = 2 FOR UPDATE NOWAIT")
		d := time.Since(t0)
		if me := sqlErr(err); me != nil && (me.Number == 1064 || me.Number == 1235) {
			t.Skipf("SELECT ... FOR UPDATE NOWAIT not supported: %v", err)
		}
		if err == nil {
			t.Fatalf("A: BEGIN; SELECT v FROM t WHERE id=2 FOR UPDATE; W: BEGIN; SELECT v FROM t WHERE id=2 FOR UPDATE NOWAIT returned v=%d after %s; want error 3572 at once", v, d)
		}
		if target == "shoal" && (errNum(err) != errLockNowait || errState(err) != "HY000") {
			t.Errorf("FOR UPDATE NOWAIT on a locked row: %v; want error 3572 (SQLSTATE HY000)", err)
		}
		if d > 500*time.Millisecond {
			t.Errorf("FOR UPDATE NOWAIT on a locked row failed after %s; want immediately (it must not wait)", d)
		}
		// An unlocked row is fine with NOWAIT.
		if v, err := w.queryInt("SELECT v FROM t WHERE id = 1 FOR UPDATE NOWAIT"); err != nil || v != 51 {
			t.Errorf("FOR UPDATE NOWAIT on an unlocked row: %d, %v; want 51", v, err)
		}
	})
}

// ---------------------------------------------------------------------------
// 6. Snapshot isolation

func TestSnapshot(t *testing.T) {
	_, db := txnSetup(t,
		"CREATE TABLE t (id INT PRIMARY KEY, v INT NOT NULL)",
		"CREATE TABLE oncall (id INT PRIMARY KEY, shift INT NOT NULL, on_call INT NOT NULL)")
	a := openSession(t, db, "A")
	b := openSession(t, db, "B")
	c := openSession(t, db, "C")
	for _, s := range []*session{a, b, c} {
		s.mustExec("SET SESSION innodb_lock_wait_timeout = 10")
	}
	reset := func(t *testing.T) {
		t.Helper()
		c.mustExec("DELETE FROM t")
		c.mustExec("INSERT INTO t VALUES (1, 0), (2, 0)")
	}

	t.Run("RepeatableRead", func(t *testing.T) {
		reset(t)
		a.mustExec("BEGIN")
		v1 := a.mustInt("SELECT v FROM t WHERE id = 1")
		n1 := a.mustInt("SELECT COUNT(*) FROM t")
		s1 := a.mustInt("SELECT SUM(v) FROM t")
		c.mustExec("UPDATE t SET v = 5 WHERE id = 1")
		c.mustExec("INSERT INTO t VALUES (3, 7)")
		c.mustExec("DELETE FROM t WHERE id = 2")
		for i := 0; i < 2; i++ {
			v2 := a.mustInt("SELECT v FROM t WHERE id = 1")
			n2 := a.mustInt("SELECT COUNT(*) FROM t")
			s2 := a.mustInt("SELECT SUM(v) FROM t")
			g2 := a.mustInt("SELECT COUNT(*) FROM t WHERE id = 2")
			if v2 != v1 || n2 != n1 || s2 != s1 || g2 != 1 {
				t.Errorf("A's repeated reads changed after C committed (UPDATE id=1, INSERT id=3, DELETE id=2): v(id=1) %d -> %d, COUNT(*) %d -> %d, SUM(v) %d -> %d, row id=2 present=%d; want unchanged", v1, v2, n1, n2, s1, s2, g2)
			}
			if i == 0 {
				time.Sleep(50 * time.Millisecond)
			}
		}
		a.mustExec("COMMIT")
		if v := a.mustInt("SELECT SUM(v) FROM t"); v != 12 {
			t.Errorf("after COMMIT, A reads SUM(v) = %d, want 12 (C's changes visible)", v)
		}
	})

	modes := []string{"pessimistic"}
	if target == "shoal" {
		modes = append(modes, "optimistic")
	}
	for _, mode := range modes {
		begin := "BEGIN"
		if mode == "optimistic" {
			begin = "BEGIN OPTIMISTIC"
		}
		t.Run("WriteSkewAllowed_"+mode, func(t *testing.T) {
			c.mustExec("DELETE FROM oncall")
			c.mustExec("INSERT INTO oncall VALUES (1, 1, 1), (2, 1, 1)")
			a.mustExec(begin)
			b.mustExec(begin)
			if n := a.mustInt("SELECT SUM(on_call) FROM oncall WHERE shift = 1"); n != 2 {
				t.Fatalf("A: SUM(on_call) = %d, want 2", n)
			}
			if n := b.mustInt("SELECT SUM(on_call) FROM oncall WHERE shift = 1"); n != 2 {
				t.Fatalf("B: SUM(on_call) = %d, want 2", n)
			}
			a.mustExec("UPDATE oncall SET on_call = 0 WHERE id = 1")
			b.mustExec("UPDATE oncall SET on_call = 0 WHERE id = 2")
			_, errA := a.exec("COMMIT")
			_, errB := b.exec("COMMIT")
			if errA != nil || errB != nil {
				t.Errorf("write skew (%s): %s; A and B read SUM(on_call)=2, A: UPDATE id=1, B: UPDATE id=2, COMMIT both: A: %v, B: %v; want both to commit under snapshot isolation (disjoint write sets)", mode, begin, errA, errB)
			}
			if n := c.mustInt("SELECT SUM(on_call) FROM oncall"); n != 0 {
				t.Errorf("after write skew: SUM(on_call) = %d, want 0", n)
			}
		})
	}

	t.Run("WriteWriteReadThenUpdatePessimistic", func(t *testing.T) {
		reset(t)
		a.mustExec("BEGIN")
		if v := a.mustInt("SELECT v FROM t WHERE id = 1"); v != 0 {
			t.Fatalf("A reads %d, want 0", v)
		}
		c.mustExec("UPDATE t SET v = v + 1 WHERE id = 1")
		if n := a.mustExec("UPDATE t SET v = v + 10 WHERE id = 1"); n != 1 {
			t.Errorf("A's UPDATE affected %d rows", n)
		}
		if v := a.mustInt("SELECT v FROM t WHERE id = 1"); v != 11 {
			t.Errorf("A reads its own update as %d; want 11 (a pessimistic UPDATE reads the latest committed row, C's +1, then +10)", v)
		}
		_, err := a.exec("COMMIT")
		if err != nil {
			t.Errorf("A's COMMIT: %v", err)
		}
		if v := c.mustInt("SELECT v FROM t WHERE id = 1"); v != 11 {
			t.Errorf("A: BEGIN; SELECT v (0); C: UPDATE v=v+1 (autocommit); A: UPDATE v=v+10; COMMIT -> final v = %d, want 11 (no update lost)", v)
		}
	})

	t.Run("WriteWriteBlockedPessimistic", func(t *testing.T) {
		reset(t)
		a.mustExec("BEGIN")
		b.mustExec("BEGIN")
		a.mustInt("SELECT v FROM t WHERE id = 1")
		b.mustInt("SELECT v FROM t WHERE id = 1")
		a.mustExec("UPDATE t SET v = v + 10 WHERE id = 1")
		done := make(chan error, 1)
		go func() {
			_, err := b.exec("UPDATE t SET v = v + 100 WHERE id = 1")
			if err == nil {
				_, err = b.exec("COMMIT")
			}
			done <- err
		}()
		time.Sleep(300 * time.Millisecond)
		a.mustExec("COMMIT")
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("B's UPDATE; COMMIT after A committed: %v", err)
				b.rollback()
			}
		case <-time.After(15 * time.Second):
			t.Fatalf("B still blocked 15 s after A committed")
		}
		if v := c.mustInt("SELECT v FROM t WHERE id = 1"); v != 110 {
			t.Errorf("A, B: BEGIN; SELECT v; A: UPDATE v=v+10; B: UPDATE v=v+100 (waits); A: COMMIT; B: COMMIT -> v = %d, want 110", v)
		}
	})

	if target == "shoal" {
		for _, readFirst := range []bool{true, false} {
			name := "WriteWriteOptimisticBlind"
			if readFirst {
				name = "WriteWriteOptimisticRead"
			}
			t.Run(name, func(t *testing.T) {
				reset(t)
				a.mustExec("BEGIN OPTIMISTIC")
				if readFirst {
					a.mustInt("SELECT v FROM t WHERE id = 1")
				} else {
					a.mustInt("SELECT v FROM t WHERE id = 2") // fixes the snapshot
				}
				a.mustExec("UPDATE t SET v = v + 10 WHERE id = 1")
				c.mustExec("UPDATE t SET v = v + 1 WHERE id = 1")
				_, err := a.exec("COMMIT")
				final := c.mustInt("SELECT v FROM t WHERE id = 1")
				if errNum(err) != errWriteConflict {
					t.Errorf("A: BEGIN OPTIMISTIC; SELECT; UPDATE t SET v=v+10 WHERE id=1; C: UPDATE t SET v=v+1 WHERE id=1 (autocommit, commits first); A: COMMIT -> %v, final v = %d; want error 9007 (first committer wins) and v = 1", err, final)
					if err != nil {
						a.rollback()
					}
				} else if final != 1 {
					t.Errorf("after A's 9007, final v = %d, want 1 (C's update only)", final)
				}
			})
		}
	}
	adminCheck(t, db, "t")
	adminCheck(t, db, "oncall")
}

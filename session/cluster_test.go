package session

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/shoaldb/shoal/embedded"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/types"
)

// probeStore records the options of every Begin and can fail commits.
type probeStore struct {
	kv.Storage
	mu        sync.Mutex
	onePC     []bool
	commitErr error
	// commitErrTimes: how many commits fail with commitErr (0: all).
	commitErrTimes int
}

func (p *probeStore) Begin(ctx context.Context, opts kv.TxnOptions) (kv.Txn, error) {
	p.mu.Lock()
	p.onePC = append(p.onePC, opts.Enable1PC)
	p.mu.Unlock()
	txn, err := p.Storage.Begin(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &probeTxn{Txn: txn, p: p}, nil
}

func (p *probeStore) lastOnePC() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.onePC[len(p.onePC)-1]
}

type probeTxn struct {
	kv.Txn
	p *probeStore
}

func (t *probeTxn) Commit(ctx context.Context) error {
	t.p.mu.Lock()
	err := t.p.commitErr
	if err != nil && t.p.commitErrTimes > 0 {
		if t.p.commitErrTimes--; t.p.commitErrTimes == 0 {
			t.p.commitErr = nil
		}
	}
	t.p.mu.Unlock()
	if err != nil {
		_ = t.Txn.Rollback()
		return err
	}
	return t.Txn.Commit(ctx)
}

func openProbe(t *testing.T) (*embedded.Embedded, *probeStore) {
	st, err := embedded.Open(t.TempDir(), embedded.Options{NoSync: true, BlockCacheSize: 8 << 20, MemTableSize: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, &probeStore{Storage: st}
}

func mustExec(t *testing.T, s Conn, sql string) {
	t.Helper()
	if _, err := s.Execute(context.Background(), sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// probeSession is a session of a node on a fresh probed store.
func probeSession(t *testing.T) (*probeStore, *Session) {
	t.Helper()
	_, p := openProbe(t)
	return p, newSess(t, newNode(t, p, Config{}))
}

// newNode starts a SQL node (a Backend) on st, closed when the test ends.
func newNode(t *testing.T, st kv.Storage, cfg Config) *Backend {
	t.Helper()
	b, err := NewBackend(st, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

func newSess(t *testing.T, b *Backend) *Session {
	t.Helper()
	c, err := b.NewSession(context.Background(), "root", "127.0.0.1", "test")
	if err != nil {
		t.Fatal(err)
	}
	return c.(*Session)
}

// tidb_enable_1pc = 0 turns one-phase commit off for autocommit and
// explicit transactions.
func TestEnable1PCTakesEffect(t *testing.T) {
	p, s := probeSession(t)
	mustExec(t, s, "CREATE TABLE t (id INT PRIMARY KEY)")
	mustExec(t, s, "INSERT INTO t VALUES (1)")
	if !p.lastOnePC() {
		t.Fatal("1PC off by default")
	}
	mustExec(t, s, "set global tidb_enable_1pc = 0")
	mustExec(t, s, "INSERT INTO t VALUES (2)")
	if p.lastOnePC() {
		t.Fatal("autocommit insert asked for 1PC after set global tidb_enable_1pc = 0")
	}
	mustExec(t, s, "BEGIN")
	mustExec(t, s, "INSERT INTO t VALUES (3)")
	mustExec(t, s, "COMMIT")
	if p.lastOnePC() {
		t.Fatal("explicit transaction asked for 1PC after set global tidb_enable_1pc = 0")
	}
}

// tidb_prepared_plan_cache_size bounds the plans a session keeps.
func TestPlanCacheSizeBounds(t *testing.T) {
	_, s := probeSession(t)
	ctx := context.Background()
	mustExec(t, s, "CREATE TABLE t (id INT PRIMARY KEY, v INT)")
	mustExec(t, s, "set global tidb_prepared_plan_cache_size = 3")
	var ids []uint32
	for i := range 6 {
		info, err := s.Prepare(ctx, fmt.Sprintf("SELECT v FROM t WHERE id = ? + %d", i))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, info.ID)
	}
	if n := s.plans.len(); n != 3 {
		t.Fatalf("%d cached plans, want 3", n)
	}
	for _, id := range ids {
		if _, err := s.ExecutePrepared(ctx, id, []types.Datum{types.NewInt(1)}); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.plans.len(); n != 3 {
		t.Fatalf("%d cached plans after executions, want 3", n)
	}
	// The most recently used keep theirs.
	for _, id := range ids[3:] {
		if s.prepared[id].plan == nil {
			t.Fatalf("statement %d lost its plan", id)
		}
	}
	mustExec(t, s, "set tidb_prepared_plan_cache_size = 0")
	if _, err := s.ExecutePrepared(ctx, ids[0], []types.Datum{types.NewInt(1)}); err != nil {
		t.Fatal(err)
	}
	if n := s.plans.len(); n != 0 {
		t.Fatalf("%d cached plans with size 0", n)
	}
}

// A region the client gave up on reaches the client as 9005.
func TestRegionUnavailableIs9005(t *testing.T) {
	p, s := probeSession(t)
	mustExec(t, s, "CREATE TABLE t (id INT PRIMARY KEY)")
	p.commitErr = fmt.Errorf("region 2: %w", kv.ErrRegionUnavailable)
	_, err := s.Execute(context.Background(), "INSERT INTO t VALUES (1)")
	var se *errno.SQLError
	if !errors.As(err, &se) || se.Code != 9005 || se.State != "HY000" {
		t.Fatalf("got %v, want 9005 (HY000)", err)
	}
}

// An autocommit statement whose transaction someone else rolled back
// (a reader took its lock for dead) committed nothing: it runs again, as
// after a write conflict. In an explicit transaction the client is told
// (8005) and retries.
func TestAbortedAutocommitRetries(t *testing.T) {
	p, s := probeSession(t)
	mustExec(t, s, "CREATE TABLE t (id INT PRIMARY KEY, v INT)")
	mustExec(t, s, "INSERT INTO t VALUES (1, 0)")
	aborted := fmt.Errorf("prewrite: %w", kv.ErrTxnAborted)

	p.commitErr, p.commitErrTimes = aborted, 2
	begins := len(p.onePC)
	mustExec(t, s, "UPDATE t SET v = v + 1 WHERE id = 1")
	if n := len(p.onePC) - begins; n != 3 {
		t.Fatalf("the UPDATE began %d transactions, want 3 (two aborted)", n)
	}

	mustExec(t, s, "BEGIN")
	mustExec(t, s, "UPDATE t SET v = v + 10 WHERE id = 1")
	p.commitErr, p.commitErrTimes = aborted, 1
	_, err := s.Execute(context.Background(), "COMMIT")
	var se *errno.SQLError
	if !errors.As(err, &se) || se.Code != 8005 {
		t.Fatalf("explicit COMMIT: got %v, want 8005", err)
	}
	rs, err := s.Execute(context.Background(), "SELECT v FROM t WHERE id = 1")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := drainResult(rs[0])
	if err != nil || len(rows) != 1 || rows[0][0].String() != "1" {
		t.Fatalf("v = %v (%v), want 1: the autocommit UPDATE once, the aborted transaction not at all", rows, err)
	}
}

// A database created on one node can be chosen at once on another, by
// several connections at the same time: each reloads or finds it reloaded
// by another (a reload that found the work done must not count as "no such
// database"). sysbench prepare met this: a thread connecting right after
// CREATE DATABASE got 1049.
func TestConcurrentUseOfNewDatabaseOnOtherNode(t *testing.T) {
	st, _ := openProbe(t)
	cfg := Config{SchemaSyncInterval: time.Hour} // no background refresh
	a := newNode(t, st, cfg)
	b := newNode(t, st, cfg)
	sa := newSess(t, a)
	for i := range 30 {
		db := fmt.Sprintf("race%d", i)
		mustExec(t, sa, "CREATE DATABASE "+db)
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := b.NewSession(context.Background(), "root", "127.0.0.1", db); err != nil {
					errs <- err
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("round %d: connecting to %s on the other node: %v", i, db, err)
		}
	}
}

// Two SQL nodes on one store: a table and a global variable set on one are
// seen on the other.
func TestTwoNodesShareSchemaAndGlobals(t *testing.T) {
	st, _ := openProbe(t)
	cfg := Config{SchemaSyncInterval: 50 * time.Millisecond}
	a := newNode(t, st, cfg)
	b := newNode(t, st, cfg)
	sa, sb := newSess(t, a), newSess(t, b)
	mustExec(t, sa, "CREATE DATABASE d2")
	mustExec(t, sa, "CREATE TABLE t (id INT PRIMARY KEY AUTO_INCREMENT, v INT)")
	// Right away (no wait for the background refresh): the unknown table
	// makes node b reload.
	mustExec(t, sb, "INSERT INTO t (v) VALUES (1)")
	if err := sb.UseDB(context.Background(), "d2"); err != nil {
		t.Fatal(err)
	}
	mustExec(t, sb, "USE test")
	mustExec(t, sa, "INSERT INTO t (v) VALUES (2)")
	// Another node's DDL on the written table fails the commit with 8028.
	mustExec(t, sb, "BEGIN")
	mustExec(t, sb, "INSERT INTO t (v) VALUES (3)")
	mustExec(t, sa, "ALTER TABLE t ADD COLUMN w INT")
	_, err := sb.Execute(context.Background(), "COMMIT")
	var se *errno.SQLError
	if !errors.As(err, &se) || se.Code != 8028 {
		t.Fatalf("commit after another node's DDL: %v, want 8028", err)
	}
	mustExec(t, sa, "set global tidb_enable_1pc = 0")
	deadline := time.Now().Add(5 * time.Second)
	for {
		if v, _ := sb.getSysVar("tidb_enable_1pc", false); v == "0" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("node b never saw set global tidb_enable_1pc = 0")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

package catalog

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/embedded"
	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/types"
)

// twoRegistered opens two catalogs on one store, both registered nodes
// with a short lease.
func twoRegistered(t *testing.T, ttl time.Duration) (kv.Storage, *Catalog, *Catalog) {
	t.Helper()
	st, err := embedded.Open(t.TempDir(), embedded.Options{NoSync: true, BlockCacheSize: 8 << 20, MemTableSize: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var cats []*Catalog
	for range 2 {
		c, err := Open(context.Background(), st)
		if err != nil {
			t.Fatal(err)
		}
		c.leaseTTL = ttl
		c.EnableSync()
		if err := c.Register(context.Background()); err != nil {
			t.Fatal(err)
		}
		cats = append(cats, c)
	}
	return st, cats[0], cats[1]
}

func mustDDL(t *testing.T, c *Catalog, fn func(m *Mutator) error) {
	t.Helper()
	if err := c.DDL(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

func createTable(t *testing.T, c *Catalog) *TableInfo {
	t.Helper()
	ft := types.FieldType{Tp: mysql.TypeLong, Flen: 11}
	mustDDL(t, c, func(m *Mutator) error {
		id, err := m.GenID()
		if err != nil {
			return err
		}
		return m.PutDB(&DBInfo{ID: id, Name: "db"})
	})
	mustDDL(t, c, func(m *Mutator) error {
		id, err := m.GenID()
		if err != nil {
			return err
		}
		tb := &TableInfo{ID: id, Name: "t", MaxColumnID: 2, MaxIndexID: 1, PKIsHandle: true,
			Columns: []*ColumnInfo{{ID: 1, Name: "id", Type: ft}, {ID: 2, Name: "a", Type: ft}},
			Indices: []*IndexInfo{{ID: 1, Name: "PRIMARY", Primary: true, Unique: true, Columns: []*IndexColumn{{Name: "id"}}}}}
		return m.PutTable(m.Schema().DB("db"), tb)
	})
	return c.InfoSchema().Table("db", "t")
}

// A DDL step waits for a node that has not loaded its version until that
// node records it, and stops waiting for a node whose record lapsed.
func TestWaitAllNodes(t *testing.T) {
	ctx := context.Background()
	_, a, b := twoRegistered(t, 3*time.Second)
	createTable(t, a)
	v := a.InfoSchema().Version()
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	err := a.waitAllNodes(short, v)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waited for a node on an older version: %v, want a timeout", err)
	}
	if err := b.renew(ctx); err != nil {
		t.Fatal(err)
	}
	if b.InfoSchema().Version() != v {
		t.Fatalf("node b renewed at version %d, want %d", b.InfoSchema().Version(), v)
	}
	if err := a.waitAllNodes(ctx, v); err != nil {
		t.Fatal(err)
	}
	// Node b stops renewing: a waits until its record lapses, no longer.
	mustDDL(t, a, func(m *Mutator) error {
		id, err := m.GenID()
		if err != nil {
			return err
		}
		return m.PutDB(&DBInfo{ID: id, Name: "db2"})
	})
	if err := a.waitAllNodes(ctx, a.InfoSchema().Version()); err != nil {
		t.Fatal(err)
	}
	if alive, err := a.nodeAlive(ctx, b.NodeID()); err != nil || alive {
		t.Fatalf("the wait ended while node b's record was live (%v, %v)", alive, err)
	}
}

// A node whose lease lapsed refuses to commit writes (8027) until it
// renews; a transaction that wrote no table is not concerned.
func TestLapsedLeaseRefusesCommits(t *testing.T) {
	ctx := context.Background()
	_, a, _ := twoRegistered(t, defaultSchemaLeaseTTL)
	tb := createTable(t, a)
	tables := map[int64]*TableInfo{tb.ID: tb}
	commit := func() error { return nil }
	if err := a.CommitGuard(tables, commit); err != nil {
		t.Fatal(err)
	}
	a.leaseStart.Store(a.leaseClock() - int64(a.leaseTTL))
	if err := a.CommitGuard(tables, commit); !errors.Is(err, ErrInfoSchemaExpired) {
		t.Fatalf("commit with a lapsed lease: %v, want 8027", err)
	}
	if err := a.CommitGuard(nil, commit); err != nil {
		t.Fatalf("commit of no table with a lapsed lease: %v", err)
	}
	if err := a.renew(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.CommitGuard(tables, commit); err != nil {
		t.Fatalf("commit after renewing: %v", err)
	}
}

// A node whose renewals failed for a while (the TSO or the stores were
// out) renews when a commit finds the lease lapsed, and the commit goes
// through instead of failing with 8027.
func TestLapsedLeaseRenewsOnCommit(t *testing.T) {
	_, a, _ := twoRegistered(t, defaultSchemaLeaseTTL)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); a.Sync(ctx, time.Hour, nil) }()
	defer func() { cancel(); <-done }()
	tb := createTable(t, a)
	tables := map[int64]*TableInfo{tb.ID: tb}
	a.leaseStart.Store(a.leaseClock() - int64(a.leaseTTL))
	if err := a.CommitGuard(tables, func() error { return nil }); err != nil {
		t.Fatalf("commit with a lapsed lease that can renew: %v", err)
	}
}

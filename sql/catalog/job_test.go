package catalog

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/embedded"
	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/tablecodec"
	"github.com/shoaldb/shoal/types"
)

// stepJob takes each kind of job through F1's states, one step at a time.
func TestStepJobStates(t *testing.T) {
	newTable := func() *TableInfo {
		tb := &TableInfo{ID: 7, Name: "t", MaxColumnID: 3, MaxIndexID: 2, Columns: []*ColumnInfo{
			{ID: 1, Name: "id"}, {ID: 2, Name: "a"}, {ID: 3, Name: "b"},
		}, Indices: []*IndexInfo{
			{ID: 1, Name: "PRIMARY", Primary: true, Columns: []*IndexColumn{{Name: "id"}}},
			{ID: 2, Name: "ia", Columns: []*IndexColumn{{Name: "a"}}},
		}}
		tb.init()
		return tb
	}
	for _, tc := range []struct {
		name  string
		setup func(tb *TableInfo) *SchemaJob
		want  string
	}{
		{"add index", func(tb *TableInfo) *SchemaJob {
			tb.Indices = append(tb.Indices, &IndexInfo{ID: 3, Name: "ib", State: StateDeleteOnly, Columns: []*IndexColumn{{Name: "b"}}})
			return &SchemaJob{Kind: JobAddIndex, Objects: []int64{3}}
		}, "delete-only -> write-only -> public (complete at 42), done"},
		{"add index rolled back in write-only", func(tb *TableInfo) *SchemaJob {
			tb.Indices = append(tb.Indices, &IndexInfo{ID: 3, Name: "ib", State: StateWriteOnly, Columns: []*IndexColumn{{Name: "b"}}})
			return &SchemaJob{Kind: JobAddIndex, Objects: []int64{3}, RollingBack: true}
		}, "write-only -> delete-only -> absent (range queued), done"},
		{"drop index", func(tb *TableInfo) *SchemaJob {
			tb.Indices[1].State = StateWriteOnly
			return &SchemaJob{Kind: JobDropIndex, Objects: []int64{2}}
		}, "write-only -> delete-only -> absent (range queued), done"},
		{"add columns", func(tb *TableInfo) *SchemaJob {
			tb.Columns = append(tb.Columns, &ColumnInfo{ID: 4, Name: "c", State: StateDeleteOnly}, &ColumnInfo{ID: 5, Name: "d", State: StateDeleteOnly})
			return &SchemaJob{Kind: JobAddColumn, Objects: []int64{4, 5}}
		}, "delete-only -> write-only -> public, done"},
		{"add column rolled back", func(tb *TableInfo) *SchemaJob {
			tb.Columns = append(tb.Columns, &ColumnInfo{ID: 4, Name: "c", State: StateDeleteOnly})
			return &SchemaJob{Kind: JobAddColumn, Objects: []int64{4}, RollingBack: true}
		}, "delete-only -> absent, done"},
		{"drop column with its index", func(tb *TableInfo) *SchemaJob {
			tb.Columns = append(tb.Columns, &ColumnInfo{ID: 4, Name: "c"})
			tb.Indices = append(tb.Indices, &IndexInfo{ID: 5, Name: "ic", Columns: []*IndexColumn{{Name: "c"}}})
			tb.Columns[3].State, tb.Indices[2].State = StateWriteOnly, StateWriteOnly
			return &SchemaJob{Kind: JobDropColumn, Objects: []int64{4}, Indexes: []int64{5}}
		}, "write-only -> delete-only -> absent (range queued), done"},
		{"drop column", func(tb *TableInfo) *SchemaJob {
			tb.Columns[2].State = StateWriteOnly
			return &SchemaJob{Kind: JobDropColumn, Objects: []int64{3}}
		}, "write-only -> delete-only -> absent, done"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb := newTable()
			tb.Job = tc.setup(tb)
			tb.Job.TableID = tb.ID
			tb.init()
			st, err := tb.Job.state(tb)
			if err != nil {
				t.Fatal(err)
			}
			steps := []string{st.String()}
			for i := 0; tb.Job != nil; i++ {
				if i > 5 {
					t.Fatal("job does not end")
				}
				j := tb.Job
				dropped, err := stepJob(tb, 42)
				if err != nil {
					t.Fatal(err)
				}
				tb.init()
				var objs []SchemaState
				for _, id := range j.Objects {
					if j.onIndex() {
						if idx := tb.IndexByID(id); idx != nil {
							objs = append(objs, idx.State)
						}
					} else if c := tb.ColumnByID(id); c != nil {
						objs = append(objs, c.State)
					}
				}
				switch {
				case len(objs) == 0:
					s := "absent"
					if len(dropped) > 0 {
						ids := j.Indexes
						if j.onIndex() {
							ids = j.Objects[:1]
						}
						if len(dropped) != len(ids) {
							t.Fatalf("queued %v, want the prefixes of indexes %v", dropped, ids)
						}
						for i, id := range ids {
							prefix := kv.Key(tablecodec.IndexPrefix(tb.ID, id))
							if string(dropped[i].Start) != string(prefix) || string(dropped[i].End) != string(prefix.PrefixNext()) {
								t.Fatalf("queued %v, want the prefixes of indexes %v", dropped, ids)
							}
						}
						s += " (range queued)"
					}
					steps = append(steps, s)
				case objs[0] == StatePublic && j.onIndex():
					steps = append(steps, fmt.Sprintf("public (complete at %d)", tb.IndexByID(j.Objects[0]).CompleteTS))
				default:
					for _, o := range objs[1:] {
						if o != objs[0] {
							t.Fatalf("objects of one job in states %v", objs)
						}
					}
					steps = append(steps, objs[0].String())
				}
			}
			if got := strings.Join(steps, " -> ") + ", done"; got != tc.want {
				t.Fatalf("got %s\nwant %s", got, tc.want)
			}
			// Offsets follow the columns that remain.
			for i, c := range tb.Columns {
				if c.Offset != i {
					t.Fatalf("column %s at offset %d, want %d", c.Name, c.Offset, i)
				}
			}
		})
	}
}

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

// A job whose node is alive makes other DDLs on its table wait; once that
// node's record lapses, the next DDL takes the job over and rolls the ADD
// back before running.
func TestJobOfDeadNodeIsRolledBack(t *testing.T) {
	ctx := context.Background()
	_, a, b := twoRegistered(t, time.Second)
	tb := createTable(t, a)
	// Node a starts adding an index and dies before driving the job.
	var job *SchemaJob
	mustDDL(t, a, func(m *Mutator) error {
		nt := m.Schema().TableByID(tb.ID).Clone()
		nt.MaxIndexID++
		nt.Indices = append(nt.Indices, &IndexInfo{ID: nt.MaxIndexID, Name: "ia", State: StateDeleteOnly, Columns: []*IndexColumn{{Name: "a"}}})
		var err error
		job, err = m.StartJob(m.Schema().DB("db"), nt, JobAddIndex, nt.MaxIndexID)
		return err
	})
	if err := b.renew(ctx); err != nil {
		t.Fatal(err)
	}
	if got := b.InfoSchema().Table("db", "t"); got.Job == nil || got.IndexByID(job.Objects[0]).State != StateDeleteOnly || got.FindIndex("ia") != nil {
		t.Fatalf("node b sees %+v", got)
	}
	// Node b's DDL on the table waits while a's record is live, then
	// settles the job.
	err := b.DDL(ctx, func(m *Mutator) error {
		nt := m.Schema().Table("db", "t").Clone()
		nt.Comment = "after"
		return m.PutTable(m.Schema().DB("db"), nt)
	})
	if err != nil {
		t.Fatal(err)
	}
	if alive, err := b.nodeAlive(ctx, a.NodeID()); err != nil || alive {
		t.Fatalf("node b took over while node a was live (%v, %v)", alive, err)
	}
	got := b.InfoSchema().Table("db", "t")
	if got.Job != nil || len(got.Indices) != 1 || got.Comment != "after" {
		t.Fatalf("after settling: job %+v, %d indexes, comment %q", got.Job, len(got.Indices), got.Comment)
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

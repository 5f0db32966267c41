package ddl

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/embedded"
	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/sql/catalog"
	"github.com/shoaldb/shoal/tablecodec"
	"github.com/shoaldb/shoal/types"
)

// stepJob takes each kind of job through F1's states, one step at a time.
func TestStepJobStates(t *testing.T) {
	newTable := func() *catalog.TableInfo {
		tb := &catalog.TableInfo{ID: 7, Name: "t", MaxColumnID: 3, MaxIndexID: 2, Columns: []*catalog.ColumnInfo{
			{ID: 1, Name: "id"}, {ID: 2, Name: "a"}, {ID: 3, Name: "b"},
		}, Indices: []*catalog.IndexInfo{
			{ID: 1, Name: "PRIMARY", Primary: true, Columns: []*catalog.IndexColumn{{Name: "id"}}},
			{ID: 2, Name: "ia", Columns: []*catalog.IndexColumn{{Name: "a"}}},
		}}
		return tb
	}
	for _, tc := range []struct {
		name  string
		setup func(tb *catalog.TableInfo) *catalog.SchemaJob
		want  string
	}{
		{"add index", func(tb *catalog.TableInfo) *catalog.SchemaJob {
			tb.Indices = append(tb.Indices, &catalog.IndexInfo{ID: 3, Name: "ib", State: catalog.StateDeleteOnly, Columns: []*catalog.IndexColumn{{Name: "b"}}})
			return &catalog.SchemaJob{Kind: JobAddIndex, Objects: []int64{3}}
		}, "delete-only -> write-only -> public (complete at 42), done"},
		{"add index rolled back in write-only", func(tb *catalog.TableInfo) *catalog.SchemaJob {
			tb.Indices = append(tb.Indices, &catalog.IndexInfo{ID: 3, Name: "ib", State: catalog.StateWriteOnly, Columns: []*catalog.IndexColumn{{Name: "b"}}})
			return &catalog.SchemaJob{Kind: JobAddIndex, Objects: []int64{3}, RollingBack: true}
		}, "write-only -> delete-only -> absent (range queued), done"},
		{"drop index", func(tb *catalog.TableInfo) *catalog.SchemaJob {
			tb.Indices[1].State = catalog.StateWriteOnly
			return &catalog.SchemaJob{Kind: JobDropIndex, Objects: []int64{2}}
		}, "write-only -> delete-only -> absent (range queued), done"},
		{"add columns", func(tb *catalog.TableInfo) *catalog.SchemaJob {
			tb.Columns = append(tb.Columns, &catalog.ColumnInfo{ID: 4, Name: "c", State: catalog.StateDeleteOnly}, &catalog.ColumnInfo{ID: 5, Name: "d", State: catalog.StateDeleteOnly})
			return &catalog.SchemaJob{Kind: JobAddColumn, Objects: []int64{4, 5}}
		}, "delete-only -> write-only -> public, done"},
		{"add column rolled back", func(tb *catalog.TableInfo) *catalog.SchemaJob {
			tb.Columns = append(tb.Columns, &catalog.ColumnInfo{ID: 4, Name: "c", State: catalog.StateDeleteOnly})
			return &catalog.SchemaJob{Kind: JobAddColumn, Objects: []int64{4}, RollingBack: true}
		}, "delete-only -> absent, done"},
		{"drop column with its index", func(tb *catalog.TableInfo) *catalog.SchemaJob {
			tb.Columns = append(tb.Columns, &catalog.ColumnInfo{ID: 4, Name: "c"})
			tb.Indices = append(tb.Indices, &catalog.IndexInfo{ID: 5, Name: "ic", Columns: []*catalog.IndexColumn{{Name: "c"}}})
			tb.Columns[3].State, tb.Indices[2].State = catalog.StateWriteOnly, catalog.StateWriteOnly
			return &catalog.SchemaJob{Kind: JobDropColumn, Objects: []int64{4}, Indexes: []int64{5}}
		}, "write-only -> delete-only -> absent (range queued), done"},
		{"drop column", func(tb *catalog.TableInfo) *catalog.SchemaJob {
			tb.Columns[2].State = catalog.StateWriteOnly
			return &catalog.SchemaJob{Kind: JobDropColumn, Objects: []int64{3}}
		}, "write-only -> delete-only -> absent, done"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb := newTable()
			tb.Job = tc.setup(tb)
			tb.Job.TableID = tb.ID
			st, err := jobState(tb.Job, tb)
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
				var objs []catalog.SchemaState
				for _, id := range j.Objects {
					if jobOnIndex(j) {
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
						if jobOnIndex(j) {
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
				case objs[0] == catalog.StatePublic && jobOnIndex(j):
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
		})
	}
}

// twoRegistered opens two catalogs on one store, both registered nodes
// with a short lease that settle jobs with this package.
func twoRegistered(t *testing.T, ttl time.Duration) (*catalog.Catalog, *catalog.Catalog) {
	t.Helper()
	st, err := embedded.Open(t.TempDir(), embedded.Options{NoSync: true, BlockCacheSize: 8 << 20, MemTableSize: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var cats []*catalog.Catalog
	for range 2 {
		c, err := catalog.Open(context.Background(), st)
		if err != nil {
			t.Fatal(err)
		}
		AttachJobs(c)
		c.SetSchemaLeaseTTL(ttl)
		c.EnableSync()
		if err := c.Register(context.Background()); err != nil {
			t.Fatal(err)
		}
		cats = append(cats, c)
	}
	return cats[0], cats[1]
}

func mustDDL(t *testing.T, c *catalog.Catalog, fn func(m *catalog.Mutator) error) {
	t.Helper()
	if err := c.DDL(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

// createTable creates db.t (id INT PRIMARY KEY, a INT).
func createTable(t *testing.T, c *catalog.Catalog) *catalog.TableInfo {
	t.Helper()
	ft := types.FieldType{Tp: mysql.TypeLong, Flen: 11}
	mustDDL(t, c, func(m *catalog.Mutator) error {
		id, err := m.GenID()
		if err != nil {
			return err
		}
		return m.PutDB(&catalog.DBInfo{ID: id, Name: "db"})
	})
	mustDDL(t, c, func(m *catalog.Mutator) error {
		id, err := m.GenID()
		if err != nil {
			return err
		}
		tb := &catalog.TableInfo{ID: id, Name: "t", MaxColumnID: 2, MaxIndexID: 1, PKIsHandle: true,
			Columns: []*catalog.ColumnInfo{{ID: 1, Name: "id", Type: ft}, {ID: 2, Name: "a", Type: ft}},
			Indices: []*catalog.IndexInfo{{ID: 1, Name: "PRIMARY", Primary: true, Unique: true, Columns: []*catalog.IndexColumn{{Name: "id"}}}}}
		return m.PutTable(m.Schema().DB("db"), tb)
	})
	return c.InfoSchema().Table("db", "t")
}

// A job whose node is alive makes other DDLs on its table wait; once that
// node's record lapses, the next DDL takes the job over and rolls the ADD
// back before running.
func TestJobOfDeadNodeIsRolledBack(t *testing.T) {
	ctx := context.Background()
	a, b := twoRegistered(t, time.Second)
	tb := createTable(t, a)
	// Node a starts adding an index and dies before driving the job.
	var job *catalog.SchemaJob
	mustDDL(t, a, func(m *catalog.Mutator) error {
		nt := m.Schema().TableByID(tb.ID).Clone()
		nt.MaxIndexID++
		nt.Indices = append(nt.Indices, &catalog.IndexInfo{ID: nt.MaxIndexID, Name: "ia", State: catalog.StateDeleteOnly, Columns: []*catalog.IndexColumn{{Name: "a"}}})
		var err error
		job, err = m.StartJob(m.Schema().DB("db"), nt, JobAddIndex, nt.MaxIndexID)
		return err
	})
	// Registering again renews b's record, loading a's DDL.
	if err := b.Register(ctx); err != nil {
		t.Fatal(err)
	}
	if got := b.InfoSchema().Table("db", "t"); got.Job == nil || got.IndexByID(job.Objects[0]).State != catalog.StateDeleteOnly || got.FindIndex("ia") != nil {
		t.Fatalf("node b sees %+v", got)
	}
	// Node b's DDL on the table waits while a's record is live, then
	// settles the job.
	err := b.DDL(ctx, func(m *catalog.Mutator) error {
		nt := m.Schema().Table("db", "t").Clone()
		nt.Comment = "after"
		return m.PutTable(m.Schema().DB("db"), nt)
	})
	if err != nil {
		t.Fatal(err)
	}
	if alive, err := b.JobOwnerAlive(ctx, &catalog.SchemaJob{Owner: a.NodeID()}); err != nil || alive {
		t.Fatalf("node b took over while node a was live (%v, %v)", alive, err)
	}
	got := b.InfoSchema().Table("db", "t")
	if got.Job != nil || len(got.Indices) != 1 || got.Comment != "after" {
		t.Fatalf("after settling: job %+v, %d indexes, comment %q", got.Job, len(got.Indices), got.Comment)
	}
}

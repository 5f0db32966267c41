package catalog_test

import (
	"context"
	"sync"
	"testing"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	_ "github.com/pingcap/tidb/pkg/parser/test_driver"
	"github.com/shoaldb/shoal/embedded"
	"github.com/shoaldb/shoal/sql/catalog"
	"github.com/shoaldb/shoal/sql/ddl"
)

type env struct {
	t     *testing.T
	dir   string
	store *embedded.Embedded
	cat   *catalog.Catalog
}

func openEnv(t *testing.T, dir string) *env {
	t.Helper()
	store, err := embedded.Open(dir, embedded.Options{BlockCacheSize: 8 << 20, MemTableSize: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Open(context.Background(), store)
	if err != nil {
		store.Close()
		t.Fatal(err)
	}
	return &env{t: t, dir: dir, store: store, cat: cat}
}

// reopen closes the store and opens it again, as a server restart does.
func (e *env) reopen() *env {
	e.t.Helper()
	if err := e.store.Close(); err != nil {
		e.t.Fatal(err)
	}
	return openEnv(e.t, e.dir)
}

func (e *env) ddl(sql string) {
	e.t.Helper()
	stmts, _, err := parser.New().ParseSQL(sql)
	if err != nil {
		e.t.Fatal(err)
	}
	d := &ddl.DDL{Catalog: e.cat, CurrentDB: "db"}
	for _, st := range stmts {
		if err := d.Exec(context.Background(), st.(ast.DDLNode)); err != nil {
			e.t.Fatalf("%s: %v", sql, err)
		}
	}
}

func TestSchemaSurvivesReopen(t *testing.T) {
	e := openEnv(t, t.TempDir())
	e.ddl("CREATE DATABASE db")
	e.ddl("CREATE TABLE t (id INT PRIMARY KEY, a VARCHAR(20) NOT NULL DEFAULT 'x', b INT, KEY ib (b)) COMMENT 'c'")
	e.ddl("CREATE TABLE u (a INT, b INT, PRIMARY KEY (a, b))")
	e.ddl("CREATE UNIQUE INDEX ua ON t (a)")
	e.ddl("ALTER TABLE t ADD COLUMN c INT")
	e.ddl("CREATE TABLE gone (x INT)")
	e.ddl("DROP TABLE gone")
	e.ddl("CREATE VIEW v AS SELECT id FROM t")
	before := e.cat.InfoSchema()
	tb := before.Table("db", "t")

	e = e.reopen()
	defer e.store.Close()
	is := e.cat.InfoSchema()
	if is.Version() != before.Version() {
		t.Errorf("schema version %d after reopen, want %d", is.Version(), before.Version())
	}
	if is.DB("db") == nil {
		t.Fatal("database db lost")
	}
	ta := is.Table("db", "t")
	if ta == nil {
		t.Fatal("table t lost")
	}
	if ta.ID != tb.ID || len(ta.Columns) != 4 || len(ta.Indices) != len(tb.Indices) || ta.Comment != "c" {
		t.Errorf("table t after reopen: id %d cols %d idx %d comment %q; before: id %d idx %d",
			ta.ID, len(ta.Columns), len(ta.Indices), ta.Comment, tb.ID, len(tb.Indices))
	}
	a := ta.FindColumn("a")
	if a == nil || a.Default == nil || *a.Default != "x" || !a.HasDefault {
		t.Errorf("column a default lost: %+v", a)
	}
	if c := ta.FindColumn("c"); c == nil || c.Offset != 3 {
		t.Errorf("added column c after reopen: %+v", c)
	}
	var names []string
	for _, ix := range ta.Indices {
		names = append(names, ix.Name)
	}
	if len(names) != len(tb.Indices) {
		t.Errorf("indices after reopen: %v", names)
	}
	if u := is.Table("db", "u"); u == nil || !u.CommonHandle {
		t.Errorf("table u (composite pk) after reopen: %+v", u)
	}
	if is.Table("db", "gone") != nil {
		t.Error("dropped table came back after reopen")
	}
	if v := is.Table("db", "v"); v == nil || v.View == "" {
		t.Errorf("view after reopen: %+v", v)
	}
	// IDs are not reused after a restart.
	e.ddl("CREATE TABLE t2 (x INT)")
	t2 := e.cat.InfoSchema().Table("db", "t2")
	for _, old := range []*catalog.TableInfo{tb, before.Table("db", "u")} {
		if t2.ID == old.ID {
			t.Errorf("new table reuses id %d", t2.ID)
		}
	}
	if e.cat.InfoSchema().Version() <= before.Version() {
		t.Error("schema version did not advance after DDL")
	}
}

func TestAutoIDMonotonic(t *testing.T) {
	e := openEnv(t, t.TempDir())
	defer func() { e.store.Close() }()
	ctx := context.Background()
	e.ddl("CREATE DATABASE db")
	e.ddl("CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY)")
	id := e.cat.InfoSchema().Table("db", "t").ID

	first, err := e.cat.AllocAutoID(ctx, id, 1)
	if err != nil {
		t.Fatal(err)
	}
	if first != 1 {
		t.Errorf("first id %d, want 1", first)
	}
	last := first
	for i := 0; i < 10; i++ {
		n, err := e.cat.AllocAutoID(ctx, id, 3)
		if err != nil {
			t.Fatal(err)
		}
		if n != last+1 && i == 0 || n <= last {
			t.Fatalf("allocation %d returned %d after %d", i, n, last)
		}
		last = n + 2
	}

	// Concurrent allocations never hand out the same id.
	var mu sync.Mutex
	seen := map[int64]bool{}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				n, err := e.cat.AllocAutoID(ctx, id, 2)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for _, v := range []int64{n, n + 1} {
					if seen[v] || v <= last {
						t.Errorf("id %d handed out twice", v)
					}
					seen[v] = true
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	var maxSeen int64
	for v := range seen {
		maxSeen = max(maxSeen, v)
	}

	// After a restart, ids continue above everything handed out before.
	e = e.reopen()
	n, err := e.cat.AllocAutoID(ctx, id, 1)
	if err != nil {
		t.Fatal(err)
	}
	if n <= maxSeen {
		t.Errorf("after reopen allocated %d, not above %d", n, maxSeen)
	}
}

func TestAutoIDRebase(t *testing.T) {
	e := openEnv(t, t.TempDir())
	defer func() { e.store.Close() }()
	ctx := context.Background()
	e.ddl("CREATE DATABASE db")
	e.ddl("CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY)")
	id := e.cat.InfoSchema().Table("db", "t").ID

	alloc := func() int64 {
		t.Helper()
		n, err := e.cat.AllocAutoID(ctx, id, 1)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	rebase := func(v int64) {
		t.Helper()
		if err := e.cat.RebaseAutoID(ctx, id, v); err != nil {
			t.Fatal(err)
		}
	}
	if n := alloc(); n != 1 {
		t.Fatalf("first id %d", n)
	}
	// Rebase within the cached range.
	rebase(10)
	if n := alloc(); n != 11 {
		t.Errorf("after rebase(10): %d, want 11", n)
	}
	// Rebase below the current value does nothing.
	rebase(5)
	if n := alloc(); n != 12 {
		t.Errorf("after rebase(5): %d, want 12", n)
	}
	// Rebase far beyond the cached range.
	rebase(1_000_000)
	if n := alloc(); n != 1_000_001 {
		t.Errorf("after rebase(1000000): %d, want 1000001", n)
	}
	// A rebase on a fresh allocator (no allocation yet) also holds.
	e = e.reopen()
	rebase(2_000_000)
	if n := alloc(); n != 2_000_001 {
		t.Errorf("after reopen and rebase(2000000): %d, want 2000001", n)
	}
	// The rebase is persisted: after a restart ids stay above it.
	e = e.reopen()
	if n := alloc(); n <= 2_000_001 {
		t.Errorf("after reopen: %d, want > 2000001", n)
	}
	// A rebase below the persisted mark after a restart never goes back.
	e = e.reopen()
	rebase(3)
	if n := alloc(); n <= 2_000_001 {
		t.Errorf("after reopen and rebase(3): %d, want > 2000001", n)
	}
}

package catalog_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/shoaldb/shoal/sql/catalog"
	"github.com/shoaldb/shoal/sql/ddl"
)

// twoNodes opens a second Catalog on e's store, as a second SQL node of a
// cluster sees the same kv.
func twoNodes(t *testing.T) (*env, *catalog.Catalog) {
	e := openEnv(t, t.TempDir())
	t.Cleanup(func() { e.store.Close() })
	b, err := catalog.Open(context.Background(), e.store)
	if err != nil {
		t.Fatal(err)
	}
	e.cat.EnableSync()
	b.EnableSync()
	return e, b
}

func ddlOn(c *catalog.Catalog, sql string) error {
	stmts, _, err := parser.New().ParseSQL(sql)
	if err != nil {
		return err
	}
	d := &ddl.DDL{Catalog: c, CurrentDB: "db"}
	return d.Exec(context.Background(), stmts[0].(ast.DDLNode))
}

// A DDL on one node becomes visible on another after Refresh, and a DDL
// run on a node with a stale schema builds on the stored one.
func TestSchemaSharedAcrossNodes(t *testing.T) {
	a, b := twoNodes(t)
	ctx := context.Background()
	a.ddl("CREATE DATABASE db")
	a.ddl("CREATE TABLE t (id INT PRIMARY KEY)")
	if b.InfoSchema().Table("db", "t") != nil {
		t.Fatal("node b saw the table before a refresh")
	}
	if changed, err := b.Refresh(ctx); err != nil || !changed {
		t.Fatalf("refresh: %v %v", changed, err)
	}
	if b.InfoSchema().Table("db", "t") == nil || b.InfoSchema().Version() != a.cat.InfoSchema().Version() {
		t.Fatal("node b does not see table t after a refresh")
	}
	if changed, _ := b.Refresh(ctx); changed {
		t.Fatal("second refresh reloaded an unchanged schema")
	}
	// Stale node a (b creates u), then a creates v: both must survive.
	if err := ddlOn(b, "CREATE TABLE u (id INT PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	a.ddl("CREATE TABLE v (id INT PRIMARY KEY)")
	is := a.cat.InfoSchema()
	if is.Table("db", "u") == nil || is.Table("db", "v") == nil || is.Table("db", "t") == nil {
		t.Fatal("a DDL on a stale node lost another node's table")
	}
	if _, err := b.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if b.InfoSchema().Table("db", "v") == nil {
		t.Fatal("node b does not see v")
	}
}

// Concurrent DDLs on two nodes all succeed (the loser of a version-key
// conflict reruns on the winner's schema) and none is lost.
func TestConcurrentDDLAcrossNodes(t *testing.T) {
	a, b := twoNodes(t)
	a.ddl("CREATE DATABASE db")
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := range 10 {
		for n, c := range []*catalog.Catalog{a.cat, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- ddlOn(c, fmt.Sprintf("CREATE TABLE t%d_%d (id INT PRIMARY KEY)", n, i))
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := len(b.InfoSchema().Tables("db")); got != 20 {
		t.Fatalf("%d tables, want 20", got)
	}
	ids := map[int64]bool{}
	for _, tb := range b.InfoSchema().Tables("db") {
		if ids[tb.ID] {
			t.Fatalf("table id %d used twice", tb.ID)
		}
		ids[tb.ID] = true
	}
}

// A commit planned on node b before node a changed the table fails with
// 8028; one on an untouched table still commits.
func TestCommitGuardSeesOtherNodesDDL(t *testing.T) {
	a, b := twoNodes(t)
	ctx := context.Background()
	a.ddl("CREATE DATABASE db")
	a.ddl("CREATE TABLE t (id INT PRIMARY KEY, x INT)")
	a.ddl("CREATE TABLE other (id INT PRIMARY KEY)")
	if _, err := b.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	tb := b.InfoSchema().Table("db", "t")
	ob := b.InfoSchema().Table("db", "other")
	a.ddl("CREATE INDEX ix ON t (x)")
	ran := false
	err := b.CommitGuard(map[int64]*catalog.TableInfo{tb.ID: tb}, func() error { ran = true; return nil })
	if !errors.Is(err, catalog.ErrSchemaChanged) || ran {
		t.Fatalf("commit after another node's DDL: err %v, ran %v", err, ran)
	}
	if err := b.CommitGuard(map[int64]*catalog.TableInfo{ob.ID: ob}, func() error { ran = true; return nil }); err != nil || !ran {
		t.Fatalf("commit on an untouched table: err %v, ran %v", err, ran)
	}
}

// Auto-increment ranges reserved by two nodes never overlap.
func TestAutoIDAcrossNodes(t *testing.T) {
	a, b := twoNodes(t)
	ctx := context.Background()
	seen := map[int64]bool{}
	for i := range 3 {
		for _, c := range []*catalog.Catalog{a.cat, b} {
			first, err := c.AllocAutoID(ctx, 42, 5000)
			if err != nil {
				t.Fatal(err)
			}
			for id := first; id < first+5000; id++ {
				if seen[id] {
					t.Fatalf("round %d: id %d handed out twice", i, id)
				}
				seen[id] = true
			}
		}
	}
}

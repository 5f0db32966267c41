package catalog

import (
	"context"
	"testing"
	"time"
)

// A commit in flight under an old schema holds the node's drained version
// back without holding anything else up: the new schema is published and
// later commits go through meanwhile.
func TestCommitGateDrainsWithoutBlocking(t *testing.T) {
	_, a, b := twoRegistered(t, defaultSchemaLeaseTTL)
	tb := createTable(t, a)
	old := a.InfoSchema().Version()
	release, entered, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		done <- a.CommitGuard(map[int64]*TableInfo{tb.ID: tb}, func() error {
			close(entered)
			<-release
			return nil
		})
	}()
	<-entered
	// Another table's DDL publishes a new schema at once.
	mustDDL(t, a, func(m *Mutator) error {
		id, err := m.GenID()
		if err != nil {
			return err
		}
		return m.PutDB(&DBInfo{ID: id, Name: "db2"})
	})
	if v := a.InfoSchema().Version(); v <= old {
		t.Fatalf("version %d after a DDL, want > %d", v, old)
	}
	if d := a.commits.drained(); d != old {
		t.Fatalf("drained %d with a commit in flight under %d", d, old)
	}
	if err := a.CommitGuard(map[int64]*TableInfo{tb.ID: a.InfoSchema().TableByID(tb.ID)}, func() error { return nil }); err != nil {
		t.Fatalf("a commit under the new schema: %v", err)
	}
	if err := b.renew(context.Background()); err != nil { // node b is not what holds the wait up
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := a.waitAllNodes(short, a.InfoSchema().Version()); err == nil {
		t.Fatal("waitAllNodes returned with this node's own commit in flight under an older schema")
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if d, v := a.commits.drained(), a.InfoSchema().Version(); d != v {
		t.Fatalf("drained %d once the old commit finished, want %d", d, v)
	}
}

package session

import (
	"context"
	"testing"
	"time"

	"github.com/shoaldb/shoal/embedded"
)

// TestHotVarsFollowChanges: the per-session cache of the variables every
// statement reads sees a SET in the session and a SET GLOBAL from another
// session (for variables the session has not set itself).
func TestHotVarsFollowChanges(t *testing.T) {
	be := newEmbeddedBackend(t)
	ctx := context.Background()
	open := func() *Session {
		c, err := be.NewSession(ctx, "root", "127.0.0.1", "test")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		return c.(*Session)
	}
	a, b := open(), open()
	run := func(s *Session, q string) {
		t.Helper()
		if _, err := s.Execute(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if !a.autocommit() || a.lockWait() != 50*time.Second {
		t.Fatalf("defaults: autocommit %v, lock wait %v", a.autocommit(), a.lockWait())
	}
	run(a, "SET autocommit = 0")
	run(a, "SET innodb_lock_wait_timeout = 7")
	run(a, "SET time_zone = '+01:00'")
	if a.autocommit() || a.lockWait() != 7*time.Second || a.timeZone().Name() != "+01:00" {
		t.Fatalf("after SET: autocommit %v, lock wait %v, zone %v", a.autocommit(), a.lockWait(), a.timeZone())
	}
	if !b.autocommit() || b.lockWait() != 50*time.Second {
		t.Fatalf("other session changed: autocommit %v, lock wait %v", b.autocommit(), b.lockWait())
	}
	run(b, "SET GLOBAL max_execution_time = 1234")
	if got := a.hot().maxExecution; got != 1234*time.Millisecond {
		t.Fatalf("global max_execution_time seen as %v", got)
	}
	run(b, "SET GLOBAL innodb_lock_wait_timeout = 9")
	if a.lockWait() != 7*time.Second {
		t.Fatalf("session value lost to the global: %v", a.lockWait())
	}
}

// newEmbeddedBackend is a SQL layer over a fresh embedded store, both
// closed when the test ends.
func newEmbeddedBackend(t testing.TB) *Backend {
	t.Helper()
	store, err := embedded.Open(t.TempDir(), embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	be, err := NewBackend(store, Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(be.Close)
	return be
}

package session

import (
	"context"
	"testing"
	"time"

	"github.com/shoaldb/shoal/errno"
)

// Two SQL nodes on one store: an account created on one logs in on the
// other once its background refresh ran, and a REVOKE on one reaches an
// open session on the other.
func TestPrivilegeChangesReachOtherNodes(t *testing.T) {
	st, _ := openProbe(t)
	cfg := Config{SchemaSyncInterval: 20 * time.Millisecond}
	n1, n2 := newNode(t, st, cfg), newNode(t, st, cfg)
	s1 := newSess(t, n1)
	mustExec(t, s1, "CREATE USER alice@'%' IDENTIFIED BY 'pw'")
	mustExec(t, s1, "GRANT SELECT ON test.* TO alice")
	mustExec(t, s1, "CREATE TABLE t (a INT PRIMARY KEY)")
	pollUntil(t, func() bool { _, ok := n2.LookupAccount("alice", "10.0.0.1"); return ok })
	c, err := n2.NewSession(context.Background(), "alice", "10.0.0.1", "test")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	alice := c.(*Session)
	pollUntil(t, func() bool { _, err := alice.Execute(context.Background(), "SELECT a FROM t"); return err == nil })
	mustExec(t, s1, "REVOKE SELECT ON test.* FROM alice")
	pollUntil(t, func() bool {
		_, err := alice.Execute(context.Background(), "SELECT a FROM t")
		se, ok := err.(*errno.SQLError)
		return ok && se.Code == 1142
	})
}

// pollUntil polls cond for at most 10 s.
func pollUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached within 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

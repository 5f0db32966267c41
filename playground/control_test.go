package playground

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func statusServer(t *testing.T, doc map[string]any) string {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(doc)
	}))
	t.Cleanup(s.Close)
	return strings.TrimPrefix(s.URL, "http://")
}

// A fake one-store cluster whose "store" is `sleep`: Kill, Restart (same
// arguments, healthy again), Pause and Resume, and Stop afterwards.
func TestKillRestartPause(t *testing.T) {
	dir := t.TempDir()
	st := statusServer(t, map[string]any{"health": true})
	log := filepath.Join(dir, "store-1.log")
	p, err := startProc("store-1", log, "sleep", "60")
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{opts: Options{DataDir: dir}, Layout: Layout{Store: []StoreAddrs{{Status: st}}}, stores: []*proc{p}}
	c.opts.fill()
	c.opts.StopTimeout = 2 * time.Second
	t.Cleanup(func() { c.Stop() })

	if got := c.ProcessNames(); len(got) != 1 || got[0] != "store-1" {
		t.Fatalf("names %v", got)
	}
	if got := c.NamesOf(RoleStore); len(got) != 1 {
		t.Fatalf("stores %v", got)
	}
	if err := c.Kill("store-9"); err == nil {
		t.Fatal("kill of an unknown name succeeded")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.Restart(ctx, "store-1"); err == nil {
		t.Fatal("restart of a running process succeeded")
	}
	if err := c.Pause("store-1"); err != nil {
		t.Fatal(err)
	}
	pid := c.Pid("store-1")
	if err := c.Kill("store-1"); err != nil { // kills a paused process too
		t.Fatal(err)
	}
	if c.Running("store-1") {
		t.Fatal("still running after Kill")
	}
	if err := c.Kill("store-1"); err != nil {
		t.Fatalf("second kill: %v", err)
	}
	if ok, err := p.exited(); !ok || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("exit: %v %v", ok, err)
	}
	if err := c.Restart(ctx, "store-1"); err != nil {
		t.Fatal(err)
	}
	np := c.stores[0]
	if !c.Running("store-1") || c.Pid("store-1") == pid {
		t.Fatalf("restart: running %v pid %d (old %d)", c.Running("store-1"), c.Pid("store-1"), pid)
	}
	if strings.Join(np.cmd.Args[1:], " ") != "60" || np.logPath != log {
		t.Fatalf("restarted with %q log %s", np.cmd.Args, np.logPath)
	}
	if err := c.Pause("store-1"); err != nil {
		t.Fatal(err)
	}
	if err := c.Resume("store-1"); err != nil {
		t.Fatal(err)
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if ok, err := np.exited(); !ok {
		t.Fatal("not stopped")
	} else if ee, _ := err.(interface{ Sys() any }); ee != nil {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signal() != syscall.SIGTERM {
			t.Fatalf("stopped by %v, want SIGTERM", ws.Signal())
		}
	}
	if err := c.Restart(ctx, "store-1"); err == nil {
		t.Fatal("restart after Stop succeeded")
	}
}

func TestPDLeaderOf(t *testing.T) {
	follower := statusServer(t, map[string]any{"name": "pd-1", "is_leader": false, "health": true})
	leader := statusServer(t, map[string]any{"name": "pd-2", "is_leader": true, "health": true})
	other := statusServer(t, map[string]any{"name": "pd-3", "is_leader": true, "health": true})
	pds := []PDAddrs{{Status: follower}, {Status: leader}, {Status: other}}
	if _, err := PDLeaderOf(pds, nil); err == nil || !strings.Contains(err.Error(), "several") {
		t.Fatalf("two leaders: %v", err)
	}
	name, err := PDLeaderOf(pds, func(i int) bool { return i != 2 })
	if err != nil || name != "pd-2" {
		t.Fatalf("leader %q %v", name, err)
	}
	if _, err := PDLeaderOf(pds[:1], nil); err == nil {
		t.Fatal("no leader found a leader")
	}
}

func TestStatusAddr(t *testing.T) {
	l, _ := NewLayout(4000, 3, 3, 2)
	c := &Cluster{Layout: l}
	if c.StatusAddr("pd-2") != l.PD[1].Status || c.StatusAddr("store-3") != l.Store[2].Status || c.StatusAddr("sql-1") != l.SQL[0].Status {
		t.Fatal("status addresses")
	}
	for _, n := range []string{"pd-4", "sql-0", "haproxy", "store-x"} {
		if c.StatusAddr(n) != "" {
			t.Fatalf("%s has a status address", n)
		}
	}
}

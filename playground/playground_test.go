package playground

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLayout(t *testing.T) {
	l, err := NewLayout(4000, 3, 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	if l.HAProxy != "127.0.0.1:4000" || l.SQL[0].MySQL != "127.0.0.1:4001" || l.SQL[1].MySQL != "127.0.0.1:4002" {
		t.Fatalf("haproxy/sql ports: %+v", l)
	}
	seen := map[string]bool{}
	for _, a := range l.All() {
		if seen[a] {
			t.Fatalf("address %s used twice", a)
		}
		seen[a] = true
		if !strings.HasPrefix(a, "127.0.0.1:") {
			t.Fatalf("%s is not loopback", a)
		}
	}
	if len(seen) != 1+2*2+3*3+3*2 {
		t.Fatalf("%d addresses", len(seen))
	}
	if l.Proxied() {
		t.Fatal("a plain layout says it is proxied")
	}
	pl := l.WithFaultProxies()
	if !pl.Proxied() || pl.Store[1].GRPC != l.Store[1].GRPC || pl.Store[1].Listen == pl.Store[1].GRPC ||
		pl.PD[2].ClientListen == pl.PD[2].Client || pl.PD[2].PeerListen == pl.PD[2].Peer || l.Proxied() {
		t.Fatalf("proxied layout: %+v (from %+v)", pl, l)
	}
	if n := len(pl.All()); n != 1+2*2+3*5+3*3 {
		t.Fatalf("proxied layout: %d addresses", n)
	}
	// The largest topology stays inside the span, also with proxies.
	big, err := NewLayout(4000, MaxPD, MaxStore, MaxSQL)
	if err != nil {
		t.Fatal(err)
	}
	big = big.WithFaultProxies()
	uniq := map[string]bool{}
	for _, a := range big.All() {
		_, p, _ := net.SplitHostPort(a)
		var port int
		fmt.Sscan(p, &port)
		if port < 4000 || port >= 4000+PortSpan || uniq[a] {
			t.Fatalf("address %s outside the span or repeated", a)
		}
		uniq[a] = true
	}
	for _, bad := range [][4]int{{4000, 0, 1, 1}, {4000, 1, 0, 1}, {4000, 1, 1, 0}, {80, 1, 1, 1}, {4000, 1, 1, MaxSQL + 1}} {
		if _, err := NewLayout(bad[0], bad[1], bad[2], bad[3]); err == nil {
			t.Errorf("layout %v accepted", bad)
		}
	}
}

func TestCheckFree(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := CheckFree([]string{ln.Addr().String()}); err == nil || !strings.Contains(err.Error(), ln.Addr().String()) {
		t.Fatalf("taken port: %v", err)
	}
}

func TestHAProxyConfig(t *testing.T) {
	cfg := HAProxyConfig("127.0.0.1:4000", []string{"127.0.0.1:4001", "127.0.0.1:4002"})
	for _, want := range []string{
		"bind 127.0.0.1:4000", "mode tcp", "balance leastconn",
		"server shoal-sql-1 127.0.0.1:4001 check inter 2000 rise 2 fall 3",
		"server shoal-sql-2 127.0.0.1:4002 check inter 2000 rise 2 fall 3",
	} {
		if !strings.Contains(cfg, want) {
			t.Errorf("config lacks %q:\n%s", want, cfg)
		}
	}
	if strings.Contains(cfg, "daemon") || strings.Contains(cfg, "0.0.0.0") {
		t.Errorf("config daemonizes or binds every interface:\n%s", cfg)
	}
	// When haproxy is installed, it accepts the file.
	bin, err := FindHAProxy("")
	if err != nil {
		t.Logf("haproxy not installed, syntax check skipped: %v", err)
		return
	}
	path := filepath.Join(t.TempDir(), "haproxy.cfg")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "-c", "-f", path).CombinedOutput(); err != nil {
		t.Fatalf("haproxy -c: %v\n%s", err, out)
	}
}

func TestFindHAProxyMissing(t *testing.T) {
	if _, err := FindHAProxy("/nonexistent/haproxy"); err == nil {
		t.Fatal("missing haproxy accepted")
	}
}

func shProc(t *testing.T, name, script string) *proc {
	t.Helper()
	p, err := startProc(name, filepath.Join(t.TempDir(), name+".log"), "/bin/sh", "-c", script)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.cmd.Process.Kill(); <-p.done })
	return p
}

// A group stops on SIGTERM; a process ignoring it is killed after the
// timeout, and named.
func TestStopGroup(t *testing.T) {
	polite := shProc(t, "polite", "trap 'exit 0' TERM; echo started; while :; do sleep 0.05; done")
	stubborn := shProc(t, "stubborn", "trap '' TERM; echo started; while :; do sleep 0.05; done")
	time.Sleep(200 * time.Millisecond) // let the traps be set
	start := time.Now()
	err := stopGroup([]*proc{polite, stubborn}, 500*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "stubborn") || strings.Contains(err.Error(), "polite") {
		t.Fatalf("stopGroup: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("stopGroup took %v", d)
	}
	for _, p := range []*proc{polite, stubborn} {
		if ok, _ := p.exited(); !ok {
			t.Fatalf("%s still running", p.name)
		}
	}
	if !strings.Contains(polite.tail(100), "started") {
		t.Fatalf("log tail: %q", polite.tail(100))
	}
}

// Waiting on a process that dies reports its exit and the end of its log;
// waiting on a healthy /status succeeds.
func TestWaitHealthy(t *testing.T) {
	c := &Cluster{opts: Options{StartTimeout: 5 * time.Second}}
	c.opts.fill()
	dying := shProc(t, "dying", "echo 'fatal: cannot bind'; exit 3")
	err := c.waitHealthy(context.Background(), dying, "127.0.0.1:1", func(map[string]any) bool { return true })
	if err == nil || !strings.Contains(err.Error(), "cannot bind") || !strings.Contains(err.Error(), "exited") {
		t.Fatalf("dying process: %v", err)
	}
	healthy := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		healthy++
		fmt.Fprintf(w, `{"role":"pd","health":%v,"leader":"pd-1"}`, healthy > 2)
	}))
	defer srv.Close()
	alive := shProc(t, "alive", "while :; do sleep 0.05; done")
	addr := strings.TrimPrefix(srv.URL, "http://")
	if err := c.waitHealthy(context.Background(), alive, addr, func(m map[string]any) bool { return m["health"] == true }); err != nil {
		t.Fatal(err)
	}
	c.opts.StartTimeout = 300 * time.Millisecond
	if err := c.waitHealthy(context.Background(), alive, addr, func(m map[string]any) bool { return false }); err == nil || !strings.Contains(err.Error(), "after") {
		t.Fatalf("timeout: %v", err)
	}
}

// Start refuses a topology whose ports are taken, before starting anything.
func TestStartFailsOnTakenPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	dir := t.TempDir()
	_, err = Start(context.Background(), Options{PD: 1, Store: 1, SQL: 1, BasePort: port, DataDir: dir, Binary: "/bin/false", NoHAProxy: true})
	if err == nil || !strings.Contains(err.Error(), "taken") {
		t.Fatalf("Start on a taken port: %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("Start created %d entries before failing", len(ents))
	}
}

// A process that fails at start stops the playground with its log in the
// error, and nothing stays running.
func TestStartFailureStopsEverything(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "fake-shoal")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho \"fake $1 refuses to start\"\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	base, err := FreeBasePort(1, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Start(context.Background(), Options{PD: 1, Store: 1, SQL: 1, BasePort: base, DataDir: t.TempDir(), Binary: bin,
		NoHAProxy: true, StartTimeout: 5 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "fake pd refuses to start") {
		t.Fatalf("Start with a failing binary: %v", err)
	}
}

package main

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shoaldb/shoal/pd/server/pdtest"
)

func TestStoreFlags(t *testing.T) {
	p := filepath.Join(t.TempDir(), "store.toml")
	os.WriteFile(p, []byte(`pd = "127.0.0.1:1,127.0.0.1:2"
addr = "127.0.0.1:30160"
region-split-size = "1MiB"
raft-base-tick-interval = "50ms"
raft-log-gc-count-limit = 500
grpc-concurrency = 8
`), 0o644)
	cfg, err := storeFlags([]string{"--config", p, "--addr", "127.0.0.1:30161", "--region-split-size", "64KiB",
		"--store-heartbeat-interval", "2s", "--grpc-max-message-size", "32MB"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.PDAddrs(); len(got) != 2 || got[1] != "127.0.0.1:2" {
		t.Fatalf("pd %v", got)
	}
	if cfg.Addr != "127.0.0.1:30161" || cfg.SplitSize() != 64<<10 || cfg.TickInterval() != 50*time.Millisecond ||
		cfg.RaftLogGCCountLimit != 500 || cfg.GRPCConcurrency != 8 || cfg.StoreHeartbeat() != 2*time.Second ||
		cfg.MaxMessageSize() != 32<<20 || cfg.StatusAddr != "127.0.0.1:20180" || cfg.DataDir != "./shoal-store" {
		t.Fatalf("%+v", cfg)
	}
	nc := storeNodeConfig(cfg, nil)
	if nc.Raft.TickInterval != 50*time.Millisecond || nc.Raft.RegionSplitSize != 64<<10 || nc.Raft.PDHeartbeatTicks != 200 {
		t.Fatalf("node config %+v", nc.Raft)
	}
	if _, err := storeFlags(nil, io.Discard); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for _, bad := range [][]string{
		{"--pd", ""},
		{"--pd", "nohostport"},
		{"--addr", "x"},
		{"--status-addr", "127.0.0.1:20160"}, // same as addr
		{"--region-split-size", "12 parsecs"},
		{"--region-split-size", "10"},
		{"--raft-base-tick-interval", "soon"},
		{"--grpc-max-message-size", "1KiB"},
		{"--grpc-concurrency", "-1"},
		{"--log-level", "loud"},
		{"extra"},
	} {
		if _, err := storeFlags(bad, io.Discard); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	os.WriteFile(p, []byte("region-split-sise = \"1MiB\"\n"), 0o644)
	if _, err := storeFlags([]string{"--config", p}, io.Discard); err == nil || !strings.Contains(err.Error(), "unknown keys") {
		t.Fatalf("unknown key: %v", err)
	}
}

// TestStoreCommand runs `shoal store` against an in-process PD: it
// bootstraps the cluster, serves /status, fails fast on a taken port.
func TestStoreCommand(t *testing.T) {
	pd := pdtest.Start(t, 1, nil)
	ports := pdtest.FreePorts(t, 2)
	addr, status := "127.0.0.1:"+itoa(ports[0]), "127.0.0.1:"+itoa(ports[1])
	dir := t.TempDir()

	// A taken port: refused before anything starts.
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	var errOut strings.Builder
	if code := runStore([]string{"--pd", pd.Addrs()[0], "--addr", addr, "--status-addr", status, "--data-dir", dir}, io.Discard, &errOut); code != 1 ||
		!strings.Contains(errOut.String(), "cannot listen") {
		t.Fatalf("taken port: code %d, %s", code, errOut.String())
	}
	ln.Close()

	cfg, err := storeFlags([]string{"--pd", pd.Addrs()[0], "--addr", addr, "--status-addr", status, "--data-dir", dir,
		"--store-heartbeat-interval", "200ms", "--log-level", "error"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- serveStore(cfg, newLogger("error", io.Discard)) }()
	defer func() {
		// serveStore stops on SIGTERM; send it to ourselves only while it
		// listens for it.
		select {
		case err := <-done:
			t.Errorf("shoal store ended early: %v", err)
			return
		default:
		}
		p, _ := os.FindProcess(os.Getpid())
		p.Signal(os.Interrupt)
		select {
		case err := <-done:
			if err != nil {
				t.Error(err)
			}
		case <-time.After(30 * time.Second):
			t.Error("shoal store did not stop")
		}
	}()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var st storeStatus
		resp, err := http.Get("http://" + status + "/status")
		if err == nil {
			json.NewDecoder(resp.Body).Decode(&st)
			resp.Body.Close()
		}
		if st.Role == "store" && st.Health && st.StoreID != 0 && st.RegionCount == 1 && st.LeaderCount == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status not healthy: %+v (%v)", st, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

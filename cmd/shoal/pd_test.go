package main

import (
	"encoding/json"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shoaldb/shoal/pd/server/pdtest"
	"github.com/shoaldb/shoal/status"
)

func TestPDFlags(t *testing.T) {
	p := filepath.Join(t.TempDir(), "pd.toml")
	os.WriteFile(p, []byte("name = \"a\"\nmax-replicas = 5\nmax-store-down-time = \"1m\"\n"), 0o644)
	cfg, err := pdFlags([]string{"--config", p, "--name", "pd1", "--initial-cluster", "pd1=127.0.0.1:2380,pd2=127.0.0.1:2390",
		"--max-store-down-time", "5s"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Name != "pd1" || cfg.MaxReplicas != 5 || cfg.StoreDownTime() != 5*time.Second || cfg.ClientURLs != "127.0.0.1:2379" {
		t.Fatalf("%+v", cfg)
	}
	for _, bad := range [][]string{
		{"--max-replicas", "0"},
		{"--max-store-down-time", "soon"},
		{"--client-urls", "nohostport"},
		{"--initial-cluster", "other=127.0.0.1:2380"},
		{"extra"},
	} {
		if _, err := pdFlags(bad, io.Discard); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

// TestPDStatus: /status of a PD member says role pd, health and leader.
func TestPDStatus(t *testing.T) {
	c := pdtest.Start(t, 1, nil)
	h := pdStatusHandler(status.Info{Role: "pd", Version: version, StartTime: time.Now()}, c.Members[0])
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/status", nil))
	var st pdStatus
	if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil {
		t.Fatal(err)
	}
	if st.Role != "pd" || !st.Health || !st.IsLeader || st.Leader != "pd1" || st.LeaderAddr != c.Addrs()[0] {
		t.Fatalf("status %+v", st)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if !strings.Contains(rec.Body.String(), "shoal_pd_is_leader") {
		t.Fatal("/metrics lacks the PD metrics")
	}
}

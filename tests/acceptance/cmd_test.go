package acceptance

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shoaldb/shoal/tests/testserver"
)

func needShoal(t *testing.T) {
	if target != "shoal" {
		t.Skipf("tests the shoal binary; target is %s", target)
	}
}

func runShoal(t *testing.T, limit time.Duration, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, shoalBin, args...)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("shoal %s: did not exit within %s\n%s", strings.Join(args, " "), limit, out)
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), code
}

func TestCmdVersionAndUsage(t *testing.T) {
	needShoal(t)
	out, code := runShoal(t, 10*time.Second, "version")
	if code != 0 || !strings.HasPrefix(out, "shoal v") {
		t.Errorf("shoal version: exit %d, %q", code, out)
	}
	if _, code := runShoal(t, 10*time.Second); code == 0 {
		t.Errorf("shoal without a command exited 0")
	}
	if out, code := runShoal(t, 10*time.Second, "frobnicate"); code == 0 || !strings.Contains(out, "unknown command") {
		t.Errorf("unknown command: exit %d, %q", code, out)
	}
	if _, code := runShoal(t, 10*time.Second, "server", "--no-such-flag"); code == 0 {
		t.Errorf("unknown flag exited 0")
	}
}

// TestCmdStartFailures: an unusable port, data dir or config fails at start
// with a clear message and a non-zero exit.
func TestCmdStartFailures(t *testing.T) {
	needShoal(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	busy := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	dir := t.TempDir()
	file := filepath.Join(dir, "plain-file")
	os.WriteFile(file, []byte("x"), 0o644)
	badCfg := filepath.Join(dir, "bad.toml")
	os.WriteFile(badCfg, []byte("prot = 1\n"), 0o644)
	free, _ := testserver.FreePort()

	cases := []struct {
		name string
		args []string
		want string
	}{
		{"port in use", []string{"--port", busy, "--status-port", "0", "--data-dir", filepath.Join(dir, "d1")}, "address already in use"},
		{"status port in use", []string{"--port", strconv.Itoa(free), "--status-port", busy, "--data-dir", filepath.Join(dir, "d2")}, "address already in use"},
		{"port out of range", []string{"--port", "70000", "--data-dir", filepath.Join(dir, "d3")}, "port 70000"},
		{"data dir is a file", []string{"--port", strconv.Itoa(free), "--status-port", "0", "--data-dir", file}, "not a directory"},
		{"data dir under a file", []string{"--port", strconv.Itoa(free), "--status-port", "0", "--data-dir", filepath.Join(file, "sub")}, "data dir"},
		{"unknown config key", []string{"--config", badCfg}, "unknown keys: prot"},
		{"missing config file", []string{"--config", filepath.Join(dir, "missing.toml")}, "no such file"},
		{"bad log level", []string{"--log-level", "loud"}, "log-level"},
	}
	for _, tc := range cases {
		out, code := runShoal(t, 30*time.Second, append([]string{"server"}, tc.args...)...)
		if code == 0 || !strings.Contains(out, tc.want) {
			t.Errorf("%s: exit %d, want non-zero with %q in:\n%s", tc.name, code, tc.want, out)
		}
	}
}

// TestCmdStatusAndShutdown: /status and /metrics answer, a config file is
// honoured with flags overriding it, and SIGTERM stops the server cleanly
// with the data kept.
func TestCmdStatusAndShutdown(t *testing.T) {
	needShoal(t)
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "shoal.toml")
	// The file sets a log level and a port that the flags then override.
	os.WriteFile(cfgPath, []byte("log-level = \"debug\"\nport = 1\n"), 0o644)
	s, err := testserver.StartShoal(testserver.ShoalOptions{Bin: shoalBin, DataDir: filepath.Join(dir, "data"), LogPath: filepath.Join(dir, "shoal.log"),
		Args: []string{"--config", cfgPath}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Kill()
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/status", s.StatusPort))
	if err != nil {
		t.Fatal(err)
	}
	var st map[string]any
	json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	if st["role"] != "server" || !strings.HasPrefix(fmt.Sprint(st["version"]), "v") || st["uptime_seconds"] == nil {
		t.Errorf("/status: %v", st)
	}
	for _, p := range []string{"/metrics"} { // /debug/pprof: tls_test.go
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d%s", s.StatusPort, p))
		if err != nil || resp.StatusCode != 200 {
			t.Errorf("GET %s: %v %v", p, err, resp)
		}
		if resp != nil {
			resp.Body.Close()
		}
	}
	if logs := s.LogTail(100000); !strings.Contains(logs, "level=DEBUG") {
		t.Errorf("log-level = \"debug\" from the config file not honoured; log:\n%s", logs)
	}

	db, err := s.Open("")
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, "CREATE DATABASE keep")
	mustExec(t, db, "CREATE TABLE keep.t (id INT PRIMARY KEY)")
	mustExec(t, db, "INSERT INTO keep.t VALUES (1), (2), (3)")
	db.Close()
	if err := s.Stop(30 * time.Second); err != nil {
		t.Fatalf("SIGTERM: %v\n%s", err, s.LogTail(3000))
	}
	if err := s.Start(60 * time.Second); err != nil {
		t.Fatalf("restart: %v", err)
	}
	db, err = s.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM keep.t").Scan(&n); err != nil || n != 3 {
		t.Errorf("after a clean restart: %d rows (%v), want 3", n, err)
	}
	if err := s.Stop(30 * time.Second); err != nil {
		t.Errorf("second SIGTERM: %v", err)
	}
}

package acceptance

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shoaldb/shoal/tests/testserver"
)

// go-tpc (github.com/pingcap/go-tpc v1.0.12) is built by scripts/test.sh
// into a cache directory and passed as SHOAL_GO_TPC. go-tpc exits 0 even
// when transactions or consistency checks fail, so its output is parsed.

const goTPCVersion = "v1.0.12"

var (
	// Consistency conditions of TPC-C 3.3.2 that go-tpc checks: all of them
	// after prepare, all but 3.3.2.11 (initial state only) in `check`.
	tpccPrepareConditions = []string{"3.3.2.1", "3.3.2.2", "3.3.2.3", "3.3.2.4", "3.3.2.5", "3.3.2.6", "3.3.2.7", "3.3.2.8", "3.3.2.9", "3.3.2.10", "3.3.2.11", "3.3.2.12"}
	tpccCheckConditions   = []string{"3.3.2.1", "3.3.2.2", "3.3.2.3", "3.3.2.4", "3.3.2.5", "3.3.2.6", "3.3.2.7", "3.3.2.8", "3.3.2.9", "3.3.2.10", "3.3.2.12"}
	tpccTransactions      = []string{"NEW_ORDER", "PAYMENT", "ORDER_STATUS", "DELIVERY", "STOCK_LEVEL"}

	reTPCCBad     = regexp.MustCompile(`(?i)error|failed|fatal|panic|goroutine \d+|_ERR\b`)
	reTPCCCheck   = regexp.MustCompile(`(?m)^begin to check warehouse (\d+) at condition ([\d.]+)$`)
	reTPCCTpmC    = regexp.MustCompile(`(?m)^tpmC: ([\d.]+), tpmTotal: ([\d.]+), efficiency: ([\d.]+)%`)
	reTPCCSummary = regexp.MustCompile(`(?m)^\[Summary\] (\w+)\s+- Takes\(s\): [\d.]+, Count: (\d+), TPM: ([\d.]+)`)
)

// goTPCBin finds go-tpc: SHOAL_GO_TPC, then the cache that
// scripts/go-tpc-path.sh fills, then PATH. Missing go-tpc skips the test, or fails it in CI.
func goTPCBin(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("SHOAL_GO_TPC"); p != "" {
		if fi, err := os.Stat(p); err != nil || fi.IsDir() {
			t.Fatalf("SHOAL_GO_TPC=%s is not a file: %v", p, err)
		}
		return p
	}
	if cache, err := os.UserCacheDir(); err == nil { // $XDG_CACHE_HOME or ~/.cache
		p := filepath.Join(cache, "shoal-tools", "go-tpc-"+goTPCVersion, "go-tpc")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("go-tpc"); err == nil {
		return p
	}
	if testserver.InCI() {
		t.Fatalf("go-tpc is required in CI but not found (scripts/test.sh builds it and sets SHOAL_GO_TPC)")
	}
	t.Skipf("go-tpc not found; run scripts/test.sh once (it builds go-tpc %s into ~/.cache/shoal-tools) or set SHOAL_GO_TPC", goTPCVersion)
	return ""
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// runGoTPC runs go-tpc against s, killing it (and its process group) after
// limit. It returns the combined output; a non-zero exit fails the test.
func runGoTPC(t *testing.T, bin string, s *testserver.Server, limit time.Duration, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	all := append([]string{"tpcc", "-H", s.Host, "-P", strconv.Itoa(s.Port), "-U", "root", "-D", "tpcc"}, args...)
	cmd := exec.CommandContext(ctx, bin, all...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("go-tpc %s: no result within %s\n%s", strings.Join(args, " "), limit, tailLines(string(out), 40))
	}
	if err != nil {
		t.Fatalf("go-tpc %s: %v\n%s", strings.Join(args, " "), err, tailLines(string(out), 40))
	}
	return string(out)
}

func tailLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// goTPCProblems returns the lines of go-tpc output that report an error.
func goTPCProblems(out string) []string {
	var bad []string
	for _, l := range strings.Split(out, "\n") {
		if reTPCCBad.MatchString(l) {
			bad = append(bad, l)
		}
	}
	return bad
}

// goTPCChecksMissing returns "warehouse W condition C" for every check
// go-tpc did not start. A check that fails prints a "failed" line (see
// goTPCProblems) and stops its thread, so the later ones go missing too.
func goTPCChecksMissing(out string, warehouses int, conds []string) []string {
	seen := map[string]bool{}
	for _, m := range reTPCCCheck.FindAllStringSubmatch(out, -1) {
		seen[m[1]+" "+m[2]] = true
	}
	var missing []string
	for w := 1; w <= warehouses; w++ {
		for _, c := range conds {
			if !seen[fmt.Sprintf("%d %s", w, c)] {
				missing = append(missing, fmt.Sprintf("warehouse %d condition %s", w, c))
			}
		}
	}
	return missing
}

func TestParseGoTPC(t *testing.T) {
	out := "begin to check warehouse 1 at condition 3.3.2.1\nbegin to check warehouse 1 at condition 3.3.2.2\n" +
		"[2026-01-01 00:00:00] execute run failed, err Error 1213 (40001): Deadlock found\n" +
		"[Summary] NEW_ORDER - Takes(s): 30.1, Count: 3551, TPM: 7089.5, Sum(ms): 135844.7, Avg(ms): 38.3\n" +
		"[Summary] NEW_ORDER_ERR - Takes(s): 30.1, Count: 2, TPM: 4.0, Sum(ms): 1.7, Avg(ms): 0.8\n" +
		"tpmC: 7089.5, tpmTotal: 15656.6, efficiency: 27564.1%\n"
	if p := goTPCProblems(out); len(p) != 2 {
		t.Errorf("problems = %q, want the failed line and the _ERR line", p)
	}
	if m := goTPCChecksMissing(out, 1, []string{"3.3.2.1", "3.3.2.2", "3.3.2.3"}); len(m) != 1 || m[0] != "warehouse 1 condition 3.3.2.3" {
		t.Errorf("missing = %q", m)
	}
	if m := reTPCCTpmC.FindStringSubmatch(out); m == nil || m[1] != "7089.5" {
		t.Errorf("tpmC match = %q", m)
	}
	if m := reTPCCSummary.FindAllStringSubmatch(out, -1); len(m) != 2 || m[0][1] != "NEW_ORDER" || m[0][2] != "3551" || m[1][1] != "NEW_ORDER_ERR" {
		t.Errorf("summary match = %q", m)
	}
}

// TestTPCC loads TPC-C with go-tpc (its built-in consistency check on),
// runs the mix, and checks consistency again. Env: SHOAL_TPCC_WAREHOUSES
// (default 2), SHOAL_TPCC_TIME seconds (default 60), SHOAL_TPCC_THREADS
// (default 8).
func TestTPCC(t *testing.T) {
	bin := goTPCBin(t)
	warehouses := envInt("SHOAL_TPCC_WAREHOUSES", 2)
	runTime := envInt("SHOAL_TPCC_TIME", 60)
	threads := envInt("SHOAL_TPCC_THREADS", 8)
	s := startServer(t)
	db, err := s.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE DATABASE tpcc"); err != nil {
		t.Fatalf("CREATE DATABASE tpcc: %v", err)
	}
	wh := "--warehouses=" + strconv.Itoa(warehouses)
	dir := t.TempDir()
	save := func(name, out string) {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(out), 0o644)
	}
	fail := func(phase, out string, format string, args ...any) {
		t.Helper()
		t.Errorf("go-tpc %s: %s\n--- output tail ---\n%s", phase, fmt.Sprintf(format, args...), tailLines(out, 30))
	}

	// prepare, with go-tpc's check of all 12 conditions afterwards.
	start := time.Now()
	out := runGoTPC(t, bin, s, 20*time.Minute, "prepare", wh, "--threads=4")
	save("prepare.log", out)
	t.Logf("prepare (%d warehouses, 4 threads, with check): %s", warehouses, time.Since(start).Round(time.Millisecond))
	if p := goTPCProblems(out); len(p) > 0 {
		fail("prepare", out, "%d error lines, first: %q", len(p), p[:min(len(p), 5)])
	}
	if m := goTPCChecksMissing(out, warehouses, tpccPrepareConditions); len(m) > 0 {
		fail("prepare", out, "consistency checks not run or not passed: %q", m)
	}
	if !strings.Contains(out, "\nFinished\n") {
		fail("prepare", out, "no Finished line")
	}
	if t.Failed() {
		t.FailNow()
	}

	// run
	start = time.Now()
	out = runGoTPC(t, bin, s, time.Duration(runTime)*time.Second+5*time.Minute,
		"run", wh, "--threads="+strconv.Itoa(threads), "--time="+strconv.Itoa(runTime)+"s", "--interval=20s")
	save("run.log", out)
	t.Logf("run (%d threads, %ds): %s", threads, runTime, time.Since(start).Round(time.Millisecond))
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "[Summary]") || strings.HasPrefix(l, "tpmC:") {
			t.Log(l)
		}
	}
	if p := goTPCProblems(out); len(p) > 0 {
		fail("run", out, "%d error lines, first: %q", len(p), p[:min(len(p), 5)])
	}
	counts := map[string]int{}
	for _, m := range reTPCCSummary.FindAllStringSubmatch(out, -1) {
		counts[m[1]], _ = strconv.Atoi(m[2])
	}
	for _, txn := range tpccTransactions {
		if counts[txn] == 0 {
			fail("run", out, "no successful %s transactions", txn)
		}
	}
	if m := reTPCCTpmC.FindStringSubmatch(out); m == nil {
		fail("run", out, "no tpmC line")
	} else if v, _ := strconv.ParseFloat(m[1], 64); v <= 0 {
		fail("run", out, "tpmC = %s, want > 0", m[1])
	}

	// check
	start = time.Now()
	out = runGoTPC(t, bin, s, 10*time.Minute, "check", wh, "--threads=4")
	save("check.log", out)
	t.Logf("check: %s", time.Since(start).Round(time.Millisecond))
	if p := goTPCProblems(out); len(p) > 0 {
		fail("check", out, "%d error lines, first: %q", len(p), p[:min(len(p), 5)])
	}
	if m := goTPCChecksMissing(out, warehouses, tpccCheckConditions); len(m) > 0 {
		fail("check", out, "consistency checks not run or not passed: %q", m)
	}
}

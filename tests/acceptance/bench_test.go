package acceptance

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"math"
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

// TestBenchTinyPlan runs `shoal bench sysbench` with bench/plans/ci-tiny.toml
// (two embedded shoal targets from this build, labelled vA and vB; 2 tables
// x 1000 rows; oltp_point_select and oltp_read_write at 2 and 4 threads;
// 5 s runs; BACKUP once, DROP + RESTORE DATABASE before every later run)
// and checks the report against the raw sysbench outputs, parsed here with
// this package's own parser, not the bench package's: every TPS and p95
// cell, every improvement and average. Then `shoal bench compare` on the
// saved JSON must rebuild the same report and charts byte for byte.
func TestBenchTinyPlan(t *testing.T) {
	if target != "shoal" {
		t.Skip("shoal bench starts shoal targets itself")
	}
	requireTool(t, "sysbench")
	root, err := testserver.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	start := time.Now()
	stdout, stderr := runShoalBench(t, 4*time.Minute, "bench", "sysbench",
		"--plan", filepath.Join(root, "bench/plans/ci-tiny.toml"), "--out", out, "--work", filepath.Join(dir, "work"))
	t.Logf("shoal bench sysbench took %s", time.Since(start).Round(time.Second))
	if strings.TrimSpace(stdout) != filepath.Join(out, "report.md") {
		t.Errorf("stdout %q, want the report's path", stdout)
	}
	// Live progress: every run reported, with elapsed/remaining and TPS.
	if !regexp.MustCompile(`vA run 1/8 oltp_point_select threads=2: elapsed \d+s, remaining \d+s .*tps [\d.]+`).MatchString(stderr) {
		t.Errorf("no live progress line on stderr:\n%s", tailLines(stderr, 30))
	}

	report := readFile(t, filepath.Join(out, "report.md"))
	workloads := []string{"oltp_point_select", "oltp_read_write"}
	names := map[string]string{"oltp_point_select": "Point Select", "oltp_read_write": "Read Write"}
	threads := []int{2, 4}
	for _, w := range workloads {
		section := reportSection(t, report, "### "+names[w]+" performance")
		if !strings.Contains(section, "| Threads | vA TPS | vB TPS | vA 95% latency (ms) | vB 95% latency (ms) | TPS improvement (%) |") {
			t.Errorf("%s: table header missing:\n%s", w, section)
		}
		var changes []float64
		for _, n := range threads {
			var tps, p95 [2]float64
			for i, label := range []string{"vA", "vB"} {
				raw := readFile(t, filepath.Join(out, "raw", label, fmt.Sprintf("%s-%d.out", w, n)))
				r, err := parseSysbench(raw)
				if err != nil {
					t.Fatalf("%s %s %d: %v", label, w, n, err)
				}
				if r.TPS == 0 || r.P95 == 0 {
					t.Fatalf("%s %s %d: raw output without TPS or p95:\n%s", label, w, n, raw)
				}
				tps[i], p95[i] = r.TPS, r.P95
			}
			row := tableRow(t, section, n)
			got := make([]float64, len(row))
			for i, c := range row {
				if got[i], err = strconv.ParseFloat(c, 64); err != nil {
					t.Fatalf("%s %d threads: cell %q: %v", w, n, c, err)
				}
			}
			want := []float64{tps[0], tps[1], p95[0], p95[1]}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("%s %d threads: report column %d is %v, raw sysbench output says %v", w, n, i+2, got[i], want[i])
				}
			}
			change := math.Round((tps[1]-tps[0])/tps[0]*100*100) / 100
			if row[4] != fmt.Sprintf("%.2f", change) {
				t.Errorf("%s %d threads: improvement %s, want %.2f", w, n, row[4], change)
			}
			changes = append(changes, change)
		}
		avg := (changes[0] + changes[1]) / 2
		var wantSentence string
		switch r := math.Round(avg*100) / 100; {
		case r == 0:
			wantSentence = "unchanged"
		case avg > 0:
			wantSentence = fmt.Sprintf("is %.2f%% higher than", avg)
		default:
			wantSentence = fmt.Sprintf("is %.2f%% lower than", -avg)
		}
		if !strings.Contains(section, wantSentence) {
			t.Errorf("%s: no %q in the summary sentence:\n%s", w, wantSentence, section)
		}
		chart := "sysbench_" + strings.TrimPrefix(w, "oltp_") + ".svg"
		if !strings.Contains(section, "]("+chart+")") {
			t.Errorf("%s: chart %s not linked", w, chart)
		}
		svg := readFile(t, filepath.Join(out, chart))
		if err := checkXML(svg); err != nil {
			t.Errorf("%s: %v", chart, err)
		}
		// Both versions on the chart, at every thread count.
		for _, label := range []string{"vA", "vB"} {
			for _, n := range threads {
				if !strings.Contains(svg, fmt.Sprintf("<title>%s, %d threads: ", label, n)) {
					t.Errorf("%s: no point for %s at %d threads", chart, label, n)
				}
			}
		}
	}

	// The results JSON: restore through BACKUP/RESTORE, per-interval series.
	for _, label := range []string{"vA", "vB"} {
		var res struct {
			Target struct{ Restore string }
			Steps  []struct {
				Name       string
				Statements []string
			}
			Runs []struct {
				Workload string
				Threads  int
				Series   []struct{ TPS float64 }
			}
		}
		if err := json.Unmarshal([]byte(readFile(t, filepath.Join(out, label+".json"))), &res); err != nil {
			t.Fatalf("%s.json: %v", label, err)
		}
		if res.Target.Restore != "backup" {
			t.Errorf("%s: restore %q, want backup", label, res.Target.Restore)
		}
		var backups, restores int
		for _, s := range res.Steps {
			switch s.Name {
			case "backup":
				backups++
			case "restore":
				restores++
				if len(s.Statements) != 2 || !strings.HasPrefix(s.Statements[1], "RESTORE DATABASE sbtest FROM 'local:///") {
					t.Errorf("%s: restore statements %q", label, s.Statements)
				}
			}
		}
		// One backup; a restore before every run but the first.
		if backups != 1 || restores != len(workloads)*len(threads)-1 {
			t.Errorf("%s: %d backups and %d restores, want 1 and %d", label, backups, restores, len(workloads)*len(threads)-1)
		}
		if len(res.Runs) != len(workloads)*len(threads) {
			t.Fatalf("%s: %d runs", label, len(res.Runs))
		}
		for _, r := range res.Runs {
			// 5 s at --report-interval=1: sysbench prints 4 or 5 lines.
			if len(r.Series) < 3 {
				t.Errorf("%s %s %d: %d intervals in the series", label, r.Workload, r.Threads, len(r.Series))
			}
		}
	}

	// compare rebuilds the same report and charts from the saved JSON.
	cmp := filepath.Join(dir, "compare")
	runShoalBench(t, time.Minute, "bench", "compare", filepath.Join(out, "vA.json"), filepath.Join(out, "vB.json"), "--out", cmp)
	if got := readFile(t, filepath.Join(cmp, "report.md")); got != report {
		t.Errorf("shoal bench compare wrote a different report:\n%s", got)
	}
	for _, w := range workloads {
		chart := "sysbench_" + strings.TrimPrefix(w, "oltp_") + ".svg"
		if readFile(t, filepath.Join(cmp, chart)) != readFile(t, filepath.Join(out, chart)) {
			t.Errorf("shoal bench compare drew a different %s", chart)
		}
	}
}

// runShoalBench runs the shoal binary with args (bounded by limit, its
// process group killed after) and fails the test on a non-zero exit.
func runShoalBench(t *testing.T, limit time.Duration, args ...string) (stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, shoalBin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("shoal %s: no result within %s\n%s", strings.Join(args[:2], " "), limit, tailLines(e.String(), 40))
	}
	if err != nil {
		t.Fatalf("shoal %s: %v\n%s", strings.Join(args[:2], " "), err, tailLines(e.String(), 40))
	}
	return o.String(), e.String()
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// reportSection returns the report from heading to the next heading.
func reportSection(t *testing.T, report, heading string) string {
	t.Helper()
	i := strings.Index(report, heading+"\n")
	if i < 0 {
		t.Fatalf("report has no %q section:\n%s", heading, report)
	}
	rest := report[i+len(heading):]
	if j := strings.Index(rest, "\n#"); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// tableRow returns the cells after the thread count of the row for n.
func tableRow(t *testing.T, section string, n int) []string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^\| ` + strconv.Itoa(n) + ` \| (.*) \|$`).FindStringSubmatch(section)
	if m == nil {
		t.Fatalf("no table row for %d threads in:\n%s", n, section)
	}
	cells := strings.Split(m[1], " | ")
	if len(cells) != 5 {
		t.Fatalf("row for %d threads has %d cells: %q", n, len(cells)+1, m[0])
	}
	return cells
}

func checkXML(s string) error {
	dec := xml.NewDecoder(strings.NewReader(s))
	root := ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if se, ok := tok.(xml.StartElement); ok && root == "" {
			root = se.Name.Local
		}
	}
	if root != "svg" {
		return fmt.Errorf("root element %q, want svg", root)
	}
	return nil
}

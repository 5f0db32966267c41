package bench

import (
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestReport renders reports from results of real runs kept in
// testdata/runs (a `shoal bench` run each: <label>.json and raw/...).
//
//	report dir=runs/X results=vA,vB   the Markdown of BuildReport
//	chart dir=runs/X results=vA,vB name=F   one chart's SVG
func TestReport(t *testing.T) {
	datadriven.RunTest(t, "testdata/report", func(t *testing.T, d *datadriven.TestData) string {
		var dir, labels string
		d.ScanArgs(t, "dir", &dir)
		d.ScanArgs(t, "results", &labels)
		results := loadRuns(t, filepath.Join("testdata", dir), strings.Split(labels, ","))
		rep, err := BuildReport(results)
		if err != nil {
			return "error: " + err.Error() + "\n"
		}
		switch d.Cmd {
		case "report":
			return rep.Markdown
		case "chart":
			var name string
			d.ScanArgs(t, "name", &name)
			svg, ok := rep.Charts[name]
			if !ok {
				t.Fatalf("no chart %s; have %v", name, chartNames(rep))
			}
			return string(svg)
		}
		t.Fatalf("unknown command %q", d.Cmd)
		return ""
	})
}

func loadRuns(t *testing.T, dir string, labels []string) []*Results {
	t.Helper()
	var results []*Results
	for _, l := range labels {
		r, err := LoadResults(filepath.Join(dir, l+".json"))
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, r)
	}
	return results
}

func chartNames(rep *Report) []string {
	var names []string
	for n := range rep.Charts {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// The invariant the acceptance test checks end to end, here on the kept
// runs: every number in a report's result tables is the number in the raw
// tool output, re-parsed from the raw file; every improvement follows
// from them; every chart is well-formed XML.
func TestReportNumbersComeFromRawOutputs(t *testing.T) {
	for _, dir := range []string{"testdata/runs/sysbench-tiny", "testdata/runs/tpcc-tiny"} {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			results := loadRuns(t, dir, []string{"vA", "vB"})
			rep, err := BuildReport(results)
			if err != nil {
				t.Fatal(err)
			}
			rows := reportRows(rep.Markdown)
			p := results[0].Plan
			if len(rows) != len(p.Workloads)*len(p.Threads) {
				t.Fatalf("%d table rows, want %d", len(rows), len(p.Workloads)*len(p.Threads))
			}
			i := 0
			for _, w := range p.Workloads {
				for _, n := range p.Threads {
					row := rows[i]
					i++
					if row[0] != strconv.Itoa(n) {
						t.Fatalf("%s row %d: threads %q, want %d", w, i, row[0], n)
					}
					var tp, p95 [2]float64
					for k, r := range results {
						run, ok := r.Find(w, n)
						if !ok {
							t.Fatalf("%s: no run %s/%d", r.Target.Label, w, n)
						}
						raw, err := os.ReadFile(filepath.Join(dir, run.Raw))
						if err != nil {
							t.Fatal(err)
						}
						if p.Tool == ToolTPCC {
							s, _, err := ParseGoTPC(string(raw))
							if err != nil {
								t.Fatal(err)
							}
							tp[k], p95[k] = s.TpmC, s.NewOrderP95Ms
						} else {
							s, _, err := ParseSysbench(string(raw))
							if err != nil {
								t.Fatal(err)
							}
							tp[k], p95[k] = s.TPS, s.LatencyP95Ms
						}
					}
					want := []string{strconv.Itoa(n), formatNumber(tp[0]), formatNumber(tp[1]), formatNumber(p95[0]), formatNumber(p95[1]),
						fmt.Sprintf("%.2f", (tp[1]-tp[0])/tp[0]*100)}
					if strings.Join(row, "|") != strings.Join(want, "|") {
						t.Errorf("%s %d threads: row %q, raw outputs give %q", w, n, row, want)
					}
				}
			}
			for name, svg := range rep.Charts {
				if err := wellFormedXML(svg); err != nil {
					t.Errorf("%s: %v", name, err)
				}
				if !strings.Contains(rep.Markdown, "]("+name+")") {
					t.Errorf("report does not link %s", name)
				}
			}
		})
	}
}

var reTableRow = regexp.MustCompile(`(?m)^\| (\d+) \| (.*) \|$`)

// reportRows returns the cells of every results-table row (those starting
// with a thread count).
func reportRows(md string) [][]string {
	var rows [][]string
	for _, m := range reTableRow.FindAllStringSubmatch(md, -1) {
		rows = append(rows, append([]string{m[1]}, strings.Split(m[2], " | ")...))
	}
	return rows
}

func wellFormedXML(b []byte) error {
	dec := xml.NewDecoder(strings.NewReader(string(b)))
	for {
		_, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func TestNiceScale(t *testing.T) {
	for _, tc := range []struct{ max, step, top float64 }{
		{1480.69, 500, 1500}, {8.43, 2, 10}, {0.09, 0.02, 0.1}, {143335.91, 50000, 150000}, {0, 1, 5}, {5, 1, 5},
	} {
		step, top := niceScale(tc.max, 5)
		if math.Abs(step-tc.step) > 1e-9 || math.Abs(top-tc.top) > 1e-9 {
			t.Errorf("niceScale(%v) = %v, %v; want %v, %v", tc.max, step, top, tc.step, tc.top)
		}
	}
}

func TestChangeSentence(t *testing.T) {
	for _, tc := range []struct {
		avg  float64
		want string
	}{
		{-3.5833, "is 3.58% lower than that of v6.1.0"},
		{3.1575, "is 3.16% higher than that of v6.1.0"},
		{0.004, "is unchanged from v6.1.0 (0.00%)"},
	} {
		if got := changeSentence("Point Select", "TPS", "v6.1.0", "v6.2.0", tc.avg, 3); !strings.Contains(got, tc.want) {
			t.Errorf("avg %v: %q, want it to contain %q", tc.avg, got, tc.want)
		}
	}
	// The reference report's Point Select rows: -2.73, -4.18, -3.84 average
	// to -3.58 (the unrounded changes would give -3.59).
	a := []float64{243530.01, 304121.47, 327301.23}
	b := []float64{236885.24, 291395.84, 314720.02}
	var c []float64
	for i := range a {
		c = append(c, math.Round(Improvement(a[i], b[i])*100)/100)
	}
	if got := fmt.Sprintf("%.2f", mean(c)); got != "-3.58" {
		t.Errorf("average improvement %s, want -3.58", got)
	}
}

func TestWorkloadName(t *testing.T) {
	for w, want := range map[string]string{"oltp_point_select": "Point Select", "oltp_update_non_index": "Update Non-index",
		"oltp_update_index": "Update Index", "oltp_read_write": "Read Write", "tpcc": "TPC-C", "select_random_ranges": "Select Random Ranges"} {
		if got := WorkloadName(w); got != want {
			t.Errorf("%s: %q, want %q", w, got, want)
		}
	}
}

// A run with ignored errors says so under its table.
func TestReportNotesIgnoredErrors(t *testing.T) {
	raw, err := os.ReadFile("testdata/outputs/sysbench-oltp_read_write.out")
	if err != nil {
		t.Fatal(err)
	}
	s, series, err := ParseSysbench(string(raw))
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParsePlan([]byte("tool = \"sysbench\"\nworkloads = [\"oltp_read_write\"]\nthreads = [4]\nduration = \"5s\"\n[sysbench]\ntables = 2\ntable-size = 1000\n[[target]]\nlabel = \"x\"\nkind = \"embedded\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	r := &Results{Format: ResultsFormat, Plan: *p, Target: p.Targets[0],
		Runs: []Run{{Workload: "oltp_read_write", Threads: 4, Sysbench: &s, Series: series}}}
	rep, err := BuildReport([]*Results{r})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| 4 | 667.3 | 14.21 |", "Errors sysbench counted and went on from (--mysql-ignore-errors): x 6 at 4 threads."} {
		if !strings.Contains(rep.Markdown, want) {
			t.Errorf("report lacks %q:\n%s", want, rep.Markdown)
		}
	}
}

package bench

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Report is a rendered report: the Markdown and its charts by file name
// (the Markdown links them by that name, relative to itself).
type Report struct {
	Markdown string
	Charts   map[string][]byte
	// Improvements: per workload, the average TPS (tpmC) change of the
	// second target over the first in percent (empty for one target).
	Improvements map[string]float64
}

// ReportFile is the report's file name in the output directory.
const ReportFile = "report.md"

// BuildReport renders the report of one target's results, or the
// comparison of two ("vB vs. vA": results[0] is the baseline vA). It reads
// nothing but the results, so rebuilding it from saved JSON gives the same
// bytes.
func BuildReport(results []*Results) (*Report, error) {
	if len(results) == 0 || len(results) > 2 {
		return nil, fmt.Errorf("a report covers one or two targets, not %d", len(results))
	}
	base := results[0]
	for _, r := range results[1:] {
		if r.Plan.Tool != base.Plan.Tool {
			return nil, fmt.Errorf("cannot compare a %s run (%s) with a %s run (%s)", base.Plan.Tool, base.Target.Label, r.Plan.Tool, r.Target.Label)
		}
		if r.Target.Label == base.Target.Label {
			return nil, fmt.Errorf("both results are labelled %q; a comparison needs two labels", r.Target.Label)
		}
	}
	rep := &Report{Charts: map[string][]byte{}, Improvements: map[string]float64{}}
	var md strings.Builder
	p := &base.Plan
	metric := "TPS"
	if p.Tool == ToolTPCC {
		metric = "tpmC"
	}
	labels := make([]string, len(results))
	for i, r := range results {
		labels[i] = r.Target.Label
	}

	// Results sections first: the overview quotes their averages.
	var body strings.Builder
	var overview []string
	for _, w := range p.Workloads {
		name := WorkloadName(w)
		fmt.Fprintf(&body, "### %s performance\n\n", name)
		header := []string{"Threads"}
		for _, l := range labels {
			header = append(header, l+" "+metric)
		}
		for _, l := range labels {
			header = append(header, l+" 95% latency (ms)")
		}
		if len(results) == 2 {
			header = append(header, metric+" improvement (%)")
		}
		writeRow(&body, header)
		seps := make([]string, len(header))
		for i := range seps {
			seps[i] = ":" + strings.Repeat("-", max(len(header[i])-1, 3))
		}
		writeRow(&body, seps)

		series := make([]chartSeries, len(results))
		for i := range results {
			series[i] = chartSeries{Label: labels[i]}
		}
		var changes []float64
		for _, n := range p.Threads {
			row := []string{strconv.Itoa(n)}
			runs := make([]Run, len(results))
			found := make([]bool, len(results))
			for i, r := range results {
				runs[i], found[i] = r.Find(w, n)
			}
			for i := range results {
				row = append(row, cell(found[i], runs[i].Throughput()))
				series[i].Throughput = append(series[i].Throughput, value(found[i], runs[i].Throughput()))
			}
			for i := range results {
				row = append(row, cell(found[i], runs[i].P95()))
				series[i].P95 = append(series[i].P95, value(found[i], runs[i].P95()))
			}
			if len(results) == 2 {
				if found[0] && found[1] && runs[0].Throughput() > 0 {
					// The average is taken over the rounded values the
					// table shows, as the reference reports do, so a
					// reader can check it from the table.
					c := math.Round(Improvement(runs[0].Throughput(), runs[1].Throughput())*100) / 100
					changes = append(changes, c)
					row = append(row, fmt.Sprintf("%.2f", c))
				} else {
					row = append(row, "n/a")
				}
			}
			writeRow(&body, row)
		}
		body.WriteString("\n")
		if len(results) == 2 {
			if len(changes) > 0 {
				avg := mean(changes)
				rep.Improvements[w] = avg
				sentence := changeSentence(name, metric, labels[0], labels[1], avg, len(changes))
				body.WriteString(sentence + "\n\n")
				overview = append(overview, fmt.Sprintf("%s %s", name, signed(avg)))
			} else {
				body.WriteString("No thread count has results from both targets.\n\n")
			}
		} else if best, ok := peak(base, w, p.Threads); ok {
			fmt.Fprintf(&body, "%s reaches its highest %s of %s at %d threads.\n\n", labels[0], metric, formatNumber(best.Throughput()), best.Threads)
		}
		if note := errorNote(results, w, p.Threads); note != "" {
			body.WriteString(note + "\n\n")
		}
		chart := chartFile(p.Tool, w)
		rep.Charts[chart] = renderChart(name+": "+metric+" and 95% latency by threads", metric, p.Threads, series)
		fmt.Fprintf(&body, "![%s](%s)\n\n", name, chart)
	}

	// Title and overview.
	if len(results) == 2 {
		fmt.Fprintf(&md, "# shoal %s Performance Test Report -- %s vs. %s\n\n", p.Title, labels[1], labels[0])
	} else {
		fmt.Fprintf(&md, "# shoal %s Performance Test Report -- %s\n\n", p.Title, labels[0])
	}
	md.WriteString("## Test overview\n\n")
	toolName := map[string]string{ToolSysbench: "sysbench", ToolTPCC: "TPC-C (go-tpc)"}[p.Tool]
	if len(results) == 2 {
		fmt.Fprintf(&md, "This report compares the %s performance of %s with that of %s, on the same machine, one target at a time. ", toolName, labels[1], labels[0])
		fmt.Fprintf(&md, "Average %s change of %s over %s across the thread counts: %s.\n\n", metric, labels[1], labels[0], strings.Join(overview, ", "))
	} else {
		fmt.Fprintf(&md, "This report shows the %s performance of %s.\n\n", toolName, labels[0])
	}
	for _, r := range results {
		if r.Error != "" {
			fmt.Fprintf(&md, "**The run of %s stopped early:** %s\n\n", r.Target.Label, r.Error)
		}
	}

	writeEnvironment(&md, results)
	writePlan(&md, results)
	md.WriteString("## Test results\n\n")
	md.WriteString(body.String())
	fmt.Fprintf(&md, "Generated by `shoal bench` from %s; the raw %s outputs are listed in them.\n", resultFiles(results), map[string]string{ToolSysbench: "sysbench", ToolTPCC: "go-tpc"}[p.Tool])
	rep.Markdown = md.String()
	return rep, nil
}

func writeEnvironment(md *strings.Builder, results []*Results) {
	md.WriteString("## Test environment\n\n")
	writeRow(md, []string{"Target", "Kind", "Version", "Server version", "Restore before each run"})
	writeRow(md, []string{":-----", ":---", ":------", ":-------------", ":----------------------"})
	for _, r := range results {
		restore := "drop the database, prepare and analyze again"
		if r.Target.Restore == RestoreBackup {
			restore = "DROP DATABASE, RESTORE DATABASE from the backup"
		}
		version := r.Version
		if version == "" {
			version = "-"
		}
		writeRow(md, []string{r.Target.Label, r.Target.Kind, version, r.ServerVersion, restore})
	}
	md.WriteString("\n")
	h := results[0].Host
	fmt.Fprintf(md, "Host: %d CPUs, %s/%s. Tool: %s. Run dates: ", h.CPUs, h.OS, h.Arch, results[0].ToolVersion)
	var dates []string
	for _, r := range results {
		dates = append(dates, fmt.Sprintf("%s %s", r.Target.Label, r.Started.UTC().Format(time.DateTime+" MST")))
	}
	md.WriteString(strings.Join(dates, ", ") + ".\n\n")

	md.WriteString("### Global variables\n\n")
	same := true
	for _, r := range results[1:] {
		if strings.Join(r.Target.EffectiveGlobals(&r.Plan), "\n") != strings.Join(results[0].Target.EffectiveGlobals(&results[0].Plan), "\n") {
			same = false
		}
	}
	for i, r := range results {
		if same && i > 0 {
			break
		}
		globals := r.Target.EffectiveGlobals(&r.Plan)
		switch {
		case same && len(results) > 1:
			md.WriteString("Both targets use the same global variables, set before the data is prepared:\n\n")
		case len(results) > 1:
			fmt.Fprintf(md, "%s:\n\n", r.Target.Label)
		}
		if len(globals) == 0 {
			md.WriteString("None set.\n\n")
			continue
		}
		md.WriteString("```sql\n")
		for _, g := range globals {
			md.WriteString(setGlobalSQL(g) + ";\n")
		}
		md.WriteString("```\n\n")
	}
}

func writePlan(md *strings.Builder, results []*Results) {
	p := &results[0].Plan
	md.WriteString("## Test plan\n\n")
	var targets []string
	for _, r := range results {
		targets = append(targets, fmt.Sprintf("%s (%s)", r.Target.Label, r.Target.Kind))
	}
	step := 1
	item := func(format string, a ...any) {
		fmt.Fprintf(md, "%d. "+format+"\n", append([]any{step}, a...)...)
		step++
	}
	if len(targets) == 1 {
		item("Start %s with its own data directory.", targets[0])
	} else {
		item("Start %s, one at a time, each with its own data.", strings.Join(targets, ", then "))
	}
	item("Set the global variables above.")
	if p.Tool == ToolTPCC {
		item("Create the database `%s` and load %s with `go-tpc tpcc prepare`.", p.Database, plural(p.TPCC.Warehouses, "warehouse"))
	} else {
		item("Create the database `%s` and load %s of %s with `sysbench oltp_common prepare`.", p.Database, plural(p.Sysbench.Tables, "table"), plural(p.Sysbench.TableSize, "row"))
	}
	item("Run `ANALYZE TABLE` on each table.")
	anyBackup := false
	for _, r := range results {
		if r.Target.Restore == RestoreBackup {
			anyBackup = true
		}
	}
	if anyBackup {
		item("Back up the database with `BACKUP DATABASE %s TO 'local://...'` (targets that restore from a backup).", p.Database)
	}
	threads := make([]string, len(p.Threads))
	for i, n := range p.Threads {
		threads[i] = strconv.Itoa(n)
	}
	var wl []string
	for _, w := range p.Workloads {
		wl = append(wl, "`"+w+"`")
	}
	tool := "sysbench"
	if p.Tool == ToolTPCC {
		tool = "go-tpc"
	}
	item("Run %s %s with %s threads, %s each, reporting every %s. Before every run but the first, bring the data back to the prepared state (see the restore column above).",
		tool, strings.Join(wl, ", "), strings.Join(threads, ", "), p.Duration.Duration, p.ReportInterval.Duration)
	if p.Tool == ToolTPCC {
		item("Take the tpmC (NEW_ORDER transactions per minute) and NEW_ORDER's 95th percentile latency from go-tpc's summary.")
	} else {
		item("Take TPS and the 95th percentile latency from sysbench's summary.")
	}
	md.WriteString("\n### Prepare test data\n\n```bash\n")
	if p.Tool == ToolTPCC {
		md.WriteString(shellLine("go-tpc", p.goTPCPrepareArgs(placeholderEndpoint)))
	} else {
		md.WriteString(shellLine("sysbench", p.sysbenchPrepareArgs(placeholderEndpoint)))
	}
	md.WriteString("\n```\n\n### Perform the test\n\n```bash\n")
	if p.Tool == ToolTPCC {
		md.WriteString(shellLine("go-tpc", p.goTPCRunArgs(placeholderEndpoint, "$threads")))
	} else {
		md.WriteString(shellLine("sysbench", p.sysbenchRunArgs(placeholderEndpoint, "$workload", "$threads")))
	}
	md.WriteString("\n```\n\n")
}

// errorNote lists the errors the tool counted and went on from (sysbench
// --mysql-ignore-errors, go-tpc's _ERR transactions), so a TPS bought
// with failures shows; "" when there were none.
func errorNote(results []*Results, workload string, threads []int) string {
	var parts []string
	for _, r := range results {
		for _, n := range threads {
			run, ok := r.Find(workload, n)
			if !ok {
				continue
			}
			var errs int64
			switch {
			case run.Sysbench != nil:
				errs = run.Sysbench.IgnoredErrors
			case run.TPCC != nil:
				errs = run.TPCC.Errors()
			}
			if errs > 0 {
				parts = append(parts, fmt.Sprintf("%s %d at %d threads", r.Target.Label, errs, n))
			}
		}
	}
	if len(parts) == 0 {
		return ""
	}
	what := "Errors sysbench counted and went on from (--mysql-ignore-errors)"
	if results[0].Plan.Tool == ToolTPCC {
		what = "Transactions that failed (go-tpc's _ERR lines)"
	}
	return what + ": " + strings.Join(parts, ", ") + "."
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// Improvement is the change from a to b in percent.
func Improvement(a, b float64) float64 { return (b - a) / a * 100 }

func changeSentence(name, metric, a, b string, avg float64, n int) string {
	threads := "thread count"
	if n != 1 {
		threads = fmt.Sprintf("%d thread counts", n)
	}
	rounded := math.Round(avg*100) / 100
	switch {
	case rounded == 0:
		return fmt.Sprintf("Averaged over %s, the %s %s of %s is unchanged from %s (0.00%%).", threads, name, metric, b, a)
	case avg > 0:
		return fmt.Sprintf("Averaged over %s, the %s %s of %s is %.2f%% higher than that of %s.", threads, name, metric, b, avg, a)
	default:
		return fmt.Sprintf("Averaged over %s, the %s %s of %s is %.2f%% lower than that of %s.", threads, name, metric, b, -avg, a)
	}
}

func signed(v float64) string {
	s := fmt.Sprintf("%+.2f%%", v)
	if s == "-0.00%" {
		s = "+0.00%"
	}
	return s
}

func peak(r *Results, workload string, threads []int) (Run, bool) {
	var best Run
	ok := false
	for _, n := range threads {
		if run, found := r.Find(workload, n); found && (!ok || run.Throughput() > best.Throughput()) {
			best, ok = run, true
		}
	}
	return best, ok
}

func mean(vs []float64) float64 {
	s := 0.0
	for _, v := range vs {
		s += v
	}
	return s / float64(len(vs))
}

func cell(found bool, v float64) string {
	if !found {
		return "n/a"
	}
	return formatNumber(v)
}

func value(found bool, v float64) float64 {
	if !found {
		return math.NaN()
	}
	return v
}

// formatNumber prints a parsed tool number with the digits the tool
// printed (the shortest form that parses back to the same float).
func formatNumber(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func writeRow(b *strings.Builder, cells []string) {
	b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
}

// WorkloadName is the reports' name of a workload: oltp_point_select is
// "Point Select", oltp_update_non_index "Update Non-index".
func WorkloadName(w string) string {
	switch w {
	case "tpcc":
		return "TPC-C"
	case "oltp_update_non_index":
		return "Update Non-index"
	}
	words := strings.Split(strings.TrimPrefix(w, "oltp_"), "_")
	for i, word := range words {
		if word != "" {
			words[i] = strings.ToUpper(word[:1]) + word[1:]
		}
	}
	return strings.Join(words, " ")
}

func chartFile(tool, workload string) string {
	if tool == ToolTPCC {
		return "tpcc.svg"
	}
	return "sysbench_" + strings.TrimPrefix(workload, "oltp_") + ".svg"
}

func resultFiles(results []*Results) string {
	var names []string
	for _, r := range results {
		names = append(names, "`"+r.Target.Label+".json`")
	}
	return strings.Join(names, " and ")
}

// WriteReport writes the report and its charts into dir.
func WriteReport(dir string, rep *Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var errs []error
	errs = append(errs, os.WriteFile(filepath.Join(dir, ReportFile), []byte(rep.Markdown), 0o644))
	for name, svg := range rep.Charts {
		errs = append(errs, os.WriteFile(filepath.Join(dir, name), svg, 0o644))
	}
	return errors.Join(errs...)
}

// Compare loads saved results (the first is the baseline) and writes their
// report into dir.
func Compare(dir string, resultPaths ...string) (*Report, error) {
	var results []*Results
	for _, path := range resultPaths {
		r, err := LoadResults(path)
		if err != nil {
			return nil, err
		}
		results = append(results, r)
	}
	rep, err := BuildReport(results)
	if err != nil {
		return nil, err
	}
	return rep, WriteReport(dir, rep)
}

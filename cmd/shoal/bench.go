package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/go-sql-driver/mysql"
	"github.com/shoaldb/shoal/bench"
)

const benchUsage = `usage:
  shoal bench sysbench --plan FILE --out DIR [--work DIR] [--keep-work] [--bin LABEL=PATH]...
  shoal bench tpcc     --plan FILE --out DIR [--work DIR] [--keep-work] [--bin LABEL=PATH]...
  shoal bench compare  A.json [B.json] --out DIR

sysbench and tpcc run a plan (bench/plans/*.toml) with the real sysbench or
go-tpc on each of its targets in turn and write DIR/<label>.json, the raw
tool outputs under DIR/raw, and DIR/report.md with SVG charts. compare
rebuilds the report from saved results (A is the baseline).`

// runBench is `shoal bench`. Exit status: 0 done, 1 the plan failed (the
// results so far are saved), 2 usage.
func runBench(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintln(stderr, benchUsage)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	switch args[0] {
	case "sysbench", "tpcc":
		return runBenchPlan(args[0], args[1:], stdout, stderr)
	case "compare":
		return runBenchCompare(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "shoal bench: unknown command %q\n\n%s\n", args[0], benchUsage)
	return 2
}

// binFlags collects repeated --bin LABEL=PATH.
type binFlags map[string]string

func (b binFlags) String() string {
	var parts []string
	for k, v := range b {
		parts = append(parts, k+"="+v)
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

func (b binFlags) Set(v string) error {
	label, path, ok := strings.Cut(v, "=")
	if !ok || label == "" || path == "" {
		return fmt.Errorf("want LABEL=PATH, got %q", v)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	b[label] = abs
	return nil
}

func runBenchPlan(tool string, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench "+tool, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprintf(stderr, "%s\n\nflags:\n", benchUsage); fs.PrintDefaults() }
	planPath := fs.String("plan", "", "plan file (TOML), e.g. bench/plans/ci-tiny.toml")
	out := fs.String("out", "", "output directory: results JSON, raw outputs, report.md and charts")
	work := fs.String("work", "", "directory for the servers' data, logs and backups (default: a temp dir, removed at the end)")
	keep := fs.Bool("keep-work", false, "keep the work directory")
	bins := binFlags{}
	fs.Var(bins, "bin", "LABEL=PATH: the shoal binary of target LABEL (overrides the plan; repeatable)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 || *planPath == "" || *out == "" {
		fmt.Fprintf(stderr, "shoal bench %s: --plan and --out are required, and nothing else\n", tool)
		return 2
	}
	plan, err := bench.LoadPlan(*planPath)
	if err != nil {
		fmt.Fprintln(stderr, "shoal bench:", err)
		return 2
	}
	if plan.Tool != tool {
		fmt.Fprintf(stderr, "shoal bench %s: %s is a %s plan (run it with shoal bench %s)\n", tool, *planPath, plan.Tool, plan.Tool)
		return 2
	}
	mysql.SetLogger(log.New(io.Discard, "", 0)) // the driver logs connections a stopped server closed
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	_, err = bench.Execute(ctx, plan, bench.Options{OutDir: *out, WorkDir: *work, KeepWork: *keep, Binaries: bins, Progress: stderr})
	if err != nil {
		fmt.Fprintln(stderr, "shoal bench:", err)
		return 1
	}
	fmt.Fprintln(stdout, filepath.Join(*out, bench.ReportFile))
	return 0
}

func runBenchCompare(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprintf(stderr, "%s\n\nflags:\n", benchUsage); fs.PrintDefaults() }
	out := fs.String("out", "", "output directory for report.md and the charts")
	// Flags may come before or after the JSON files.
	var files []string
	for {
		if err := fs.Parse(args); err != nil {
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if *out == "" || len(files) == 0 || len(files) > 2 {
		fmt.Fprintln(stderr, "shoal bench compare: want one or two results JSON files and --out DIR")
		return 2
	}
	if _, err := bench.Compare(*out, files...); err != nil {
		fmt.Fprintln(stderr, "shoal bench compare:", err)
		return 1
	}
	fmt.Fprintln(stdout, filepath.Join(*out, bench.ReportFile))
	return 0
}

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/shoaldb/shoal/chaos"
	"github.com/shoaldb/shoal/chaos/workload"
)

// runChaos is the fault-injection harness:
//
//	shoal chaos run --workload bank|bank-hot|register|list-append|all --time 2m --seed N --nemesis kill,pause,partition,transfer,split --target embedded|playground [--dir DIR]
//	shoal chaos check [--workload W] --history FILE
//
// Both exit 1 on any anomaly (after printing FAIL), 2 on a usage or run error.
func runChaos(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || (args[0] != "run" && args[0] != "check") {
		fmt.Fprintln(stderr, "usage: shoal chaos run|check [flags]  (shoal chaos run -h)")
		return 2
	}
	mysql.SetLogger(log.New(io.Discard, "", 0)) // the driver logs every killed connection
	if args[0] == "check" {
		fs := flag.NewFlagSet("chaos check", flag.ContinueOnError)
		fs.SetOutput(stderr)
		wl := fs.String("workload", "", "workload of the history (default: from the history's header)")
		path := fs.String("history", "", "history file (JSON lines) written by a run: <workload>.jsonl or tso-monotonic.jsonl")
		if err := fs.Parse(args[1:]); err != nil {
			return 2
		}
		if *path == "" {
			fmt.Fprintln(stderr, "shoal chaos check: --history is required")
			return 2
		}
		res, err := chaos.CheckFile(*wl, *path, stdout)
		if err != nil {
			fmt.Fprintln(stderr, "shoal chaos check:", err)
			return 2
		}
		if !res.Valid() {
			return 1
		}
		return 0
	}
	fs := flag.NewFlagSet("chaos run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	wl := fs.String("workload", "all", "bank, bank-hot, register, list-append or all (comma-separated list allowed)")
	dur := fs.Duration("time", 2*time.Minute, "how long the load runs")
	seed := fs.Int64("seed", time.Now().UnixNano()%100000, "seed of the operation and fault schedule")
	nem := fs.String("nemesis", "kill,pause", "comma-separated nemeses (kill, pause; with --target playground also partition, transfer, split) or none")
	target := fs.String("target", "embedded", "target: embedded (a shoal server the harness starts) or playground (3 PD, 3 stores, 2 SQL nodes, HAProxy)")
	dir := fs.String("dir", "", "directory for histories, data and logs (default: a new temp dir)")
	conc := fs.Int("concurrency", 3, "workers per workload")
	mode := fs.String("txn-mode", "optimistic", "list-append transaction mode: optimistic (snapshot isolation) or pessimistic")
	bin := fs.String("bin", "", "shoal binary to start (default: this one)")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	cfg := chaos.Config{Duration: *dur, Seed: *seed, Target: *target, Dir: *dir, Concurrency: *conc, TxnMode: *mode, Out: stdout, Bin: *bin}
	if *wl == "all" {
		cfg.Workloads = workload.Names()
	} else {
		cfg.Workloads = strings.Split(*wl, ",")
	}
	if *nem != "" && *nem != "none" {
		cfg.Nemeses = strings.Split(*nem, ",")
	}
	if cfg.Bin == "" {
		exe, err := os.Executable()
		if err != nil {
			fmt.Fprintln(stderr, "shoal chaos:", err)
			return 2
		}
		cfg.Bin = exe
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	rep, err := chaos.Run(ctx, cfg)
	if err != nil {
		fmt.Fprintln(stderr, "shoal chaos run:", err)
		return 2
	}
	if !rep.Pass {
		return 1
	}
	return 0
}

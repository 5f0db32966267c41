// Command shoal is the single shoal binary. Subcommands:
//
//	shoal server      the embedded server: PD, one store and one SQL node in
//	                  one process, data in one directory
//	shoal pd          a placement driver member
//	shoal store       a storage node
//	shoal sql         a SQL node of a cluster
//	shoal playground  a local cluster with HAProxy
//	shoal backup      BACKUP DATABASE through a SQL node
//	shoal restore     RESTORE DATABASE through a SQL node
//	shoal chaos       the fault-injection harness
//	shoal bench       sysbench / go-tpc plans and reports
//	shoal version     print the version
//
// The command parses flags and config and wires packages together; the
// roles live in their packages (embedded, pd/server, store/storenode,
// sqlnode, playground). lifecycle.go is the start-up and shutdown every
// role shares: exit codes (0 ok, 1 failed, 2 bad flags or config), the
// logger, SIGINT/SIGTERM, the status server, and a shutdown bounded to
// 30 s that closes the status server first, then the role.
package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
)

// Set with -ldflags "-X main.version=... -X main.gitHash=... -X main.buildTime=...".
var (
	version   = "v0.1.0-dev"
	gitHash   = "unknown"
	buildTime = "unknown"
)

type command struct {
	name  string
	short string
	run   func(args []string, stdout, stderr io.Writer) int
}

func commands() []command {
	return []command{
		{"server", "run the embedded server (PD + store + SQL in one process)", runServer},
		{"pd", "run a placement driver (PD) member", runPD},
		{"store", "run a storage node (multi-Raft store serving kv over gRPC)", runStore},
		{"sql", "run a SQL node of a cluster (MySQL protocol over PD and stores)", runSQL},
		{"playground", "run a local cluster (PD, stores, SQL nodes, HAProxy) on 127.0.0.1", runPlayground},
		{"backup", "back up databases through a SQL node (BACKUP DATABASE ... TO local:///path)", runBackup},
		{"restore", "restore databases through a SQL node (RESTORE DATABASE ... FROM local:///path)", runRestore},
		{"chaos", "fault-injection harness: workloads, nemeses and checkers (run, check)", runChaos},
		{"bench", "run sysbench / go-tpc plans and write comparison reports (sysbench, tpcc, compare)", runBench},
		{"version", "print version information", runVersion},
	}
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "usage: shoal <command> [flags]\n\ncommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.short)
	}
	fmt.Fprintf(w, "\nRun 'shoal <command> -h' for the flags of a command.\n")
}

func main() {
	setPrivateUmask()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		usage(stdout)
		return 0
	case "-version", "--version":
		return runVersion(nil, stdout, stderr)
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "shoal: unknown command %q\n\n", args[0])
	usage(stderr)
	return 2
}

func versionString() string {
	return fmt.Sprintf("shoal %s (git %s, built %s, %s %s/%s)", version, gitHash, buildTime, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

func runVersion(_ []string, stdout, _ io.Writer) int {
	fmt.Fprintln(stdout, versionString())
	return 0
}

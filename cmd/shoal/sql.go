package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/shoaldb/shoal/config"
	"github.com/shoaldb/shoal/sqlnode"
)

// sqlFlags parses the flags of `shoal sql`: defaults, then the --config
// file, then every flag given explicitly.
func sqlFlags(args []string, stderr io.Writer) (config.SQL, error) {
	cfg := config.DefaultSQL()
	fs := flag.NewFlagSet("shoal sql", flag.ContinueOnError)
	fs.StringVar(&cfg.PD, "pd", cfg.PD, "PD client addresses, host:port[,host:port...]")
	fs.StringVar(&cfg.Host, "host", cfg.Host, "MySQL protocol listen host")
	fs.IntVar(&cfg.Port, "port", cfg.Port, "MySQL protocol listen port")
	fs.StringVar(&cfg.StatusHost, "status-host", cfg.StatusHost, "status HTTP listen host (default: 127.0.0.1)")
	fs.IntVar(&cfg.StatusPort, "status-port", cfg.StatusPort, "status HTTP port (/status, /metrics, /debug/pprof if enabled); 0 disables")
	fs.BoolVar(&cfg.EnablePprof, "enable-pprof", cfg.EnablePprof, "serve /debug/pprof on the status port")
	fs.StringVar(&cfg.LogLevel, "log-level", cfg.LogLevel, "log level: debug, info, warn, error")
	fs.BoolVar(&cfg.InsecureAllowEmptyRootPassword, insecureFlag, cfg.InsecureAllowEmptyRootPassword, "allow a non-loopback --host while root has no password")
	securityFlags(fs, &cfg.Security)
	fs.StringVar(&cfg.SchemaSyncInterval, "schema-sync-interval", cfg.SchemaSyncInterval, "how often to re-read the schema and global variables other SQL nodes may change")
	fs.StringVar(&cfg.KVMaxBackoff, "kv-max-backoff", cfg.KVMaxBackoff, "how long one kv command retries region errors before failing (9005)")
	fs.BoolVar(&cfg.KVBatchCommands, "kv-batch-commands", cfg.KVBatchCommands, "send kv commands to the stores on batch streams (false: one unary gRPC call each)")
	fs.StringVar(&cfg.KVMaxBatchWaitTime, "kv-max-batch-wait-time", cfg.KVMaxBatchWaitTime, "how long a batch stream's sender waits for more requests when few are pending (0s: never)")
	fs.StringVar(&cfg.GCLifeTime, "gc-life-time", cfg.GCLifeTime, "how long old row versions stay readable before MVCC GC (default of tidb_gc_life_time)")
	fs.StringVar(&cfg.GCRunInterval, "gc-run-interval", cfg.GCRunInterval, "how far the GC safe point must move before a GC round runs (default of tidb_gc_run_interval)")
	fs.Var(dirListFlag{&cfg.Security.BackupDirs}, "backup-dirs", backupDirsUsage)
	if err := parseFlags(fs, args, stderr, "usage: shoal sql [flags]\n\nA stateless SQL node of a cluster (PD + stores).", func(path string) error {
		cfg = config.DefaultSQL()
		return cfg.LoadFile(path)
	}); err != nil {
		return cfg, err
	}
	cfg.RootPassword = config.RootPasswordFromEnv(cfg.RootPassword)
	return cfg, cfg.Validate()
}

func runSQL(args []string, _, stderr io.Writer) int {
	return runCommand("sql", args, stderr, sqlFlags, func(cfg config.SQL) error {
		return serveSQL(cfg, roleLogger(cfg.LogLevel, stderr))
	})
}

// sqlStartTimeout bounds reaching PD and reading the catalog at startup.
const sqlStartTimeout = 60 * time.Second

// serveSQL runs a SQL node until SIGINT/SIGTERM or a fatal error. The
// node binds its ports before anything else, so a taken port fails at
// once; a signal interrupts the start-up.
func serveSQL(cfg config.SQL, log *slog.Logger) error {
	ctx, stop := catchSignals()
	defer stop()
	octx, cancel := context.WithTimeout(ctx, sqlStartTimeout)
	node, err := sqlnode.Open(octx, sqlnode.Config{SQL: cfg, Version: version, GitHash: gitHash}, log)
	cancel()
	if err != nil {
		return err
	}
	log.Info("shoal sql ready", "version", version, "addr", cfg.Addr(), "status", orOff(sqlStatusAddr(cfg)), "pd", cfg.PD,
		"connect", fmt.Sprintf("mysql -h %s -P %d -u root", cfg.Host, cfg.Port))
	// The node serves its status endpoints itself and closes them first.
	return runRole(ctx, stop, role{name: "sql", log: log, failed: node.Err(),
		stoppedMsg: "MySQL protocol server stopped", failure: mysqlStopped, close: node.Close})
}

// sqlStatusAddr is the status address, "" when the port is off.
func sqlStatusAddr(cfg config.SQL) string {
	if cfg.StatusPort == 0 {
		return ""
	}
	return cfg.StatusAddr()
}

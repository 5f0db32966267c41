package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/shoaldb/shoal/config"
	"github.com/shoaldb/shoal/playground"
)

// playgroundFlags parses the flags of `shoal playground`: defaults, then
// the --config file, then every flag given explicitly.
func playgroundFlags(args []string, stderr io.Writer) (config.Playground, error) {
	cfg := config.DefaultPlayground()
	fs := flag.NewFlagSet("shoal playground", flag.ContinueOnError)
	fs.IntVar(&cfg.PD, "pd", cfg.PD, "number of PD members")
	fs.IntVar(&cfg.Store, "store", cfg.Store, "number of storage nodes")
	fs.IntVar(&cfg.SQL, "sql", cfg.SQL, "number of SQL nodes")
	fs.IntVar(&cfg.BasePort, "base-port", cfg.BasePort, "HAProxy's port; SQL nodes use the next ports, the other processes up to base+109")
	fs.StringVar(&cfg.DataDir, "data-dir", cfg.DataDir, "directory for every process's data and log")
	fs.BoolVar(&cfg.Clean, "clean", cfg.Clean, "remove the data dir when the playground stops")
	fs.StringVar(&cfg.HAProxy, "haproxy", cfg.HAProxy, "haproxy binary (default: haproxy from PATH or /usr/sbin)")
	fs.StringVar(&cfg.RegionSplitSize, "region-split-size", cfg.RegionSplitSize, "stores split a region once its data passes this size (e.g. 1MiB for tests)")
	fs.StringVar(&cfg.LogLevel, "log-level", cfg.LogLevel, "log level of every process: debug, info, warn, error")
	fs.Var(dirListFlag{&cfg.Security.BackupDirs}, "backup-dirs", backupDirsUsage+"; given to every SQL node")
	fs.BoolVar(&cfg.TLS, "tls", cfg.TLS, "generate a CA and certificate into the data dir: mutual TLS between all processes, TLS for MySQL clients")
	if err := parseFlags(fs, args, stderr, "usage: shoal playground [flags]\n\nStarts a local cluster on 127.0.0.1 (PD, stores, SQL nodes, HAProxy) and stops it on Ctrl-C.", func(path string) error {
		cfg = config.DefaultPlayground()
		return cfg.LoadFile(path)
	}); err != nil {
		return cfg, err
	}
	return cfg, cfg.Validate()
}

func runPlayground(args []string, stdout, stderr io.Writer) int {
	return runCommand("playground", args, stderr, playgroundFlags, func(cfg config.Playground) error {
		return servePlayground(cfg, newLogger("info", stderr), stdout)
	})
}

// servePlayground starts the cluster, prints how to connect, and stops it
// on SIGINT/SIGTERM or when a process dies on its own.
func servePlayground(cfg config.Playground, log *slog.Logger, stdout io.Writer) error {
	haproxy, err := playground.FindHAProxy(cfg.HAProxy)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("cannot find the shoal binary: %w", err)
	}
	dataDir, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return err
	}
	ctx, stop := catchSignals()
	defer stop()
	start := time.Now()
	c, err := playground.Start(ctx, playground.Options{
		PD: cfg.PD, Store: cfg.Store, SQL: cfg.SQL, BasePort: cfg.BasePort, DataDir: dataDir,
		Binary: self, HAProxy: haproxy, SplitSize: cfg.RegionSplitSize, LogLevel: cfg.LogLevel, Logger: log, TLS: cfg.TLS,
		BackupDirs: cfg.Security.BackupDirs,
	})
	cleanup := func() {
		if cfg.Clean {
			if err := os.RemoveAll(dataDir); err != nil {
				log.Warn("cannot remove the data dir", "dir", dataDir, "err", err)
			} else {
				log.Info("data dir removed", "dir", dataDir)
			}
		}
	}
	if err != nil {
		cleanup()
		return err
	}
	host, port, _ := strings.Cut(c.Layout.HAProxy, ":")
	fmt.Fprintf(stdout, "shoal playground is ready (%.1fs): %d PD, %d stores, %d SQL nodes behind HAProxy\n",
		time.Since(start).Seconds(), cfg.PD, cfg.Store, cfg.SQL)
	fmt.Fprintf(stdout, "  connect:   mysql -h %s -P %s -u root\n", host, port)
	for i, s := range c.Layout.SQL {
		fmt.Fprintf(stdout, "  sql-%d:     %s (status http://%s/status)\n", i+1, s.MySQL, s.Status)
	}
	fmt.Fprintf(stdout, "  pd:        %s\n", c.PDAddrs())
	fmt.Fprintf(stdout, "  data/logs: %s\n", dataDir)
	if p := c.TLSPaths(); !p.IsZero() {
		fmt.Fprintf(stdout, "  tls:       CA %s (mysql --ssl-ca=%s)\n", p.CA, p.CA)
	}
	fmt.Fprintf(stdout, "Press Ctrl-C to stop.\n")

	var runErr error
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
wait:
	for {
		select {
		case <-ctx.Done():
			log.Info("stopping the playground", "reason", "signal")
			break wait
		case <-tick.C:
			if err := c.Exited(); err != nil {
				runErr = err
				log.Error("a process stopped on its own; stopping the playground", "err", err)
				break wait
			}
		}
	}
	stop()
	if err := c.Stop(); err != nil {
		log.Warn("stop", "err", err)
	}
	cleanup()
	log.Info("playground stopped")
	return runErr
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/shoaldb/shoal/config"
	"github.com/shoaldb/shoal/playground"
)

// playgroundFlags parses the flags of `shoal playground`: defaults, then
// the --config file, then every flag given explicitly.
func playgroundFlags(args []string, stderr io.Writer) (config.Playground, error) {
	def := config.DefaultPlayground()
	fs := flag.NewFlagSet("shoal playground", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		cfgFile   = fs.String("config", "", "path of a TOML config file; flags override it")
		pds       = fs.Int("pd", def.PD, "number of PD members")
		stores    = fs.Int("store", def.Store, "number of storage nodes")
		sqls      = fs.Int("sql", def.SQL, "number of SQL nodes")
		basePort  = fs.Int("base-port", def.BasePort, "HAProxy's port; SQL nodes use the next ports, the other processes up to base+109")
		dataDir   = fs.String("data-dir", def.DataDir, "directory for every process's data and log")
		clean     = fs.Bool("clean", def.Clean, "remove the data dir when the playground stops")
		haproxy   = fs.String("haproxy", def.HAProxy, "haproxy binary (default: haproxy from PATH or /usr/sbin)")
		splitSize = fs.String("region-split-size", def.RegionSplitSize, "stores split a region once its data passes this size (e.g. 1MiB for tests)")
		logLevel  = fs.String("log-level", def.LogLevel, "log level of every process: debug, info, warn, error")
	)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: shoal playground [flags]\n\nStarts a local cluster on 127.0.0.1 (PD, stores, SQL nodes, HAProxy) and stops it on Ctrl-C.\n\nflags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return def, err
	}
	if fs.NArg() > 0 {
		return def, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	cfg := def
	if *cfgFile != "" {
		if err := cfg.LoadFile(*cfgFile); err != nil {
			return cfg, err
		}
	}
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "pd":
			cfg.PD = *pds
		case "store":
			cfg.Store = *stores
		case "sql":
			cfg.SQL = *sqls
		case "base-port":
			cfg.BasePort = *basePort
		case "data-dir":
			cfg.DataDir = *dataDir
		case "clean":
			cfg.Clean = *clean
		case "haproxy":
			cfg.HAProxy = *haproxy
		case "region-split-size":
			cfg.RegionSplitSize = *splitSize
		case "log-level":
			cfg.LogLevel = *logLevel
		}
	})
	return cfg, cfg.Validate()
}

func runPlayground(args []string, stdout, stderr io.Writer) int {
	cfg, err := playgroundFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "shoal playground: %v\n", err)
		return 2
	}
	log := newLogger("info", stderr)
	if err := servePlayground(cfg, log, stdout); err != nil {
		fmt.Fprintf(stderr, "shoal playground: %v\n", err)
		return 1
	}
	return 0
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
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	c, err := playground.Start(ctx, playground.Options{
		PD: cfg.PD, Store: cfg.Store, SQL: cfg.SQL, BasePort: cfg.BasePort, DataDir: dataDir,
		Binary: self, HAProxy: haproxy, SplitSize: cfg.RegionSplitSize, LogLevel: cfg.LogLevel, Logger: log,
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

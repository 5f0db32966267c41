package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/shoaldb/shoal/config"
	"github.com/shoaldb/shoal/status"
)

// serverFlags parses the flags of `shoal server` into a config: defaults,
// then the --config file, then every flag that was given explicitly.
func serverFlags(args []string, stderr io.Writer) (config.Config, error) {
	cfg := config.Default()
	fs := flag.NewFlagSet("shoal server", flag.ContinueOnError)
	fs.StringVar(&cfg.Host, "host", cfg.Host, "MySQL protocol listen host")
	fs.IntVar(&cfg.Port, "port", cfg.Port, "MySQL protocol listen port")
	fs.StringVar(&cfg.StatusHost, "status-host", cfg.StatusHost, "status HTTP listen host (default: 127.0.0.1)")
	fs.IntVar(&cfg.StatusPort, "status-port", cfg.StatusPort, "status HTTP port (/status, /metrics, /debug/pprof if enabled); 0 disables")
	fs.BoolVar(&cfg.EnablePprof, "enable-pprof", cfg.EnablePprof, "serve /debug/pprof on the status port")
	fs.StringVar(&cfg.DataDir, "data-dir", cfg.DataDir, "data directory")
	fs.StringVar(&cfg.LogLevel, "log-level", cfg.LogLevel, "log level: debug, info, warn, error")
	fs.BoolVar(&cfg.InsecureAllowEmptyRootPassword, insecureFlag, cfg.InsecureAllowEmptyRootPassword, "allow a non-loopback --host while root has no password")
	fs.StringVar(&cfg.InitFile, "init-file", cfg.InitFile, "file of SQL statements to run as root at start")
	securityFlags(fs, &cfg.Security)
	fs.StringVar(&cfg.GCLifeTime, "gc-life-time", cfg.GCLifeTime, "how long old row versions are kept before garbage collection")
	fs.Var(dirListFlag{&cfg.Security.BackupDirs}, "backup-dirs", backupDirsUsage)
	if err := parseFlags(fs, args, stderr, "usage: shoal server [flags]", func(path string) error {
		cfg = config.Default()
		return cfg.LoadFile(path)
	}); err != nil {
		return cfg, err
	}
	cfg.RootPassword = config.RootPasswordFromEnv(cfg.RootPassword)
	return cfg, cfg.Validate()
}

func runServer(args []string, _, stderr io.Writer) int {
	return runCommand("server", args, stderr, serverFlags, func(cfg config.Config) error {
		return serve(cfg, roleLogger(cfg.LogLevel, stderr))
	})
}

// serve runs the embedded server until SIGINT/SIGTERM or a fatal error.
// Everything that can fail at start (ports, data dir, storage) fails here,
// before the server reports itself ready.
func serve(cfg config.Config, log *slog.Logger) error {
	start := time.Now()
	log.Debug("effective config", "host", cfg.Host, "port", cfg.Port, "status", orOff(serverStatusAddr(cfg)),
		"data-dir", cfg.DataDir, "log-level", cfg.LogLevel, "root-password-set", cfg.RootPassword != "")
	if err := config.CheckRootExposure(cfg.Host, cfg.RootPassword, cfg.InsecureAllowEmptyRootPassword); err != nil {
		return err
	}
	if err := checkDataDir(cfg.DataDir); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Addr())
	if err != nil {
		return fmt.Errorf("cannot listen for MySQL clients on %s: %w", cfg.Addr(), err)
	}
	defer ln.Close()
	statusLn, err := listenStatus(serverStatusAddr(cfg))
	if err != nil {
		return err
	}
	if statusLn != nil {
		defer statusLn.Close()
	}

	node, err := openNode(cfg, log)
	if err != nil {
		return err
	}

	ctx, stop := catchSignals()
	defer stop()

	serveErr := make(chan error, 1)
	go func() { serveErr <- node.Serve(ln) }()
	st := serveStatus(statusLn, status.Handler(status.Info{Role: "server", Version: version, GitHash: gitHash, Addr: cfg.Addr(),
		StartTime: start, EnablePprof: cfg.EnablePprof}))
	log.Info("shoal server ready", "version", version, "addr", cfg.Addr(), "status", orOff(serverStatusAddr(cfg)), "data-dir", cfg.DataDir,
		"connect", fmt.Sprintf("mysql -h %s -P %d -u root", cfg.Host, cfg.Port))
	return runRole(ctx, stop, role{name: "server", log: log, status: st, failed: serveErr,
		stoppedMsg: "MySQL protocol server stopped", failure: mysqlStopped,
		close: node.Close}) // listener, sessions, then storage
}

// serverStatusAddr is the status address, "" when the port is off.
func serverStatusAddr(cfg config.Config) string {
	if cfg.StatusPort == 0 {
		return ""
	}
	return cfg.StatusAddr()
}

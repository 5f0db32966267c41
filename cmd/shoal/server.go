package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
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

func newLogger(level string, w io.Writer) *slog.Logger {
	var l slog.Level
	switch strings.ToLower(level) {
	case "debug":
		l = slog.LevelDebug
	case "warn", "warning":
		l = slog.LevelWarn
	case "error":
		l = slog.LevelError
	default:
		l = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l}))
}

// checkDataDir creates the data directory if needed and proves it writable.
func checkDataDir(dir string) error {
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return fmt.Errorf("data dir %s exists and is not a directory", dir)
	}
	if err := ensurePrivateDir(dir); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".write-probe-*")
	if err != nil {
		return fmt.Errorf("data dir %s is not writable: %w", dir, err)
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

func runServer(args []string, stdout, stderr io.Writer) int {
	cfg, err := serverFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "shoal server: %v\n", err)
		return 2
	}
	log := newLogger(cfg.LogLevel, stderr)
	slog.SetDefault(log)
	if err := serve(cfg, log); err != nil {
		fmt.Fprintf(stderr, "shoal server: %v\n", err)
		return 1
	}
	return 0
}

// serve runs the embedded server until SIGINT/SIGTERM or a fatal error.
// Everything that can fail at start (ports, data dir, storage) fails here,
// before the server reports itself ready.
func serve(cfg config.Config, log *slog.Logger) error {
	start := time.Now()
	log.Debug("effective config", "host", cfg.Host, "port", cfg.Port, "status", statusAddrOrOff(cfg),
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
	var statusLn net.Listener
	if cfg.StatusPort != 0 {
		statusLn, err = net.Listen("tcp", cfg.StatusAddr())
		if err != nil {
			return fmt.Errorf("cannot listen for status HTTP on %s: %w", cfg.StatusAddr(), err)
		}
		defer statusLn.Close()
	}

	node, err := openNode(cfg, log)
	if err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	serveErr := make(chan error, 1)
	go func() { serveErr <- node.Serve(ln) }()
	var st *status.Server
	if statusLn != nil {
		st = status.Serve(statusLn, status.Info{Role: "server", Version: version, GitHash: gitHash, Addr: cfg.Addr(), StartTime: start,
			EnablePprof: cfg.EnablePprof})
	}
	log.Info("shoal server ready", "version", version, "addr", cfg.Addr(), "status", statusAddrOrOff(cfg), "data-dir", cfg.DataDir,
		"connect", fmt.Sprintf("mysql -h %s -P %d -u root", cfg.Host, cfg.Port))

	var runErr error
	select {
	case <-ctx.Done():
		log.Info("shutting down", "reason", "signal")
	case err := <-serveErr:
		if err != nil && !errors.Is(err, net.ErrClosed) {
			runErr = fmt.Errorf("MySQL server stopped: %w", err)
		}
		log.Error("MySQL protocol server stopped", "err", err)
	}
	stop() // a second signal kills the process the default way

	done := make(chan error, 1)
	go func() {
		var errs []error
		if st != nil {
			errs = append(errs, st.Close())
		}
		errs = append(errs, node.Close()) // listener, sessions, then storage
		done <- errors.Join(errs...)
	}()
	select {
	case err := <-done:
		if err != nil {
			log.Warn("shutdown", "err", err)
		}
	case <-time.After(30 * time.Second):
		return errors.New("shutdown did not finish within 30s")
	}
	log.Info("shoal server stopped")
	return runErr
}

func statusAddrOrOff(cfg config.Config) string {
	if cfg.StatusPort == 0 {
		return "off"
	}
	return cfg.StatusAddr()
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/shoaldb/shoal/status"
)

// The start-up and shutdown every process role (server, pd, store, sql)
// shares: exit codes, logger, signals, status server, the run loop and an
// ordered, bounded shutdown. Each role's file keeps only what is its own:
// flags, wiring, and its log lines' fields.

// Exit codes of a subcommand.
const (
	exitOK     = 0
	exitFailed = 1 // the command ran and failed (start-up, serving, shutdown)
	exitUsage  = 2 // bad flags or configuration
)

// shutdownTimeout bounds a role's shutdown after the run loop ends.
const shutdownTimeout = 30 * time.Second

// runCommand runs the subcommand "shoal <name>": it parses the flags and
// config (-h: exit 0; invalid: the error, exit 2), then serves (an error
// is printed, exit 1).
func runCommand[C any](name string, args []string, stderr io.Writer,
	parse func(args []string, stderr io.Writer) (C, error), serve func(cfg C) error) int {
	cfg, err := parse(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "shoal %s: %v\n", name, err)
		return exitUsage
	}
	if err := serve(cfg); err != nil {
		fmt.Fprintf(stderr, "shoal %s: %v\n", name, err)
		return exitFailed
	}
	return exitOK
}

// newLogger is a text logger at level (debug, warn, error; else info).
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

// roleLogger makes a role's logger and the process's default one.
func roleLogger(level string, stderr io.Writer) *slog.Logger {
	log := newLogger(level, stderr)
	slog.SetDefault(log)
	return log
}

// catchSignals returns a context ended by SIGINT or SIGTERM; stop restores
// the default handling, so a second signal kills the process.
func catchSignals() (ctx context.Context, stop context.CancelFunc) {
	return signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
}

// listenStatus binds the status HTTP address; "" means off (nil listener).
func listenStatus(addr string) (net.Listener, error) {
	if addr == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("cannot listen for status HTTP on %s: %w", addr, err)
	}
	return ln, nil
}

// serveStatus serves h on ln until the role stops; nil when ln is nil.
func serveStatus(ln net.Listener, h http.Handler) *status.Server {
	if ln == nil {
		return nil
	}
	return status.ServeHandler(ln, h)
}

// orOff is how the ready lines show an address that is switched off.
func orOff(addr string) string {
	if addr == "" {
		return "off"
	}
	return addr
}

// role is a started process role as runRole drives it.
type role struct {
	name string // "shoal <name> stopped"
	log  *slog.Logger
	// status serves the role's status endpoints (nil: none, or the role
	// serves them itself); it is closed first.
	status *status.Server
	// failed delivers the error with which the role stops on its own;
	// it is logged at error level as stoppedMsg, and failure (nil: the
	// error itself) turns it into the run's result.
	failed     <-chan error
	stoppedMsg string
	failure    func(error) error
	// close stops the role after its status server.
	close func() error
	// closeErrFails makes close's error the run's result when it has none
	// (the store); otherwise it is only logged.
	closeErrFails bool
}

// runRole runs a started role until ctx ends (a signal) or the role stops
// on its own, then shuts it down: stop catching signals, close the status
// server, then the role, within shutdownTimeout.
func runRole(ctx context.Context, stopSignals context.CancelFunc, r role) error {
	var runErr error
	select {
	case <-ctx.Done():
		r.log.Info("shutting down", "reason", "signal")
	case err := <-r.failed:
		runErr = err
		if r.failure != nil {
			runErr = r.failure(err)
		}
		r.log.Error(r.stoppedMsg, "err", err)
	}
	stopSignals() // a second signal kills the process the default way

	done := make(chan error, 1)
	go func() {
		var statusErr error
		if r.status != nil {
			statusErr = r.status.Close()
		}
		err := r.close()
		if r.closeErrFails {
			if err != nil && runErr == nil {
				runErr = err
			}
			err = nil
		}
		done <- errors.Join(statusErr, err)
	}()
	select {
	case err := <-done:
		if err != nil {
			r.log.Warn("shutdown", "err", err)
		}
	case <-time.After(shutdownTimeout):
		return fmt.Errorf("shutdown did not finish within %v", shutdownTimeout)
	}
	r.log.Info("shoal " + r.name + " stopped")
	return runErr
}

// mysqlStopped is the run's result when a MySQL protocol server stops on
// its own: a closed listener is no failure.
func mysqlStopped(err error) error {
	if err != nil && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("MySQL server stopped: %w", err)
	}
	return nil
}

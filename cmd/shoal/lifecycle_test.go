package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"net"
	"strings"
	"testing"
)

func TestRunCommandExitCodes(t *testing.T) {
	parse := func(args []string, _ io.Writer) (string, error) {
		switch {
		case len(args) == 0:
			return "", nil
		case args[0] == "-h":
			return "", flag.ErrHelp
		case args[0] == "bad":
			return "", errors.New("bad flag")
		}
		return args[0], nil
	}
	serve := func(cfg string) error {
		if cfg == "fail" {
			return errors.New("cannot start")
		}
		return nil
	}
	for _, c := range []struct {
		args []string
		code int
		out  string
	}{
		{nil, exitOK, ""},
		{[]string{"-h"}, exitOK, ""},
		{[]string{"bad"}, exitUsage, "shoal x: bad flag\n"},
		{[]string{"fail"}, exitFailed, "shoal x: cannot start\n"},
	} {
		var stderr strings.Builder
		if code := runCommand("x", c.args, &stderr, parse, serve); code != c.code || stderr.String() != c.out {
			t.Errorf("%v: exit %d, %q", c.args, code, stderr.String())
		}
	}
}

// runRole ends on a signal (ctx) or on the role's own failure; either way
// the status server closes before the role; a close error fails the run
// only for roles that ask for it.
func TestRunRole(t *testing.T) {
	closeErr := errors.New("close failed")
	for _, c := range []struct {
		name          string
		signal        bool
		failure       error
		closeErrFails bool
		want          string // "" for nil
	}{
		{name: "signal", signal: true},
		{name: "signal, close error fails", signal: true, closeErrFails: true, want: "close failed"},
		{name: "failure mapped", failure: errors.New("accept: boom"), want: "MySQL server stopped: accept: boom"},
		{name: "closed listener", failure: net.ErrClosed},
		{name: "failure wins over close error", failure: errors.New("boom"), closeErrFails: true, want: "MySQL server stopped: boom"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			failed := make(chan error, 1)
			if c.signal {
				cancel()
			} else {
				failed <- c.failure
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			st := serveStatus(ln, nil)
			var order []string
			var log strings.Builder
			err = runRole(ctx, cancel, role{name: "x", log: newLogger("info", &log), status: st, failed: failed,
				stoppedMsg: "stopped on its own", failure: mysqlStopped, closeErrFails: c.closeErrFails,
				close: func() error {
					if _, err := net.Dial("tcp", ln.Addr().String()); err == nil {
						order = append(order, "status still open")
					}
					order = append(order, "close")
					return closeErr
				}})
			if (err == nil) != (c.want == "") || (err != nil && err.Error() != c.want) {
				t.Fatalf("run error %v, want %q", err, c.want)
			}
			if strings.Join(order, ",") != "close" {
				t.Fatalf("order %v", order)
			}
			if !strings.Contains(log.String(), "shoal x stopped") ||
				strings.Contains(log.String(), "close failed") == c.closeErrFails {
				t.Fatalf("log:\n%s", log.String())
			}
		})
	}
}

package testserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/shoaldb/shoal/playground"
)

// PlaygroundOptions configures StartPlayground.
type PlaygroundOptions struct {
	Bin            string // path of the shoal binary
	PD, Store, SQL int
	DataDir        string   // the playground's data dir (created)
	LogPath        string   // the playground's own output
	SplitSize      string   // region split size, e.g. "1MiB"
	BackupDirs     []string // the SQL nodes' --backup-dirs
	// TLS starts the playground with --tls (mutual TLS between processes,
	// TLS for MySQL clients; certificates in DataDir/tls).
	TLS bool
	// ReadyTimeout bounds the wait for "ready" (default 3 minutes).
	ReadyTimeout time.Duration
}

// Playground is a running `shoal playground` process (which supervises
// PD, stores, SQL nodes and haproxy).
type Playground struct {
	// Server is the HAProxy endpoint as a Server (Open, DSN, Host, Port);
	// do not Start or Stop it: Stop the Playground.
	Server  *Server
	Layout  playground.Layout
	DataDir string
	LogPath string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	log  *os.File
}

// StartPlayground starts `shoal playground` on a free span of loopback
// ports and waits until it prints that it is ready. On failure nothing is
// left running.
func StartPlayground(o PlaygroundOptions) (*Playground, error) {
	if o.ReadyTimeout <= 0 {
		o.ReadyTimeout = 3 * time.Minute
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		base, err := playground.FreeBasePort(o.PD, o.Store, o.SQL)
		if err != nil {
			return nil, err
		}
		layout, err := playground.NewLayout(base, o.PD, o.Store, o.SQL)
		if err != nil {
			return nil, err
		}
		p, err := startPlayground(o, base, layout)
		if err == nil {
			return p, nil
		}
		lastErr = err
		// A port taken between the check and the start: try another span.
		if !strings.Contains(err.Error(), "is taken") {
			return nil, err
		}
	}
	return nil, lastErr
}

func startPlayground(o PlaygroundOptions, base int, layout playground.Layout) (*Playground, error) {
	logf, err := os.OpenFile(o.LogPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	args := []string{"playground", "--pd", strconv.Itoa(o.PD), "--store", strconv.Itoa(o.Store), "--sql", strconv.Itoa(o.SQL),
		"--base-port", strconv.Itoa(base), "--data-dir", o.DataDir}
	if o.SplitSize != "" {
		args = append(args, "--region-split-size", o.SplitSize)
	}
	if len(o.BackupDirs) > 0 {
		args = append(args, "--backup-dirs", strings.Join(o.BackupDirs, ","))
	}
	if o.TLS {
		args = append(args, "--tls")
	}
	cmd := exec.Command(o.Bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own group, and killed if the test process dies.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	host, port, _ := strings.Cut(layout.HAProxy, ":")
	pn, _ := strconv.Atoi(port)
	p := &Playground{
		Server:  &Server{Kind: "shoal", Host: host, Port: pn, DataDir: o.DataDir, LogPath: o.LogPath},
		Layout:  layout,
		DataDir: o.DataDir,
		LogPath: o.LogPath,
		cmd:     cmd,
		done:    make(chan struct{}),
		log:     logf,
	}
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()
	deadline := time.Now().Add(o.ReadyTimeout)
	for {
		b, _ := os.ReadFile(o.LogPath)
		if bytes.Contains(b, []byte("Press Ctrl-C to stop")) {
			return p, nil
		}
		select {
		case <-p.done:
			logf.Close()
			return nil, fmt.Errorf("shoal playground exited before it was ready:\n%s", p.LogTail(4000))
		default:
		}
		if time.Now().After(deadline) {
			err := fmt.Errorf("shoal playground not ready after %v:\n%s", o.ReadyTimeout, p.LogTail(4000))
			_ = p.Stop(30 * time.Second)
			return nil, err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Running reports whether the playground process is alive.
func (p *Playground) Running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Stop sends SIGTERM (the playground stops its processes in order) and
// waits up to timeout, then SIGKILLs it (its children die with it:
// they have a parent-death signal). It reports a stop that needed a kill.
func (p *Playground) Stop(timeout time.Duration) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return nil
	}
	defer func() { p.log.Close(); p.cmd = nil }()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		if st := p.cmd.ProcessState; st != nil && !st.Success() {
			return fmt.Errorf("playground exit status: %v", st)
		}
		return nil
	case <-time.After(timeout):
	}
	_ = p.cmd.Process.Kill()
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		return errors.New("playground survived SIGKILL for 30s")
	}
	return fmt.Errorf("playground did not stop within %v after SIGTERM; killed", timeout)
}

// LogTail returns the last n bytes of the playground's own output.
func (p *Playground) LogTail(n int) string {
	b, err := os.ReadFile(p.LogPath)
	if err != nil {
		return ""
	}
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// ProcessLogTail returns the last n bytes of one process's log (name as
// the playground names it: pd-1, store-2, sql-1, haproxy).
func (p *Playground) ProcessLogTail(name string, n int) string {
	b, err := os.ReadFile(p.DataDir + "/" + name + ".log")
	if err != nil {
		return ""
	}
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// Cluster is a playground run in this process (playground.Start), so a
// test can kill -9, restart and pause its processes one by one (see
// playground/control.go). Stop it in the test's cleanup.
type Cluster struct {
	*playground.Cluster
	// Server is the HAProxy endpoint as a Server (Open, DSN, Host, Port);
	// do not Start or Stop it: Stop the Cluster.
	Server  *Server
	DataDir string
}

// StartCluster starts PD, stores, SQL nodes and haproxy (found by
// playground.FindHAProxy) on a free span of loopback ports and waits until
// they are healthy. On failure nothing is left running.
func StartCluster(o PlaygroundOptions) (*Cluster, error) {
	haproxy, err := playground.FindHAProxy("")
	if err != nil {
		return nil, err
	}
	if o.ReadyTimeout <= 0 {
		o.ReadyTimeout = 3 * time.Minute
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		base, err := playground.FreeBasePort(o.PD, o.Store, o.SQL)
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithTimeout(context.Background(), o.ReadyTimeout)
		c, err := playground.Start(ctx, playground.Options{
			PD: o.PD, Store: o.Store, SQL: o.SQL, BasePort: base, DataDir: o.DataDir,
			Binary: o.Bin, HAProxy: haproxy, SplitSize: o.SplitSize, StopTimeout: 20 * time.Second,
		})
		cancel()
		if err == nil {
			host, port, _ := strings.Cut(c.Layout.HAProxy, ":")
			pn, _ := strconv.Atoi(port)
			return &Cluster{Cluster: c, DataDir: o.DataDir,
				Server: &Server{Kind: "shoal", Host: host, Port: pn, DataDir: o.DataDir}}, nil
		}
		lastErr = err
		if !strings.Contains(err.Error(), "is taken") {
			return nil, err
		}
	}
	return nil, lastErr
}

// ProcessLogTail returns the last n bytes of one process's log (pd-1,
// store-2, sql-1, haproxy).
func (c *Cluster) ProcessLogTail(name string, n int) string {
	b, err := os.ReadFile(c.DataDir + "/" + name + ".log")
	if err != nil {
		return ""
	}
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

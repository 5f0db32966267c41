package chaos

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/shoaldb/shoal/chaos/nemesis"
)

// Target is what the workloads run against: the MySQL address clients use
// and the processes the nemeses may fault. A playground (PD, stores, SQL
// nodes behind HAProxy) plugs in as another Target whose Nodes are its
// processes and whose SQLAddr is the proxy.
type Target interface {
	Start(ctx context.Context) error
	SQLAddr() string
	Nodes() []nemesis.Node
	// Ready waits until the target serves SQL again (after healing).
	Ready(ctx context.Context) error
	// Close stops every process the target started (also after failures).
	Close() error
}

// Embedded is one `shoal server` process (PD, store and SQL in one) on a
// free 127.0.0.1 port, with its data under Dir.
type Embedded struct {
	Bin string
	Dir string

	proc *process
}

func (e *Embedded) Start(ctx context.Context) error {
	var last error
	for attempt := 0; attempt < 3; attempt++ {
		port, err := freePort()
		if err != nil {
			return err
		}
		sport, err := freePort()
		if err != nil {
			return err
		}
		p := &process{
			name: "server",
			addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
			log:  filepath.Join(e.Dir, "shoal.log"),
			args: []string{e.Bin, "server", "--host", "127.0.0.1", "--port", strconv.Itoa(port),
				"--status-port", strconv.Itoa(sport), "--data-dir", filepath.Join(e.Dir, "data")},
		}
		if last = p.start(ctx); last == nil {
			e.proc = p
			return nil
		}
	}
	return last
}

func (e *Embedded) SQLAddr() string { return e.proc.addr }

func (e *Embedded) Nodes() []nemesis.Node { return []nemesis.Node{e.proc} }

func (e *Embedded) Ready(ctx context.Context) error { return e.proc.waitReady(ctx) }

func (e *Embedded) Close() error {
	if e.proc == nil {
		return nil
	}
	return e.proc.stop()
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// process is a child process the harness owns: started in its own process
// group with a parent-death SIGKILL, so it never outlives the harness.
type process struct {
	name, addr, log string
	args            []string

	mu     sync.Mutex
	cmd    *exec.Cmd
	done   chan struct{}
	paused bool
}

func (p *process) Name() string { return p.name }

func (p *process) start(ctx context.Context) error {
	p.mu.Lock()
	if p.cmd != nil {
		p.mu.Unlock()
		return errors.New(p.name + " already running")
	}
	logf, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		p.mu.Unlock()
		return err
	}
	cmd := exec.Command(p.args[0], p.args[1:]...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		p.mu.Unlock()
		return err
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); logf.Close(); close(done) }()
	p.cmd, p.done = cmd, done
	p.mu.Unlock()
	if err := p.waitReady(ctx); err != nil {
		p.Kill()
		return fmt.Errorf("%s on %s did not become ready: %w (log: %s)", p.name, p.addr, err, p.log)
	}
	return nil
}

// waitReady pings until the process answers (at most 60 s or ctx).
func (p *process) waitReady(ctx context.Context) error {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr = "root", "tcp", p.addr
	cfg.Timeout, cfg.ReadTimeout = 2*time.Second, 5*time.Second
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	var last error
	for {
		p.mu.Lock()
		done := p.done
		p.mu.Unlock()
		if done == nil {
			return errors.New("not running")
		}
		select {
		case <-done:
			return errors.New("process exited")
		default:
		}
		pctx, pcancel := context.WithTimeout(ctx, 3*time.Second)
		last = db.PingContext(pctx)
		pcancel()
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%v (last ping: %v)", ctx.Err(), last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (p *process) Kill() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return nil
	}
	p.cmd.Process.Signal(syscall.SIGKILL)
	if p.paused {
		p.cmd.Process.Signal(syscall.SIGCONT)
		p.paused = false
	}
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		return fmt.Errorf("%s (pid %d) did not exit after SIGKILL", p.name, p.cmd.Process.Pid)
	}
	p.cmd, p.done = nil, nil
	return nil
}

func (p *process) Restart(ctx context.Context) error { return p.start(ctx) }

func (p *process) signal(sig syscall.Signal, paused bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return errors.New(p.name + " not running")
	}
	if err := p.cmd.Process.Signal(sig); err != nil {
		return err
	}
	p.paused = paused
	return nil
}

func (p *process) Pause() error  { return p.signal(syscall.SIGSTOP, true) }
func (p *process) Resume() error { return p.signal(syscall.SIGCONT, false) }

// stop resumes a paused process and ends it: SIGTERM, then SIGKILL after
// 20 s.
func (p *process) stop() error {
	p.mu.Lock()
	if p.cmd == nil {
		p.mu.Unlock()
		return nil
	}
	if p.paused {
		p.cmd.Process.Signal(syscall.SIGCONT)
		p.paused = false
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	done := p.done
	p.mu.Unlock()
	select {
	case <-done:
		p.mu.Lock()
		p.cmd, p.done = nil, nil
		p.mu.Unlock()
		return nil
	case <-time.After(20 * time.Second):
		return p.Kill()
	}
}

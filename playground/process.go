package playground

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// proc is one supervised child process with its output in a log file.
type proc struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	logFile *os.File
	done    chan struct{} // closed when the process has exited
	err     error         // its exit status, valid after done

	stopOnce sync.Once
}

// startProc starts bin with args, stdout and stderr appended to logPath.
func startProc(name, logPath, bin string, args ...string) (*proc, error) {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%s: log file: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: start %s: %w", name, bin, err)
	}
	p := &proc{name: name, cmd: cmd, logPath: logPath, logFile: f, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process has exited, and how.
func (p *proc) exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// Pid is the process id.
func (p *proc) Pid() int { return p.cmd.Process.Pid }

// signalStop sends SIGTERM (once).
func (p *proc) signalStop() {
	p.stopOnce.Do(func() {
		if ok, _ := p.exited(); !ok {
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
		}
	})
}

// waitOrKill waits until the process exits or the deadline passes, then
// kills it; it returns once the process is gone. It reports whether the
// process had to be killed.
func (p *proc) waitOrKill(deadline time.Time) bool {
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-p.done:
		return false
	case <-t.C:
	}
	_ = p.cmd.Process.Kill()
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
	}
	return true
}

// stopGroup stops procs together: SIGTERM to each, then a shared bounded
// wait, then SIGKILL for the stragglers. It names the killed ones.
func stopGroup(procs []*proc, timeout time.Duration) error {
	for _, p := range procs {
		p.signalStop()
	}
	deadline := time.Now().Add(timeout)
	var killed []error
	for _, p := range procs {
		if p.waitOrKill(deadline) {
			killed = append(killed, fmt.Errorf("%s (pid %d) did not stop within %v: killed", p.name, p.Pid(), timeout))
		}
	}
	return errors.Join(killed...)
}

// tail returns the last n bytes of the process's log, for error messages.
func (p *proc) tail(n int64) string {
	f, err := os.Open(p.logPath)
	if err != nil {
		return ""
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return ""
	}
	off := max(st.Size()-n, 0)
	buf := make([]byte, st.Size()-off)
	_, _ = f.ReadAt(buf, off)
	return string(buf)
}

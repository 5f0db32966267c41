package playground

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"syscall"
	"time"
)

// Per-process control of a running playground, for fault tests and the
// chaos harness: kill -9 one named process (pd-N, store-N, sql-N), start it
// again with the same arguments and data dir, pause and resume it, and find
// the PD leader.
//
// Invariants: a name always denotes the same slot (role and index), so a
// restarted process keeps its ports, data dir and log file (appended); Stop
// stops whatever runs in each slot at that time; a killed process that was
// not restarted is simply skipped by Stop.

// Role is the kind of a playground process.
type Role string

const (
	RolePD    Role = "pd"
	RoleStore Role = "store"
	RoleSQL   Role = "sql"
)

// ProcessNames lists the names of the PD members, stores and SQL nodes
// (not HAProxy), in start order.
func (c *Cluster) ProcessNames() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, g := range [][]*proc{c.pds, c.stores, c.sqls} {
		for _, p := range g {
			out = append(out, p.name)
		}
	}
	return out
}

// NamesOf lists the process names of one role.
func (c *Cluster) NamesOf(r Role) []string {
	var out []string
	for _, n := range c.ProcessNames() {
		if strings.HasPrefix(n, string(r)+"-") {
			out = append(out, n)
		}
	}
	return out
}

// slot finds the group and index of a named process; call with c.mu held.
func (c *Cluster) slot(name string) ([]*proc, int, error) {
	for _, g := range [][]*proc{c.pds, c.stores, c.sqls} {
		for i, p := range g {
			if p.name == name {
				return g, i, nil
			}
		}
	}
	return nil, 0, fmt.Errorf("playground: no process %q (have %s)", name, strings.Join(c.namesLocked(), ", "))
}

func (c *Cluster) namesLocked() []string {
	var out []string
	for _, g := range [][]*proc{c.pds, c.stores, c.sqls} {
		for _, p := range g {
			out = append(out, p.name)
		}
	}
	sort.Strings(out)
	return out
}

func (c *Cluster) get(name string) (*proc, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return nil, errors.New("playground: stopped")
	}
	g, i, err := c.slot(name)
	if err != nil {
		return nil, err
	}
	return g[i], nil
}

// Running reports whether the named process is running (a paused one is
// running).
func (c *Cluster) Running(name string) bool {
	p, err := c.get(name)
	if err != nil {
		return false
	}
	ok, _ := p.exited()
	return !ok
}

// Kill sends SIGKILL to the named process and waits (up to 10 s) until it
// is gone. Killing a process that is not running is a no-op.
func (c *Cluster) Kill(name string) error {
	p, err := c.get(name)
	if err != nil {
		return err
	}
	if ok, _ := p.exited(); ok {
		return nil
	}
	_ = p.cmd.Process.Kill()
	// A stopped process dies of SIGKILL too; SIGCONT is harmless.
	_ = p.cmd.Process.Signal(syscall.SIGCONT)
	select {
	case <-p.done:
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("playground: %s (pid %d) still alive 10s after SIGKILL", name, p.Pid())
	}
}

// Restart starts the named process again, with the arguments, data dir and
// log file it had, and waits until it is healthy (a PD member: healthy and
// knows a leader; a SQL node: healthy and accepting MySQL connections). It
// fails if the process is still running.
func (c *Cluster) Restart(ctx context.Context, name string) error {
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return errors.New("playground: stopped")
	}
	g, i, err := c.slot(name)
	if err != nil {
		c.mu.Unlock()
		return err
	}
	old := g[i]
	if ok, _ := old.exited(); !ok {
		c.mu.Unlock()
		return fmt.Errorf("playground: %s (pid %d) is still running; Kill it first", name, old.Pid())
	}
	np, err := startProc(old.name, old.logPath, old.cmd.Path, old.cmd.Args[1:]...)
	if err != nil {
		c.mu.Unlock()
		return err
	}
	g[i] = np
	c.mu.Unlock()
	c.track(np)
	return c.waitServing(ctx, np, i)
}

// waitServing waits until a (re)started process of slot i serves.
func (c *Cluster) waitServing(ctx context.Context, p *proc, i int) error {
	switch {
	case strings.HasPrefix(p.name, "pd-"):
		return c.waitHealthy(ctx, p, c.Layout.PD[i].Status, func(m map[string]any) bool {
			return m["health"] == true && m["leader"] != nil && m["leader"] != ""
		})
	case strings.HasPrefix(p.name, "store-"):
		return c.waitHealthy(ctx, p, c.Layout.Store[i].Status, func(m map[string]any) bool { return m["health"] == true })
	case strings.HasPrefix(p.name, "sql-"):
		if err := c.waitHealthy(ctx, p, c.Layout.SQL[i].Status, func(m map[string]any) bool { return m["health"] == true }); err != nil {
			return err
		}
		return c.waitFor(ctx, p, "MySQL port "+c.Layout.SQL[i].MySQL, func() bool {
			return waitPortOpen(c.Layout.SQL[i].MySQL, 200*time.Millisecond) == nil
		})
	}
	return nil
}

// Pause sends SIGSTOP to the named process.
func (c *Cluster) Pause(name string) error { return c.signal(name, syscall.SIGSTOP) }

// Resume sends SIGCONT to the named process.
func (c *Cluster) Resume(name string) error { return c.signal(name, syscall.SIGCONT) }

func (c *Cluster) signal(name string, sig syscall.Signal) error {
	p, err := c.get(name)
	if err != nil {
		return err
	}
	if ok, _ := p.exited(); ok {
		return fmt.Errorf("playground: %s is not running", name)
	}
	return p.cmd.Process.Signal(sig)
}

// Pid returns the named process's current pid (0 if unknown).
func (c *Cluster) Pid(name string) int {
	p, err := c.get(name)
	if err != nil {
		return 0
	}
	return p.Pid()
}

// LogPath returns the named process's log file.
func (c *Cluster) LogPath(name string) string { return c.logPath(name) }

// StatusAddr returns the status address of a named PD member, store or SQL
// node ("" if there is none).
func (c *Cluster) StatusAddr(name string) string {
	role, idx, ok := strings.Cut(name, "-")
	var i int
	if _, err := fmt.Sscanf(idx, "%d", &i); !ok || err != nil || i < 1 {
		return ""
	}
	i--
	switch Role(role) {
	case RolePD:
		if i < len(c.Layout.PD) {
			return c.Layout.PD[i].Status
		}
	case RoleStore:
		if i < len(c.Layout.Store) {
			return c.Layout.Store[i].Status
		}
	case RoleSQL:
		if i < len(c.Layout.SQL) {
			return c.Layout.SQL[i].Status
		}
	}
	return ""
}

// PDLeader returns the name of the PD member whose /status says it is the
// leader, asking every running member. It fails when none or more than one
// claims leadership right now (during an election).
func (c *Cluster) PDLeader() (string, error) {
	return PDLeaderOf(c.Layout.PD, func(i int) bool { return c.Running(fmt.Sprintf("pd-%d", i+1)) })
}

// WaitPDLeader polls PDLeader until one member leads, other than any name
// in not, or ctx ends.
func (c *Cluster) WaitPDLeader(ctx context.Context, not ...string) (string, error) {
	var last error
	for {
		name, err := c.PDLeader()
		if err == nil {
			ok := true
			for _, n := range not {
				ok = ok && n != name
			}
			if ok {
				return name, nil
			}
			err = fmt.Errorf("leader is still %s", name)
		}
		last = err
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("no PD leader: %v (last: %v)", ctx.Err(), last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// PDLeaderOf asks the /status of each PD member (running(i) filters the
// ones to ask; nil asks all) which one is the leader.
func PDLeaderOf(pds []PDAddrs, running func(i int) bool) (string, error) {
	var leaders, errs []string
	for i, p := range pds {
		if running != nil && !running(i) {
			continue
		}
		m, err := Status(p.Status)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		if m["is_leader"] == true {
			name, _ := m["name"].(string)
			if name == "" {
				name = fmt.Sprintf("pd-%d", i+1)
			}
			leaders = append(leaders, name)
		}
	}
	switch len(leaders) {
	case 1:
		return leaders[0], nil
	case 0:
		return "", fmt.Errorf("no PD member claims leadership (errors: %s)", strings.Join(errs, "; "))
	}
	return "", fmt.Errorf("several PD members claim leadership: %v", leaders)
}

// Package pdtest starts in-process PD clusters for tests, on free loopback
// ports, and stops them when the test ends.
package pdtest

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/shoaldb/shoal/pd/server"
)

// Cluster is a running set of PD members.
type Cluster struct {
	t       testing.TB
	Members []*server.Server
	cfgs    []server.Config
	stopped []bool
}

// Options tweak every member's config before it starts (nil: defaults).
type Options func(i int, cfg *server.Config)

// FreePorts returns n distinct free TCP ports on 127.0.0.1 (free when
// asked; a port can still be taken before it is bound).
func FreePorts(t testing.TB, n int) []int {
	t.Helper()
	var lns []net.Listener
	var ports []int
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("free port: %v", err)
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	for _, ln := range lns {
		ln.Close()
	}
	return ports
}

// Start starts n members with quiet logs and waits for a leader.
func Start(t testing.TB, n int, opt Options) *Cluster {
	t.Helper()
	ports := FreePorts(t, 2*n)
	c := &Cluster{t: t}
	var initial []string
	for i := range n {
		initial = append(initial, fmt.Sprintf("pd%d=http://127.0.0.1:%d", i+1, ports[2*i+1]))
	}
	for i := range n {
		cfg := server.Config{
			Name:           fmt.Sprintf("pd%d", i+1),
			DataDir:        t.TempDir(),
			ClientURL:      fmt.Sprintf("127.0.0.1:%d", ports[2*i]),
			PeerURL:        fmt.Sprintf("127.0.0.1:%d", ports[2*i+1]),
			InitialCluster: strings.Join(initial, ","),
			EtcdLogLevel:   "error",
			Logger:         slog.New(slog.NewTextHandler(io.Discard, nil)),
		}
		if testing.Verbose() {
			cfg.Logger = slog.Default()
		}
		if opt != nil {
			opt(i, &cfg)
		}
		c.cfgs = append(c.cfgs, cfg)
	}
	for i := range n {
		s, err := server.New(c.cfgs[i])
		if err != nil {
			c.Close()
			t.Fatalf("start %s: %v", c.cfgs[i].Name, err)
		}
		c.Members = append(c.Members, s)
		c.stopped = append(c.stopped, false)
	}
	t.Cleanup(c.Close)
	c.WaitLeader(20 * time.Second)
	return c
}

// Addrs returns the client addresses of all members.
func (c *Cluster) Addrs() []string {
	var out []string
	for _, cfg := range c.cfgs {
		out = append(out, cfg.ClientURL)
	}
	return out
}

// WaitLeader waits until exactly one running member serves as leader and
// returns its index.
func (c *Cluster) WaitLeader(timeout time.Duration) int {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		leader, count := -1, 0
		for i, s := range c.Members {
			if !c.stopped[i] && s.IsLeader() {
				leader, count = i, count+1
			}
		}
		if count == 1 {
			return leader
		}
		time.Sleep(20 * time.Millisecond)
	}
	c.t.Fatalf("no PD leader within %s", timeout)
	return -1
}

// Stop stops member i.
func (c *Cluster) Stop(i int) {
	if !c.stopped[i] {
		c.stopped[i] = true
		c.Members[i].Close()
	}
}

// Close stops every member still running.
func (c *Cluster) Close() {
	for i := range c.Members {
		c.Stop(i)
	}
}

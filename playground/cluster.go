package playground

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/shoaldb/shoal/pd/pdclient"
	"github.com/shoaldb/shoal/playground/faultproxy"
	"github.com/shoaldb/shoal/proto/metapb"
)

// Options describe a playground.
type Options struct {
	PD, Store, SQL int
	// BasePort: HAProxy's port; the others follow (see Layout).
	BasePort int
	// DataDir holds a directory and a log file per process, and
	// haproxy.cfg.
	DataDir string
	// Binary is the shoal binary to run for every role.
	Binary string
	// HAProxy is the haproxy binary (see FindHAProxy); empty with
	// NoHAProxy set means none is started.
	HAProxy   string
	NoHAProxy bool
	// SplitSize is the stores' region split size ("" : the store default),
	// e.g. "1MiB" in tests.
	SplitSize string
	// HeartbeatInterval is the stores' region and store heartbeat interval
	// ("": 1s, so PD sees splits and adds replicas quickly).
	HeartbeatInterval string
	// FaultProxies puts a fault proxy (playground/faultproxy) in front of
	// every store's gRPC port and every PD member's client and peer ports,
	// so that Isolate can partition a process (chaos tests).
	FaultProxies bool
	// LogLevel of the processes ("": info).
	LogLevel string
	// TLS generates a CA and certificate into DataDir/tls and gives them
	// to every process: gRPC between them is mutual TLS and SQL nodes
	// offer TLS to MySQL clients (tls.go).
	TLS bool
	// StartTimeout bounds each wait for health ("": 90s).
	StartTimeout time.Duration
	// StopTimeout bounds each group's graceful stop before SIGKILL (20s).
	StopTimeout time.Duration
	// Logger reports progress (nil: discard).
	Logger *slog.Logger
	// BackupDirs: the SQL nodes' --backup-dirs (where BACKUP and RESTORE
	// may go; none: refused).
	BackupDirs []string
}

func (o *Options) fill() {
	if o.HeartbeatInterval == "" {
		o.HeartbeatInterval = "1s"
	}
	if o.LogLevel == "" {
		o.LogLevel = "info"
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = 90 * time.Second
	}
	if o.StopTimeout <= 0 {
		o.StopTimeout = 20 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
}

// Cluster is a running playground.
type Cluster struct {
	opts    Options
	Layout  Layout
	pds     []*proc
	stores  []*proc
	sqls    []*proc
	haproxy *proc
	// net holds the fault proxies (nil without Options.FaultProxies).
	net     *faultproxy.Network
	stopped bool
	// mu guards the process slots (control.go replaces a restarted
	// process) and stopped.
	mu sync.Mutex
	// pidMu guards pids, the current pid of every named process; the
	// fault proxies read it without waiting for mu (held through Stop).
	pidMu sync.Mutex
	pids  map[string]int
}

// track records a (re)started process's pid for the fault proxies.
func (c *Cluster) track(p *proc) {
	c.pidMu.Lock()
	defer c.pidMu.Unlock()
	if c.pids == nil {
		c.pids = map[string]int{}
	}
	c.pids[p.name] = p.Pid()
}

// trackedPids returns a copy of the recorded pids.
func (c *Cluster) trackedPids() map[string]int {
	c.pidMu.Lock()
	defer c.pidMu.Unlock()
	out := make(map[string]int, len(c.pids))
	for k, v := range c.pids {
		out[k] = v
	}
	return out
}

// Start starts the whole playground and waits until it is healthy. On
// failure it stops what it started and the error carries the tail of the
// failing process's log.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	opts.fill()
	l, err := NewLayout(opts.BasePort, opts.PD, opts.Store, opts.SQL)
	if err != nil {
		return nil, err
	}
	if opts.FaultProxies {
		l = l.WithFaultProxies()
	}
	if opts.Binary == "" {
		return nil, errors.New("playground: no shoal binary")
	}
	if !opts.NoHAProxy && opts.HAProxy == "" {
		return nil, errors.New("playground: no haproxy binary")
	}
	if err := CheckFree(l.All()); err != nil {
		return nil, fmt.Errorf("playground needs ports %d..%d: %w", opts.BasePort, opts.BasePort+PortSpan-1, err)
	}
	if err := os.MkdirAll(opts.DataDir, 0o700); err != nil {
		return nil, err
	}
	c := &Cluster{opts: opts, Layout: l}
	if err := c.generateTLS(); err != nil {
		return nil, fmt.Errorf("playground: TLS certificates: %w", err)
	}
	if err := c.start(ctx); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

func (c *Cluster) dir(name string) string { return filepath.Join(c.opts.DataDir, name) }
func (c *Cluster) logPath(name string) string {
	return filepath.Join(c.opts.DataDir, name+".log")
}

// PDAddrs are the PD members' client addresses, comma-separated.
func (c *Cluster) PDAddrs() string {
	var a []string
	for _, p := range c.Layout.PD {
		a = append(a, p.Client)
	}
	return strings.Join(a, ",")
}

// startFaultProxies starts a proxy on every advertised store and PD
// address, forwarding to where the process listens.
func (c *Cluster) startFaultProxies() error {
	c.net = faultproxy.NewNetwork(faultproxy.ProcIdentify(c.trackedPids))
	for i, p := range c.Layout.PD {
		name := fmt.Sprintf("pd-%d", i+1)
		if _, err := c.net.Listen(name, p.Client, p.ClientListen); err != nil {
			return err
		}
		if _, err := c.net.Listen(name, p.Peer, p.PeerListen); err != nil {
			return err
		}
	}
	for i, s := range c.Layout.Store {
		if _, err := c.net.Listen(fmt.Sprintf("store-%d", i+1), s.GRPC, s.Listen); err != nil {
			return err
		}
	}
	return nil
}

func (c *Cluster) start(ctx context.Context) error {
	o := c.opts
	log := o.Logger
	if c.Layout.Proxied() {
		if err := c.startFaultProxies(); err != nil {
			return err
		}
	}
	// PD: all members at once (they form the etcd cluster together).
	var initial []string
	for i, p := range c.Layout.PD {
		initial = append(initial, fmt.Sprintf("pd-%d=%s", i+1, p.Peer))
	}
	for i, p := range c.Layout.PD {
		name := fmt.Sprintf("pd-%d", i+1)
		args := []string{"pd", "--name", name, "--data-dir", c.dir(name),
			"--client-urls", p.ClientListen, "--peer-urls", p.PeerListen, "--status-addr", p.Status,
			"--initial-cluster", strings.Join(initial, ","), "--log-level", o.LogLevel,
			"--max-replicas", fmt.Sprint(min(3, o.Store))}
		args = append(args, c.tlsArgs()...)
		if p.ClientListen != p.Client || p.PeerListen != p.Peer {
			args = append(args, "--advertise-client-urls", p.Client, "--advertise-peer-urls", p.Peer)
		}
		pr, err := startProc(name, c.logPath(name), o.Binary, args...)
		if err != nil {
			return err
		}
		c.track(pr)
		c.pds = append(c.pds, pr)
	}
	for i, p := range c.Layout.PD {
		if err := c.waitHealthy(ctx, c.pds[i], p.Status, func(m map[string]any) bool {
			return m["health"] == true && m["leader"] != nil && m["leader"] != ""
		}); err != nil {
			return err
		}
	}
	log.Info("PD ready", "members", len(c.pds), "pd", c.PDAddrs())

	// Stores: the first bootstraps the cluster, then the others join.
	for i, s := range c.Layout.Store {
		name := fmt.Sprintf("store-%d", i+1)
		args := []string{"store", "--pd", c.PDAddrs(), "--addr", s.Listen, "--status-addr", s.Status,
			"--data-dir", c.dir(name), "--log-level", o.LogLevel,
			"--region-heartbeat-interval", o.HeartbeatInterval, "--store-heartbeat-interval", o.HeartbeatInterval}
		if s.Listen != s.GRPC {
			args = append(args, "--advertise-addr", s.GRPC)
		}
		args = append(args, c.tlsArgs()...)
		if o.SplitSize != "" {
			args = append(args, "--region-split-size", o.SplitSize)
		}
		pr, err := startProc(name, c.logPath(name), o.Binary, args...)
		if err != nil {
			return err
		}
		c.track(pr)
		c.stores = append(c.stores, pr)
		if i == 0 {
			if err := c.waitHealthy(ctx, pr, s.Status, func(m map[string]any) bool { return m["health"] == true }); err != nil {
				return err
			}
		}
	}
	for i, s := range c.Layout.Store {
		if err := c.waitHealthy(ctx, c.stores[i], s.Status, func(m map[string]any) bool { return m["health"] == true }); err != nil {
			return err
		}
	}
	if err := c.waitReplicas(ctx, min(3, o.Store)); err != nil {
		return err
	}
	log.Info("stores ready", "stores", len(c.stores))

	// SQL nodes.
	for i, s := range c.Layout.SQL {
		name := fmt.Sprintf("sql-%d", i+1)
		_, port, _ := strings.Cut(s.MySQL, ":")
		_, sport, _ := strings.Cut(s.Status, ":")
		args := append([]string{"sql", "--pd", c.PDAddrs(),
			"--host", "127.0.0.1", "--port", port, "--status-port", sport, "--log-level", o.LogLevel}, c.tlsArgs()...)
		if len(o.BackupDirs) > 0 {
			args = append(args, "--backup-dirs", strings.Join(o.BackupDirs, ","))
		}
		pr, err := startProc(name, c.logPath(name), o.Binary, args...)
		if err != nil {
			return err
		}
		c.track(pr)
		c.sqls = append(c.sqls, pr)
	}
	for i, s := range c.Layout.SQL {
		if err := c.waitHealthy(ctx, c.sqls[i], s.Status, func(m map[string]any) bool { return m["health"] == true }); err != nil {
			return err
		}
		if err := waitPortOpen(s.MySQL, o.StartTimeout); err != nil {
			return err
		}
	}
	log.Info("SQL nodes ready", "sql", len(c.sqls))

	if o.NoHAProxy {
		return nil
	}
	cfgPath := filepath.Join(o.DataDir, "haproxy.cfg")
	var backends []string
	for _, s := range c.Layout.SQL {
		backends = append(backends, s.MySQL)
	}
	if err := os.WriteFile(cfgPath, []byte(HAProxyConfig(c.Layout.HAProxy, backends)), 0o644); err != nil {
		return err
	}
	pr, err := startProc("haproxy", c.logPath("haproxy"), o.HAProxy, "-db", "-f", cfgPath)
	if err != nil {
		return err
	}
	c.haproxy = pr
	if err := c.waitFor(ctx, pr, "haproxy listening on "+c.Layout.HAProxy, func() bool {
		return waitPortOpen(c.Layout.HAProxy, 200*time.Millisecond) == nil
	}); err != nil {
		return err
	}
	log.Info("HAProxy ready", "addr", c.Layout.HAProxy, "config", cfgPath)
	return nil
}

// waitFor polls cond until it holds, the process exits, ctx ends or the
// start timeout passes.
func (c *Cluster) waitFor(ctx context.Context, p *proc, what string, cond func() bool) error {
	deadline := time.Now().Add(c.opts.StartTimeout)
	for {
		if cond() {
			return nil
		}
		if ok, err := p.exited(); ok {
			return fmt.Errorf("%s exited (%v) before %s; log %s ends with:\n%s", p.name, err, what, p.logPath, p.tail(2000))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: no %s after %v; log %s ends with:\n%s", p.name, what, c.opts.StartTimeout, p.logPath, p.tail(2000))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

var httpClient = &http.Client{Timeout: 3 * time.Second}

// Status fetches a process's /status document.
func Status(statusAddr string) (map[string]any, error) {
	resp, err := httpClient.Get("http://" + statusAddr + "/status")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %s: %s", statusAddr, resp.Status)
	}
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		return nil, err
	}
	return m, nil
}

// waitHealthy waits until the process's /status satisfies ok.
func (c *Cluster) waitHealthy(ctx context.Context, p *proc, statusAddr string, ok func(map[string]any) bool) error {
	return c.waitFor(ctx, p, "healthy /status on "+statusAddr, func() bool {
		m, err := Status(statusAddr)
		return err == nil && ok(m)
	})
}

// waitReplicas waits until PD reports every region with at least n voters
// (the bootstrapped cluster's first region gets its replicas from PD).
func (c *Cluster) waitReplicas(ctx context.Context, n int) error {
	cctx, cancel := context.WithTimeout(ctx, c.opts.StartTimeout)
	defer cancel()
	clientTLS, err := c.clientTLS()
	if err != nil {
		return err
	}
	pdc, err := pdclient.New(cctx, strings.Split(c.PDAddrs(), ","), pdclient.Options{RetryTimeout: 5 * time.Second, Logger: c.opts.Logger,
		TLS: clientTLS})
	if err != nil {
		return fmt.Errorf("playground: PD client: %w", err)
	}
	defer pdc.Close()
	var last string
	return c.waitFor(ctx, c.stores[0], fmt.Sprintf("%d replicas of every region", n), func() bool {
		rctx, cancel := context.WithTimeout(cctx, 3*time.Second)
		defer cancel()
		regions, err := pdc.ScanRegions(rctx, nil, nil, 0)
		if err != nil || len(regions) == 0 {
			return false
		}
		for _, r := range regions {
			if v := Voters(r.Meta); v < n || r.Leader == nil {
				if s := fmt.Sprintf("region %d has %d voters", r.Meta.GetId(), v); s != last {
					last = s
					c.opts.Logger.Info("waiting for replicas", "region", r.Meta.GetId(), "voters", v, "want", n)
				}
				return false
			}
		}
		return true
	})
}

// Voters counts a region's voting peers.
func Voters(r *metapb.Region) int {
	n := 0
	for _, p := range r.GetPeers() {
		if p.GetRole() == metapb.PeerRole_Voter {
			n++
		}
	}
	return n
}

// Pids returns the process ids of every running child, by name.
func (c *Cluster) Pids() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for _, g := range [][]*proc{c.pds, c.stores, c.sqls, {c.haproxy}} {
		for _, p := range g {
			if p != nil {
				out[p.name] = p.Pid()
			}
		}
	}
	return out
}

// Exited returns the first child that exited on its own, if any.
func (c *Cluster) Exited() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, g := range [][]*proc{c.pds, c.stores, c.sqls, {c.haproxy}} {
		for _, p := range g {
			if p == nil {
				continue
			}
			if ok, err := p.exited(); ok {
				return fmt.Errorf("%s exited (%v); log %s ends with:\n%s", p.name, err, p.logPath, p.tail(2000))
			}
		}
	}
	return nil
}

// Stop stops HAProxy, the SQL nodes, the stores and PD, in that order,
// each group with a bounded graceful wait and then SIGKILL. It is safe to
// call more than once.
func (c *Cluster) Stop() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return nil
	}
	c.stopped = true
	var errs []error
	if c.haproxy != nil {
		errs = append(errs, stopGroup([]*proc{c.haproxy}, c.opts.StopTimeout))
	}
	for _, g := range [][]*proc{c.sqls, c.stores, c.pds} {
		errs = append(errs, stopGroup(g, c.opts.StopTimeout))
	}
	if c.net != nil {
		errs = append(errs, c.net.Close())
	}
	return errors.Join(errs...)
}

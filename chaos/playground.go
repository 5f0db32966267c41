package chaos

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/shoaldb/shoal/chaos/checker"
	"github.com/shoaldb/shoal/chaos/checker/tso"
	"github.com/shoaldb/shoal/chaos/history"
	"github.com/shoaldb/shoal/chaos/nemesis"
	"github.com/shoaldb/shoal/playground"
)

// Playground is a playground cluster (3 PD, 3 stores, 2 SQL nodes and
// haproxy on free 127.0.0.1 ports, 1 MiB regions, fault proxies in front
// of the stores and PD members) started in this process; its Nodes are the
// PD members, stores and SQL nodes (kill -9 and restart with the same data
// dir, SIGSTOP/SIGCONT, isolation from the other processes through the
// fault proxies), its SQLAddr is HAProxy, and it forces region leader
// transfers and splits through the stores' admin endpoints
// (nemesis.RegionAdmin). While the run lasts, a PD client polls GetTS and
// the run fails if a timestamp does not strictly increase (across PD
// leader kills, pauses and partitions); those timestamps are written to
// tso-monotonic.jsonl, which `shoal chaos check` replays.
type Playground struct {
	Bin string
	Dir string
	// PD, Store, SQL: the topology (default 3, 3, 2).
	PD, Store, SQL int

	c       *playground.Cluster
	tso     *TSOMonitor
	regions *regionAdmin
}

func (p *Playground) Start(ctx context.Context) error {
	if p.PD == 0 {
		p.PD, p.Store, p.SQL = 3, 3, 2
	}
	haproxy, err := playground.FindHAProxy("")
	if err != nil {
		return err
	}
	var last error
	for attempt := 0; attempt < 3; attempt++ {
		base, err := playground.FreeBasePort(p.PD, p.Store, p.SQL)
		if err != nil {
			return err
		}
		c, err := playground.Start(ctx, playground.Options{
			PD: p.PD, Store: p.Store, SQL: p.SQL, BasePort: base, DataDir: filepath.Join(p.Dir, "playground"),
			Binary: p.Bin, HAProxy: haproxy, SplitSize: "1MiB", StartTimeout: 90 * time.Second,
			FaultProxies: true,
		})
		if err == nil {
			p.c = c
			p.regions = &regionAdmin{stores: p.runningStores, pdAddrs: strings.Split(c.PDAddrs(), ",")}
			return nil
		}
		last = err
		if !strings.Contains(err.Error(), "is taken") {
			return err
		}
	}
	return last
}

func (p *Playground) SQLAddr() string { return p.c.Layout.HAProxy }

func (p *Playground) Nodes() []nemesis.Node {
	var out []nemesis.Node
	for _, n := range p.c.ProcessNames() {
		out = append(out, &pgNode{c: p.c, name: n})
	}
	return out
}

// Ready waits until every process runs and a new connection through
// HAProxy answers a query.
func (p *Playground) Ready(ctx context.Context) error {
	for _, n := range p.c.ProcessNames() {
		if !p.c.Running(n) {
			return fmt.Errorf("%s is not running", n)
		}
	}
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr = "root", "tcp", p.SQLAddr()
	cfg.Timeout, cfg.ReadTimeout = 2*time.Second, 5*time.Second
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	var last error
	for {
		db, err := sql.Open("mysql", cfg.FormatDSN())
		if err != nil {
			return err
		}
		qctx, qcancel := context.WithTimeout(ctx, 5*time.Second)
		var one int
		last = db.QueryRowContext(qctx, "SELECT 1").Scan(&one)
		qcancel()
		db.Close()
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%v (last: %v)", ctx.Err(), last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// runningStores maps each running store's name to its status address.
func (p *Playground) runningStores() map[string]string {
	out := map[string]string{}
	for _, n := range p.c.NamesOf(playground.RoleStore) {
		if p.c.Running(n) {
			out[n] = p.c.StatusAddr(n)
		}
	}
	return out
}

// TransferLeader forces a random region's leader transfer
// (nemesis.RegionAdmin).
func (p *Playground) TransferLeader(ctx context.Context, rng *rand.Rand) (string, error) {
	return p.regions.TransferLeader(ctx, rng)
}

// Split forces a random region's split (nemesis.RegionAdmin).
func (p *Playground) Split(ctx context.Context, rng *rand.Rand) (string, error) {
	return p.regions.Split(ctx, rng)
}

func (p *Playground) Close() error {
	if p.tso != nil {
		p.tso.Stop()
	}
	if p.regions != nil {
		p.regions.close()
	}
	if p.c == nil {
		return nil
	}
	return p.c.Stop()
}

// StartMonitors starts the TSO monitor, its history in
// dir/tso-monotonic.jsonl (Monitors).
func (p *Playground) StartMonitors(ctx context.Context, dir string, start time.Time) error {
	m, err := StartTSOMonitor(ctx, strings.Split(p.c.PDAddrs(), ","), filepath.Join(dir, tso.Workload+".jsonl"), start)
	if err != nil {
		return err
	}
	p.tso = m
	return nil
}

// Recorders returns the TSO monitor's history (Monitors).
func (p *Playground) Recorders() []*history.Recorder {
	if p.tso == nil {
		return nil
	}
	return []*history.Recorder{p.tso.Recorder()}
}

// StopMonitors stops the TSO monitor and returns its result (Monitors).
func (p *Playground) StopMonitors() ([]*checker.Result, error) {
	if p.tso == nil {
		return nil, nil
	}
	res, err := p.tso.Stop()
	if err != nil {
		return nil, err
	}
	return []*checker.Result{res}, nil
}

// pgNode is one process of the playground as a nemesis target.
type pgNode struct {
	c    *playground.Cluster
	name string
}

func (n *pgNode) Name() string                      { return n.name }
func (n *pgNode) Kill() error                       { return n.c.Kill(n.name) }
func (n *pgNode) Restart(ctx context.Context) error { return n.c.Restart(ctx, n.name) }
func (n *pgNode) Pause() error                      { return n.c.Pause(n.name) }
func (n *pgNode) Resume() error                     { return n.c.Resume(n.name) }
func (n *pgNode) Isolate() error                    { return n.c.Isolate(n.name) }
func (n *pgNode) Heal() error                       { return n.c.Heal(n.name) }

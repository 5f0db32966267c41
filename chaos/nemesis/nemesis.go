// Package nemesis injects faults into a target's processes: kill -9 with a
// restart, SIGSTOP/SIGCONT pauses, and on a cluster target a network
// partition of one process (both directions) and streams of forced region
// leader transfers and splits. A nemesis has a start (inject) and a stop
// (heal); the runner records both as info events in every history.
//
// Invariants: Stop undoes exactly what Start did (the process Start killed
// is restarted, the one it paused is resumed, the one it isolated is
// healed; transfers and splits are not undone, they stop being made);
// Stop on a nemesis that is not active is a no-op; every wait is bounded
// by the context.
package nemesis

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"sync"
)

// Node is one process of a target that faults can be injected into.
type Node interface {
	Name() string
	Kill() error                       // SIGKILL, wait until gone
	Restart(ctx context.Context) error // start again, wait until it serves
	Pause() error                      // SIGSTOP
	Resume() error                     // SIGCONT
}

// Nemesis injects one kind of fault.
type Nemesis interface {
	Name() string
	Start(ctx context.Context, rng *rand.Rand) (string, error)
	Stop(ctx context.Context) (string, error)
}

// New returns the named nemesis over nodes; regions is the target's
// region admin (nil on a target without regions).
func New(name string, nodes []Node, regions RegionAdmin) (Nemesis, error) {
	switch name {
	case "kill":
		return &Kill{Nodes: nodes}, nil
	case "pause":
		return &Pause{Nodes: nodes}, nil
	case "partition":
		var ps []Partitionable
		for _, n := range nodes {
			if p, ok := n.(Partitionable); ok {
				ps = append(ps, p)
			}
		}
		if len(ps) == 0 {
			return nil, fmt.Errorf("nemesis partition: %w", ErrNeedsCluster)
		}
		return &Partition{Nodes: ps}, nil
	case "transfer", "split":
		if regions == nil {
			return nil, fmt.Errorf("nemesis %s: %w", name, ErrNeedsCluster)
		}
		if name == "transfer" {
			return NewTransferLeader(regions), nil
		}
		return NewSplit(regions), nil
	}
	return nil, fmt.Errorf("unknown nemesis %q (%s)", name, strings.Join(Names(), ", "))
}

// Names lists the nemeses.
func Names() []string { return []string{"kill", "pause", "partition", "transfer", "split"} }

// Kill SIGKILLs a random node; Stop restarts it.
type Kill struct {
	Nodes  []Node
	mu     sync.Mutex
	killed Node
}

func (k *Kill) Name() string { return "kill" }

func (k *Kill) Start(ctx context.Context, rng *rand.Rand) (string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.killed != nil || len(k.Nodes) == 0 {
		return "", nil
	}
	n := k.Nodes[rng.Intn(len(k.Nodes))]
	if err := n.Kill(); err != nil {
		return "", err
	}
	k.killed = n
	return "killed " + n.Name(), nil
}

func (k *Kill) Stop(ctx context.Context) (string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.killed == nil {
		return "", nil
	}
	n := k.killed
	if err := n.Restart(ctx); err != nil {
		return "", fmt.Errorf("restart %s: %w", n.Name(), err)
	}
	k.killed = nil
	return "restarted " + n.Name(), nil
}

// Pause SIGSTOPs a random node; Stop SIGCONTs it.
type Pause struct {
	Nodes  []Node
	mu     sync.Mutex
	paused Node
}

func (p *Pause) Name() string { return "pause" }

func (p *Pause) Start(ctx context.Context, rng *rand.Rand) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.paused != nil || len(p.Nodes) == 0 {
		return "", nil
	}
	n := p.Nodes[rng.Intn(len(p.Nodes))]
	if err := n.Pause(); err != nil {
		return "", err
	}
	p.paused = n
	return "paused " + n.Name(), nil
}

func (p *Pause) Stop(ctx context.Context) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.paused == nil {
		return "", nil
	}
	n := p.paused
	if err := n.Resume(); err != nil {
		return "", err
	}
	p.paused = nil
	return "resumed " + n.Name(), nil
}

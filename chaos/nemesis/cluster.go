package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"sync"
	"time"
)

// Partitionable is a Node that can be cut off the network from the other
// nodes of its target (both directions) and healed.
type Partitionable interface {
	Node
	Isolate() error
	Heal() error
}

// RegionAdmin forces region changes on a cluster target: hand a random
// region's leadership to another of its voters, or split a random region
// at a key inside it. Each call makes one attempt and describes what it
// did; an error means nothing was changed (e.g. the leader moved
// meanwhile), which the nemeses count but do not treat as fatal.
type RegionAdmin interface {
	TransferLeader(ctx context.Context, rng *rand.Rand) (string, error)
	Split(ctx context.Context, rng *rand.Rand) (string, error)
}

// ErrNeedsCluster is returned by New for a nemesis the target cannot
// support (a partition or region change on the embedded server).
var ErrNeedsCluster = errors.New("needs a cluster target (--target playground)")

// Partition isolates a random node from the others (both directions)
// while active; Stop heals it.
type Partition struct {
	Nodes  []Partitionable
	mu     sync.Mutex
	active Partitionable
}

func (p *Partition) Name() string { return "partition" }

func (p *Partition) Start(ctx context.Context, rng *rand.Rand) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.active != nil || len(p.Nodes) == 0 {
		return "", nil
	}
	n := p.Nodes[rng.Intn(len(p.Nodes))]
	if err := n.Isolate(); err != nil {
		return "", err
	}
	p.active = n
	return "isolated " + n.Name(), nil
}

func (p *Partition) Stop(ctx context.Context) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.active == nil {
		return "", nil
	}
	n := p.active
	if err := n.Heal(); err != nil {
		return "", err
	}
	p.active = nil
	return "healed " + n.Name(), nil
}

// regionOps runs one kind of region change over and over (every 300-700
// ms) from Start until Stop: forced changes while the load runs, many per
// fault period rather than one.
type regionOps struct {
	name string
	op   func(ctx context.Context, rng *rand.Rand) (string, error)

	mu       sync.Mutex
	cancel   context.CancelFunc
	done     chan struct{}
	ok, fail int
	last     string // the last change made
	lastErr  string
}

func (r *regionOps) Name() string { return r.name }

func (r *regionOps) Start(ctx context.Context, rng *rand.Rand) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cancel != nil {
		return "", nil
	}
	// The loop gets its own generator, seeded from the schedule's, so the
	// schedule does not depend on how many changes fit in a period.
	lrng := rand.New(rand.NewSource(rng.Int63()))
	lctx, cancel := context.WithCancel(context.Background())
	r.cancel, r.done, r.ok, r.fail, r.last, r.lastErr = cancel, make(chan struct{}), 0, 0, "", ""
	go func() {
		defer close(r.done)
		for lctx.Err() == nil {
			octx, ocancel := context.WithTimeout(lctx, 15*time.Second)
			d, err := r.op(octx, lrng)
			ocancel()
			r.mu.Lock()
			if err != nil {
				r.fail++
				r.lastErr = err.Error()
			} else {
				r.ok++
				r.last = d
			}
			r.mu.Unlock()
			select {
			case <-lctx.Done():
			case <-time.After(time.Duration(300+lrng.Intn(400)) * time.Millisecond):
			}
		}
	}()
	return "started " + r.name + "s", nil
}

func (r *regionOps) Stop(ctx context.Context) (string, error) {
	r.mu.Lock()
	cancel, done := r.cancel, r.done
	r.mu.Unlock()
	if cancel == nil {
		return "", nil
	}
	cancel()
	select {
	case <-done:
	case <-ctx.Done():
		return "", fmt.Errorf("%s: the last change did not end: %w", r.name, ctx.Err())
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cancel = nil
	d := fmt.Sprintf("stopped %ss: %d done, %d refused", r.name, r.ok, r.fail)
	if r.last != "" {
		d += "; last: " + r.last
	}
	if r.lastErr != "" {
		d += "; last refusal: " + r.lastErr
	}
	return d, nil
}

// NewTransferLeader forces leader transfers of random regions while
// active.
func NewTransferLeader(a RegionAdmin) Nemesis {
	return &regionOps{name: "transfer", op: a.TransferLeader}
}

// NewSplit forces splits of random regions while active.
func NewSplit(a RegionAdmin) Nemesis { return &regionOps{name: "split", op: a.Split} }

package catalog

import (
	"sync"
	"sync/atomic"
)

// commitGate counts the commits in flight per schema generation, so a node
// can tell when every commit checked against an older schema has finished
// (what its schema-version record promises) without ever making a new
// commit wait: a new schema starts a new generation, later commits count
// in it, and the older generations only drain.
type commitGate struct {
	cur     atomic.Pointer[commitGen]
	mu      sync.Mutex   // guards retired and the swaps of cur (publish)
	retired []*commitGen // older generations that may still have commits, oldest first
}

// commitGen is the commits checked against the schema of one version.
type commitGen struct {
	version int64
	n       atomic.Int64
}

// enter counts a commit in the current generation and returns it; the
// caller reads the schema after enter (so a commit counted in a retired
// generation may see the new schema, never the reverse) and calls leave
// when its commit finished.
func (g *commitGate) enter() *commitGen {
	for {
		gen := g.cur.Load()
		gen.n.Add(1)
		if g.cur.Load() == gen {
			return gen
		}
		gen.n.Add(-1) // retired meanwhile: count in the new one
	}
}

func (gen *commitGen) leave() { gen.n.Add(-1) }

// drained returns the newest version v such that no commit checked
// against a schema older than v is in flight.
func (g *commitGate) drained() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.prune()
	if len(g.retired) > 0 {
		return g.retired[0].version
	}
	return g.cur.Load().version
}

// prune forgets the retired generations with no commit left (under mu).
func (g *commitGate) prune() {
	kept := g.retired[:0]
	for _, r := range g.retired {
		if r.n.Load() > 0 {
			kept = append(kept, r)
		}
	}
	clear(g.retired[len(kept):])
	g.retired = kept
}

package catalog

import (
	"context"
	"fmt"
	"sync"
)

// refreshGroup coalesces the schema checks of concurrent commits. A commit
// needs a check that began after it asked (so it sees every DDL that
// committed before); one check serves every commit that asked before it
// began. A commit arriving while a check runs waits for the next one,
// which starts as soon as the running one ends and serves all who queued
// meanwhile: under load, one check per round trip instead of one per
// commit.
type refreshGroup struct {
	mu      sync.Mutex
	running bool
	next    *refreshRound // queued: starts when the running round ends
}

type refreshRound struct {
	done chan struct{}
	err  error
}

// do waits for a run of check that began after the call and returns its
// error. ctx bounds the wait; check bounds itself.
func (g *refreshGroup) do(ctx context.Context, check func() error) error {
	g.mu.Lock()
	if g.next == nil {
		g.next = &refreshRound{done: make(chan struct{})}
	}
	r := g.next
	if !g.running {
		g.running = true
		go g.loop(check)
	}
	g.mu.Unlock()
	select {
	case <-r.done:
		return r.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// loop runs the queued rounds one after another until none is queued.
func (g *refreshGroup) loop(check func() error) {
	for {
		g.mu.Lock()
		r := g.next
		g.next = nil
		if r == nil {
			g.running = false
			g.mu.Unlock()
			return
		}
		g.mu.Unlock()
		r.err = runRecovered(check)
		close(r.done)
	}
}

// runRecovered runs check, turning a panic into its error: this goroutine
// works for statements, and a panic here must fail them, not end the
// process.
func runRecovered(check func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("schema refresh panicked: %v", p)
		}
	}()
	return check()
}

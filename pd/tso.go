package pd

import (
	"fmt"
	"sync"
	"time"
)

// State is what an allocator persists: upper limits that nothing handed out
// reaches.
type State struct {
	// TSOLimit is a physical time (ms); every timestamp handed out has a
	// smaller physical part.
	TSOLimit int64
	// IDLimit: every ID handed out is smaller.
	IDLimit uint64
}

// Persister durably saves a State (it must be on stable storage when Save
// returns).
type Persister interface {
	Save(State) error
}

// Allocator is the pure TSO and ID allocator. It is safe for concurrent use.
type Allocator struct {
	mu       sync.Mutex
	now      func() time.Time
	persist  Persister
	window   time.Duration
	idWindow uint64

	physical int64 // ms
	logical  int64
	state    State
	nextID   uint64
}

// AllocatorOptions configure NewAllocator.
type AllocatorOptions struct {
	// Now is the clock (time.Now if nil).
	Now func() time.Time
	// Window is how far ahead of the clock the persisted limit is (3s if 0).
	Window time.Duration
	// IDWindow is how many IDs are reserved per persist (1000 if 0).
	IDWindow uint64
}

// NewAllocator returns an allocator that resumes from a persisted state
// (the zero State for a fresh one).
func NewAllocator(prev State, p Persister, o AllocatorOptions) *Allocator {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Window <= 0 {
		o.Window = 3 * time.Second
	}
	if o.IDWindow == 0 {
		o.IDWindow = 1000
	}
	a := &Allocator{now: o.Now, persist: p, window: o.Window, idWindow: o.IDWindow, state: prev}
	// Everything handed out before had physical < prev.TSOLimit, so starting
	// at the limit itself is strictly above it.
	a.physical = prev.TSOLimit
	a.logical = -1
	a.nextID = prev.IDLimit
	if a.nextID == 0 {
		a.nextID = 1
	}
	return a
}

// GetTS returns a fresh timestamp.
func (a *Allocator) GetTS() (uint64, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	p, l := a.physical, a.logical
	if now := a.now().UnixMilli(); now > p {
		p, l = now, 0
	} else {
		l++
		if l > logicalMask {
			// Logical overflow: borrow from the future.
			p, l = p+1, 0
		}
	}
	if p >= a.state.TSOLimit {
		next := a.state
		next.TSOLimit = p + a.window.Milliseconds()
		if err := a.persist.Save(next); err != nil {
			// Never hand out a timestamp above the persisted limit.
			return 0, fmt.Errorf("pd: persist tso window: %w", err)
		}
		a.state = next
	}
	a.physical, a.logical = p, l
	return ComposeTS(a.physical, a.logical), nil
}

// AllocID returns a fresh ID.
func (a *Allocator) AllocID() (uint64, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.nextID >= a.state.IDLimit {
		next := a.state
		next.IDLimit = a.nextID + a.idWindow
		if err := a.persist.Save(next); err != nil {
			return 0, fmt.Errorf("pd: persist id window: %w", err)
		}
		a.state = next
	}
	id := a.nextID
	a.nextID++
	return id, nil
}

// Persisted returns the last persisted state.
func (a *Allocator) Persisted() State {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.state
}

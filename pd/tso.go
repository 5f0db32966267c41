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
// returns). The allocator never calls Save concurrently with itself, and
// the states it saves never decrease.
type Persister interface {
	Save(State) error
}

// Allocator is the pure TSO and ID allocator. It is safe for concurrent use.
//
// Persistence happens off the hot path: when the time window is two thirds
// used (or the ID window is), the allocator starts saving the next window
// in a background goroutine and keeps handing out values below the limit
// that is already durable. A caller waits for the disk only when the
// durable limit is truly reached (the clock ran past it, or the logical
// counter or the IDs were exhausted faster than the save completed).
//
// Invariants (a.mu guards all fields below it):
//   - state is the last durably saved State: it is raised only after Save
//     of a state at least as large returned nil, and every timestamp and ID
//     handed out is below it at the moment it is handed out. A restart
//     starts at the saved limits, so it never goes backwards.
//   - At most one Save is in flight (saving); every saved State is >= state
//     in both fields, so the file only ever grows.
type Allocator struct {
	now      func() time.Time
	persist  Persister
	window   time.Duration
	idWindow uint64

	mu       sync.Mutex
	cond     *sync.Cond // signalled when a save completes
	physical int64      // ms
	logical  int64
	state    State
	nextID   uint64
	saving   bool   // a Save is in flight
	saveGen  uint64 // completed saves
	saveErr  error  // error of the last completed save
	closed   bool
	wg       sync.WaitGroup
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
	a.cond = sync.NewCond(&a.mu)
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
	for {
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
		if p < a.state.TSOLimit {
			a.physical, a.logical = p, l
			a.maybeExtendLocked()
			return ComposeTS(p, l), nil
		}
		// The durable window is exhausted: wait for the disk.
		need := a.state
		need.TSOLimit = p + a.window.Milliseconds()
		if err := a.awaitSaveLocked(need); err != nil {
			// Never hand out a timestamp above the persisted limit.
			return 0, fmt.Errorf("pd: persist tso window: %w", err)
		}
	}
}

// AllocID returns a fresh ID.
func (a *Allocator) AllocID() (uint64, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for a.nextID >= a.state.IDLimit {
		need := a.state
		need.IDLimit = a.nextID + a.idWindow
		if err := a.awaitSaveLocked(need); err != nil {
			return 0, fmt.Errorf("pd: persist id window: %w", err)
		}
	}
	id := a.nextID
	a.nextID++
	a.maybeExtendLocked()
	return id, nil
}

// maybeExtendLocked starts a background save of the next windows when a
// window is two thirds used and no save is in flight.
func (a *Allocator) maybeExtendLocked() {
	if a.saving || a.closed {
		return
	}
	target, extend := a.state, false
	w := a.window.Milliseconds()
	if a.physical >= a.state.TSOLimit-w/3 {
		target.TSOLimit = max(a.physical, a.now().UnixMilli()) + w
		extend = true
	}
	if a.nextID+a.idWindow/3 >= a.state.IDLimit {
		target.IDLimit = a.nextID + a.idWindow
		extend = true
	}
	if extend {
		a.startSaveLocked(target)
	}
}

// startSaveLocked saves target (raised to at least state) in the
// background.
func (a *Allocator) startSaveLocked(target State) {
	target.TSOLimit = max(target.TSOLimit, a.state.TSOLimit)
	target.IDLimit = max(target.IDLimit, a.state.IDLimit)
	a.saving = true
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		err := a.persist.Save(target)
		a.mu.Lock()
		if err == nil {
			a.state.TSOLimit = max(a.state.TSOLimit, target.TSOLimit)
			a.state.IDLimit = max(a.state.IDLimit, target.IDLimit)
		}
		a.saveErr = err
		a.saving = false
		a.saveGen++
		a.cond.Broadcast()
		a.mu.Unlock()
	}()
}

// awaitSaveLocked waits for one save to complete: the one in flight (its
// target may not cover need, the caller re-checks) or else a new one of
// need. It returns the error of a save it started itself.
func (a *Allocator) awaitSaveLocked(need State) error {
	gen := a.saveGen
	if !a.saving {
		if a.closed {
			return ErrClosed
		}
		a.startSaveLocked(need)
		for a.saveGen == gen {
			a.cond.Wait()
		}
		return a.saveErr
	}
	for a.saveGen == gen {
		a.cond.Wait()
	}
	return nil
}

// Persisted returns the last persisted state.
func (a *Allocator) Persisted() State {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.state
}

// Close stops background saves and waits for the one in flight. Values
// below the durable limit can still be handed out; none above it.
func (a *Allocator) Close() {
	a.mu.Lock()
	a.closed = true
	a.mu.Unlock()
	a.wg.Wait()
}

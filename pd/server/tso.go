package server

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/shoaldb/shoal/pd"
)

// maxLogical is the largest logical part of a timestamp.
const maxLogical = 1<<pd.PhysicalShift - 1

// errAllocatorClosed: the leadership that owned the allocator ended.
var errAllocatorClosed = errors.New("pd: allocator closed (leadership ended)")

// tsoAllocator hands out timestamps for one term of leadership. It differs
// from pd.Allocator in two ways that the Tso RPC needs: a request takes
// count consecutive timestamps at once (same physical part), and saving
// the window is a leader-guarded etcd transaction.
//
// Invariants (mu guards everything below it):
//   - limit is durable: a save of at least limit returned nil, and every
//     timestamp handed out has physical < limit. A new leader starts at
//     the limit it loads, so it never goes backwards.
//   - (physical, logical) is the last timestamp handed out; the next one
//     is strictly greater even if the wall clock steps back.
//   - At most one save is in flight (saveDone != nil while it runs).
type tsoAllocator struct {
	now    func() time.Time
	window time.Duration
	save   func(ctx context.Context, limit int64) error

	mu       sync.Mutex
	physical int64
	logical  int64
	limit    int64
	saveDone chan struct{} // closed when the save in flight completes
	saveErr  error         // error of the last completed save
	closed   bool
	wg       sync.WaitGroup
}

// newTSOAllocator resumes above a loaded limit: everything handed out by
// earlier leaders has a physical part below it.
func newTSOAllocator(loadedLimit int64, window time.Duration, now func() time.Time, save func(context.Context, int64) error) *tsoAllocator {
	return &tsoAllocator{
		now:      now,
		window:   window,
		save:     save,
		physical: loadedLimit,
		logical:  -1,
		limit:    loadedLimit,
	}
}

// generate returns the last of count consecutive timestamps as its
// physical and logical parts.
func (t *tsoAllocator) generate(ctx context.Context, count uint32) (int64, int64, error) {
	if count == 0 || count > maxLogical+1 {
		return 0, 0, fmt.Errorf("pd: tso count %d out of range", count)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for {
		if t.closed {
			return 0, 0, errAllocatorClosed
		}
		p, l := t.physical, t.logical
		if now := t.now().UnixMilli(); now > p {
			p, l = now, -1
		}
		if l+int64(count) > maxLogical {
			// The logical space of this millisecond is used up: borrow the
			// next one (the clock catches up, the window covers it).
			p, l = p+1, -1
		}
		if p < t.limit {
			t.physical, t.logical = p, l+int64(count)
			if p >= t.limit-t.window.Milliseconds()/3 && t.saveDone == nil {
				t.startSaveLocked(max(p, t.now().UnixMilli()) + t.window.Milliseconds())
			}
			return t.physical, t.logical, nil
		}
		// The durable window is exhausted: wait for a save that covers p.
		if err := t.awaitSaveLocked(ctx, p+t.window.Milliseconds()); err != nil {
			return 0, 0, fmt.Errorf("pd: persist tso window: %w", err)
		}
	}
}

// startSaveLocked saves target in the background and raises limit when it
// is durable.
func (t *tsoAllocator) startSaveLocked(target int64) {
	target = max(target, t.limit)
	done := make(chan struct{})
	t.saveDone = done
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := t.save(ctx, target)
		cancel()
		t.mu.Lock()
		if err == nil {
			t.limit = max(t.limit, target)
		}
		t.saveErr = err
		t.saveDone = nil
		close(done)
		t.mu.Unlock()
	}()
}

// awaitSaveLocked waits for the save in flight, or starts one of target and
// waits for it; it returns the error of the save it waited for. The lock is
// released while waiting.
func (t *tsoAllocator) awaitSaveLocked(ctx context.Context, target int64) error {
	if t.saveDone == nil {
		t.startSaveLocked(target)
	}
	done := t.saveDone
	t.mu.Unlock()
	select {
	case <-done:
	case <-ctx.Done():
		t.mu.Lock()
		return ctx.Err()
	}
	t.mu.Lock()
	return t.saveErr
}

// prepare makes the first window durable before the leader serves.
func (t *tsoAllocator) prepare(ctx context.Context) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	target := max(t.physical, t.now().UnixMilli()) + t.window.Milliseconds()
	for t.limit < target {
		if err := t.awaitSaveLocked(ctx, target); err != nil {
			return err
		}
	}
	return nil
}

// close stops handing out timestamps and waits for the save in flight.
func (t *tsoAllocator) close() {
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
	t.wg.Wait()
}

// idAllocator hands out unique IDs, reserving them in etcd in batches:
// every ID handed out is below the durable limit, and a new leader starts
// at the limit it loads.
type idAllocator struct {
	batch uint64
	save  func(ctx context.Context, limit uint64) error

	mu    sync.Mutex
	next  uint64
	limit uint64
}

func newIDAllocator(loadedLimit, batch uint64, save func(context.Context, uint64) error) *idAllocator {
	next := max(loadedLimit, 1) // 0 is never a valid ID
	return &idAllocator{batch: batch, save: save, next: next, limit: loadedLimit}
}

// alloc returns the first of n consecutive fresh IDs.
func (a *idAllocator) alloc(ctx context.Context, n uint64) (uint64, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.next+n > a.limit {
		// Saved under the lock: IDs are cheap to reserve in bulk and a
		// save every batch IDs is rare.
		target := a.next + n + a.batch
		if err := a.save(ctx, target); err != nil {
			return 0, fmt.Errorf("pd: persist id window: %w", err)
		}
		a.limit = target
	}
	first := a.next
	a.next += n
	return first, nil
}

package mvcc

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/shoaldb/shoal/store/kvrpc"
	"github.com/shoaldb/shoal/store/pebbleengine"
)

// fakeClock is a settable clock for TTL tests.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestWaitForGraphCycle(t *testing.T) {
	g := NewWaitForGraph(0, nil)
	// Edges as different stores would send them: 1 -> 2 -> 3, then 3 -> 1
	// closes the cycle and is not recorded.
	if c := g.Detect(1, 2, 100); c != nil {
		t.Fatalf("1->2: %v", c)
	}
	if c := g.Detect(2, 3, 200); c != nil {
		t.Fatalf("2->3: %v", c)
	}
	c := g.Detect(3, 1, 300)
	if !slices.Equal(c, []uint64{1, 2, 3}) {
		t.Fatalf("3->1: cycle %v, want [1 2 3] (holder first, waiter last)", c)
	}
	if g.Len() != 2 {
		t.Fatalf("edges %d, want 2 (the closing edge is not recorded)", g.Len())
	}
	// A wait that closes nothing is fine, and detecting a recorded edge
	// again only refreshes it.
	if c := g.Detect(3, 4, 300); c != nil {
		t.Fatalf("3->4: %v", c)
	}
	if c := g.Detect(3, 4, 300); c != nil || g.Len() != 3 {
		t.Fatalf("3->4 again: %v, %d edges", c, g.Len())
	}
	// A self-wait is a cycle of one.
	if c := g.Detect(5, 5, 1); !slices.Equal(c, []uint64{5}) {
		t.Fatalf("5->5: %v", c)
	}
}

func TestWaitForGraphCleanUp(t *testing.T) {
	g := NewWaitForGraph(0, nil)
	g.Detect(1, 2, 10)
	g.Detect(1, 2, 11) // the same pair on another key
	g.Detect(2, 3, 20)
	// One wait of 1 for 2 ends: the other keeps the pair connected.
	g.CleanUpWaitFor(1, 2, 10)
	if c := g.Detect(3, 1, 30); c == nil {
		t.Fatal("3->1 after one of two waits of 1 for 2 ended: want a cycle")
	}
	g.CleanUpWaitFor(1, 2, 11)
	g.CleanUpWaitFor(1, 2, 11) // twice is harmless
	if c := g.Detect(3, 1, 30); c != nil {
		t.Fatalf("3->1 after 1 stopped waiting: %v", c)
	}
	// Transaction 2 finished: its edges go, others stay.
	g.CleanUp(2)
	if g.Len() != 1 {
		t.Fatalf("edges %d after CleanUp(2), want 1 (3->1)", g.Len())
	}
	if c := g.Detect(1, 3, 40); !slices.Equal(c, []uint64{3, 1}) {
		t.Fatalf("1->3: %v", c)
	}
	g.Clear()
	if g.Len() != 0 {
		t.Fatalf("edges %d after Clear", g.Len())
	}
	if c := g.Detect(1, 3, 40); c != nil {
		t.Fatalf("1->3 after Clear: %v", c)
	}
}

func TestWaitForGraphTTL(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1000, 0)}
	g := NewWaitForGraph(5*time.Second, clock.now)
	g.Detect(1, 2, 10)
	clock.advance(3 * time.Second)
	g.Detect(2, 3, 20)
	clock.advance(3 * time.Second) // 1->2 is 6s old: expired; 2->3 is 3s old
	if c := g.Detect(3, 1, 30); c != nil {
		t.Fatalf("cycle through an expired edge: %v", c)
	}
	g.CleanUpWaitFor(3, 1, 30)
	// A refreshed edge lives on.
	g.Detect(1, 2, 10)
	clock.advance(4 * time.Second)
	g.Detect(1, 2, 10) // refresh
	g.Detect(2, 3, 20)
	clock.advance(4 * time.Second)
	if c := g.Detect(3, 1, 30); !slices.Equal(c, []uint64{1, 2, 3}) {
		t.Fatalf("refreshed edges: cycle %v, want [1 2 3]", c)
	}
	// Expired edges are purged, so the graph does not grow forever.
	clock.advance(time.Minute)
	g.Detect(7, 8, 70)
	if g.Len() != 1 {
		t.Fatalf("edges %d after a purge, want 1", g.Len())
	}
}

// countingDetector wraps a WaitForGraph, counts calls and can be told to
// answer a cycle once a wait has been detected a number of times.
type countingDetector struct {
	*WaitForGraph
	mu                  sync.Mutex
	detects             int
	cleanedTxns         []uint64
	cycleAtDetect       int // answer a cycle on this Detect call (0: never)
	cleanUpWaitForCalls int
}

func (d *countingDetector) Detect(w, h, kh uint64) []uint64 {
	d.mu.Lock()
	d.detects++
	n := d.detects
	d.mu.Unlock()
	if d.cycleAtDetect != 0 && n == d.cycleAtDetect {
		return []uint64{h, w}
	}
	return d.WaitForGraph.Detect(w, h, kh)
}

func (d *countingDetector) CleanUpWaitFor(w, h, kh uint64) {
	d.mu.Lock()
	d.cleanUpWaitForCalls++
	d.mu.Unlock()
	d.WaitForGraph.CleanUpWaitFor(w, h, kh)
}

func (d *countingDetector) CleanUp(txn uint64) {
	d.mu.Lock()
	d.cleanedTxns = append(d.cleanedTxns, txn)
	d.mu.Unlock()
	d.WaitForGraph.CleanUp(txn)
}

func newStoreWithDetector(t *testing.T, d DeadlockDetector, refresh time.Duration) *Store {
	t.Helper()
	e, err := pebbleengine.Open(t.TempDir(), pebbleengine.Options{Split: SplitKey, SplitName: SplitName, BlockCacheSize: 8 << 20, MemTableSize: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return New(e, Options{NoSync: true, DeadlockDetector: d, WaitForRefresh: refresh})
}

// A waiting request refreshes its edge, fails at once when a refresh
// finds a cycle (one closed behind its back, e.g. at a detector that
// started empty), and cleans its edge up when its wait ends.
func TestWaitRefreshFindsLateCycle(t *testing.T) {
	d := &countingDetector{WaitForGraph: NewWaitForGraph(0, nil), cycleAtDetect: 3}
	s := newStoreWithDetector(t, d, 20*time.Millisecond)
	a, b := tsNow(1), tsNow(2)
	must(t, plock(s, "x", a, a, 0))
	begin := time.Now()
	err := plock(s, "x", b, b, 10*time.Second)
	var de *kvrpc.DeadlockError
	if !errors.As(err, &de) || de.LockTS != a || !slices.Equal(de.WaitChain, []uint64{a, b}) {
		t.Fatalf("want a deadlock found by a refresh: %v", err)
	}
	if time.Since(begin) > 5*time.Second {
		t.Fatalf("deadlock took %v", time.Since(begin))
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cleanUpWaitForCalls != 1 || d.Len() != 0 {
		t.Fatalf("after the wait: %d CleanUpWaitFor calls, %d edges left", d.cleanUpWaitForCalls, d.Len())
	}
}

// Releasing a transaction's locks tells the detector it waits no more.
func TestReleaseCleansUpTxn(t *testing.T) {
	d := &countingDetector{WaitForGraph: NewWaitForGraph(0, nil)}
	s := newStoreWithDetector(t, d, 0)
	a := tsNow(1)
	must(t, plock(s, "x", a, a, 0))
	_, err := s.PessimisticRollback(ctx, kvrpc.PessimisticRollbackRequest{Keys: [][]byte{[]byte("x")}, StartTS: a})
	must(t, err)
	b := tsNow(2)
	must(t, prewrite(t, s, "y", b, put("y", "1")))
	must(t, commit(t, s, b, b+1, "y"))
	d.mu.Lock()
	defer d.mu.Unlock()
	if !slices.Equal(d.cleanedTxns, []uint64{a, b}) {
		t.Fatalf("CleanUp calls %v, want [%d %d]", d.cleanedTxns, a, b)
	}
}

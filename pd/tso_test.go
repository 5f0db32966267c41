package pd

import (
	"context"
	"sync"
	"testing"
	"time"
)

// memPersister is a fake durable store. Saves run in the allocator's
// background goroutine, so everything is behind mu.
type memPersister struct {
	mu    sync.Mutex
	saved State
	saves int
}

func (m *memPersister) Save(s State) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.saved = s
	m.saves++
	return nil
}

func (m *memPersister) get() (State, int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.saved, m.saves
}

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func TestTSOMonotonicClockBackwards(t *testing.T) {
	clk := &fakeClock{t: time.UnixMilli(1_000_000)}
	p := &memPersister{}
	a := NewAllocator(State{}, p, AllocatorOptions{Now: clk.now})
	var last uint64
	for i := 0; i < 1000; i++ {
		if i%100 == 50 {
			clk.t = clk.t.Add(-time.Second) // clock jumps back
		} else if i%7 == 0 {
			clk.t = clk.t.Add(time.Millisecond)
		}
		ts, err := a.GetTS()
		if err != nil {
			t.Fatal(err)
		}
		if ts <= last {
			t.Fatalf("ts went backwards: %d after %d", ts, last)
		}
		if saved, _ := p.get(); ExtractPhysical(ts) >= saved.TSOLimit {
			t.Fatalf("handed out ts above the persisted limit")
		}
		last = ts
	}
	if _, saves := p.get(); saves > 2 {
		t.Fatalf("persisted %d times, want few", saves)
	}
}

func TestTSOLogicalOverflow(t *testing.T) {
	clk := &fakeClock{t: time.UnixMilli(5000)}
	a := NewAllocator(State{}, &memPersister{}, AllocatorOptions{Now: clk.now})
	var last uint64
	for i := 0; i < 1<<PhysicalShift+10; i++ {
		ts, _ := a.GetTS()
		if ts <= last {
			t.Fatal("not monotonic")
		}
		last = ts
	}
	if ExtractPhysical(last) != 5001 {
		t.Fatalf("physical = %d", ExtractPhysical(last))
	}
}

func TestTSOAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	clk := &fakeClock{t: time.UnixMilli(10_000_000)}
	l, err := OpenLocal(dir, AllocatorOptions{Now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var last uint64
	for i := 0; i < 100; i++ {
		last, _ = l.GetTS(ctx)
	}
	id1, _ := l.AllocID(ctx)
	l.Close()
	// "Crash" and restart with a clock that went back an hour.
	clk.t = clk.t.Add(-time.Hour)
	l2, err := OpenLocal(dir, AllocatorOptions{Now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	// Close waits for a background window save, which would otherwise race
	// the removal of the temporary directory.
	defer l2.Close()
	ts, _ := l2.GetTS(ctx)
	if ts <= last {
		t.Fatalf("after restart ts %d <= %d", ts, last)
	}
	id2, _ := l2.AllocID(ctx)
	if id2 <= id1 {
		t.Fatalf("after restart id %d <= %d", id2, id1)
	}
}

func TestTSOConcurrent(t *testing.T) {
	l, err := OpenLocal(t.TempDir(), AllocatorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var mu sync.Mutex
	seen := map[uint64]bool{}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var last uint64
			for i := 0; i < 2000; i++ {
				ts, err := l.GetTS(context.Background())
				if err != nil || ts <= last {
					t.Error("bad ts", err)
					return
				}
				last = ts
				mu.Lock()
				if seen[ts] {
					t.Error("duplicate ts")
				}
				seen[ts] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
}

package pd

import (
	"errors"
	"math/rand"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// atomicClock is a fake clock safe for concurrent use.
type atomicClock struct{ ms atomic.Int64 }

func (c *atomicClock) now() time.Time { return time.UnixMilli(c.ms.Load()) }

// gatePersister blocks every Save until release is signalled (once per
// Save) when gated.
type gatePersister struct {
	memPersister
	gated   atomic.Bool
	entered chan struct{}
	release chan struct{}
}

func newGatePersister() *gatePersister {
	return &gatePersister{entered: make(chan struct{}, 16), release: make(chan struct{}, 16)}
}

func (g *gatePersister) Save(s State) error {
	if g.gated.Load() {
		g.entered <- struct{}{}
		<-g.release
	}
	return g.memPersister.Save(s)
}

// A slow disk must not stall GetTS while the durable window still has
// room; only a truly exhausted window waits, and then for the save.
func TestTSOPersistAheadDoesNotStall(t *testing.T) {
	clk := &atomicClock{}
	clk.ms.Store(1_000_000)
	p := newGatePersister()
	a := NewAllocator(State{}, p, AllocatorOptions{Now: clk.now, Window: 3 * time.Second})
	defer a.Close()
	if _, err := a.GetTS(); err != nil { // first window, synchronous
		t.Fatal(err)
	}
	if _, err := a.AllocID(); err != nil {
		t.Fatal(err)
	}
	waitIdle(a)
	limit := a.Persisted().TSOLimit
	if limit != 1_003_000 {
		t.Fatalf("limit %d", limit)
	}
	p.gated.Store(true)
	// Two thirds used: a background save starts, GetTS returns at once.
	clk.ms.Store(1_002_100)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 1000; i++ {
			if _, err := a.GetTS(); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("GetTS stalled on a background save")
	}
	select {
	case <-p.entered:
	case <-time.After(5 * time.Second):
		t.Fatal("no background save started")
	}
	if a.Persisted().TSOLimit != limit {
		t.Fatal("limit raised before the save completed")
	}
	// The clock runs past the durable limit: GetTS must wait.
	clk.ms.Store(1_003_500)
	got := make(chan uint64, 1)
	go func() {
		ts, err := a.GetTS()
		if err != nil {
			t.Error(err)
		}
		got <- ts
	}()
	select {
	case ts := <-got:
		t.Fatalf("handed out %d above the durable limit %d", ts, limit)
	case <-time.After(50 * time.Millisecond):
	}
	p.gated.Store(false)
	p.release <- struct{}{} // the background save completes
	// It covered 1_002_100+3000 > 1_003_500, so no further save is needed.
	select {
	case ts := <-got:
		if saved, _ := p.get(); ExtractPhysical(ts) >= saved.TSOLimit {
			t.Fatalf("ts %d not below durable %d", ts, saved.TSOLimit)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("GetTS did not resume")
	}
}

// waitIdle waits until no save is in flight.
func waitIdle(a *Allocator) {
	for {
		a.mu.Lock()
		s := a.saving
		a.mu.Unlock()
		if !s {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// The invariant under concurrency: at any moment, every timestamp and ID
// already handed out is below the durable state, so an allocator restarted
// from it ("crash" now) hands out strictly larger values.
func TestTSOInvariantConcurrentCrash(t *testing.T) {
	clk := &atomicClock{}
	clk.ms.Store(5_000_000)
	p := &slowPersister{}
	a := NewAllocator(State{}, p, AllocatorOptions{Now: clk.now, Window: 30 * time.Millisecond, IDWindow: 20})
	defer a.Close()
	var maxTS, maxID atomic.Uint64
	raise := func(m *atomic.Uint64, v uint64) {
		for {
			o := m.Load()
			if v <= o || m.CompareAndSwap(o, v) {
				return
			}
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			var lastTS, lastID uint64
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if g == 0 && i%3 == 0 {
					clk.ms.Add(int64(rand.Intn(5))) // the clock moves, sometimes fast
				}
				ts, err := a.GetTS()
				if err != nil {
					t.Error(err)
					return
				}
				if ts <= lastTS {
					t.Errorf("ts %d after %d", ts, lastTS)
					return
				}
				lastTS = ts
				raise(&maxTS, ts)
				id, err := a.AllocID()
				if err != nil {
					t.Error(err)
					return
				}
				if id <= lastID {
					t.Errorf("id %d after %d", id, lastID)
					return
				}
				lastID = id
				raise(&maxID, id)
			}
		}(g)
	}
	for crash := 0; crash < 200; crash++ {
		time.Sleep(time.Duration(rand.Intn(300)) * time.Microsecond)
		// Read what was handed out, then what is durable (it only grows).
		hts, hid := maxTS.Load(), maxID.Load()
		durable, _ := p.get()
		if hts != 0 && ExtractPhysical(hts) >= durable.TSOLimit || hid != 0 && hid >= durable.IDLimit {
			t.Fatalf("handed out ts %d / id %d, durable %+v", hts, hid, durable)
		}
		// Restart from the durable state with the clock far behind.
		b := NewAllocator(durable, &memPersister{}, AllocatorOptions{Now: func() time.Time { return time.UnixMilli(1) }})
		ts, err := b.GetTS()
		if err != nil || ts <= hts {
			t.Fatalf("restart ts %d <= %d (%v)", ts, hts, err)
		}
		id, err := b.AllocID()
		if err != nil || id <= hid {
			t.Fatalf("restart id %d <= %d (%v)", id, hid, err)
		}
		b.Close()
	}
	close(stop)
	wg.Wait()
	if _, saves := p.get(); saves < 3 {
		t.Fatalf("only %d saves; the test did not exercise window moves", saves)
	}
}

// slowPersister sleeps a little in Save, like a disk.
type slowPersister struct{ memPersister }

func (s *slowPersister) Save(st State) error {
	time.Sleep(time.Duration(rand.Intn(200)) * time.Microsecond)
	return s.memPersister.Save(st)
}

type failPersister struct {
	memPersister
	fail atomic.Bool
}

func (f *failPersister) Save(s State) error {
	if f.fail.Load() {
		return errors.New("disk full")
	}
	return f.memPersister.Save(s)
}

// A failing disk: values below the durable limit are still handed out,
// none above it; once the disk recovers the allocator resumes.
func TestTSOPersistFailure(t *testing.T) {
	clk := &atomicClock{}
	clk.ms.Store(100_000)
	p := &failPersister{}
	a := NewAllocator(State{}, p, AllocatorOptions{Now: clk.now, IDWindow: 10})
	defer a.Close()
	if _, err := a.GetTS(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.AllocID(); err != nil {
		t.Fatal(err)
	}
	p.fail.Store(true)
	clk.ms.Store(102_500) // background save fails
	if _, err := a.GetTS(); err != nil {
		t.Fatal(err)
	}
	clk.ms.Store(104_000) // past the limit
	for i := 0; i < 3; i++ {
		if ts, err := a.GetTS(); err == nil {
			t.Fatalf("handed out %d above the durable limit", ts)
		}
	}
	var ids int
	for ; ids < 100; ids++ {
		if _, err := a.AllocID(); err != nil {
			break
		}
	}
	if ids == 0 || ids >= 100 {
		t.Fatalf("allocated %d ids with a failing disk", ids)
	}
	p.fail.Store(false)
	ts, err := a.GetTS()
	if err != nil {
		t.Fatal(err)
	}
	if saved, _ := p.get(); ExtractPhysical(ts) >= saved.TSOLimit {
		t.Fatal("above the limit")
	}
	if _, err := a.AllocID(); err != nil {
		t.Fatal(err)
	}
}

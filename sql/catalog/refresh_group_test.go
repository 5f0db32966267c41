package catalog

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

type roundStart struct{ seq int64 }

func (r *roundStart) Error() string { return "round" }

// Every caller is served by a check that began after it called, and
// concurrent callers share checks.
func TestRefreshGroupCoalesces(t *testing.T) {
	var g refreshGroup
	var seq, checks atomic.Int64
	check := func() error {
		checks.Add(1)
		s := seq.Add(1)
		time.Sleep(2 * time.Millisecond)
		return &roundStart{seq: s}
	}
	const callers = 64
	var wg sync.WaitGroup
	for i := 0; i < callers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 5; j++ {
				called := seq.Add(1)
				var rs *roundStart
				if err := g.do(context.Background(), check); !errors.As(err, &rs) {
					t.Errorf("do: %v", err)
					return
				}
				if rs.seq < called {
					t.Errorf("served by a check that began (seq %d) before the call (seq %d)", rs.seq, called)
				}
			}
		}()
	}
	wg.Wait()
	if n := checks.Load(); n >= callers*5 {
		t.Fatalf("%d checks for %d calls: nothing shared", n, callers*5)
	}
	// Idle again: a new call starts a new check.
	before := checks.Load()
	_ = g.do(context.Background(), check)
	if checks.Load() != before+1 {
		t.Fatal("an idle group did not run a check")
	}
}

// A panicking check fails its callers; the group keeps serving.
func TestRefreshGroupPanicIsAnError(t *testing.T) {
	var g refreshGroup
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := g.do(ctx, func() error { panic("boom") })
	if err == nil || err.Error() != "schema refresh panicked: boom" {
		t.Fatalf("err %v", err)
	}
	if err := g.do(ctx, func() error { return nil }); err != nil {
		t.Fatal(err)
	}
}

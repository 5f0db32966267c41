package embedded

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/kv/delrange"
	"github.com/shoaldb/shoal/store/mvcc"
)

func TestGCReclaimsAndRespectsLiveTxns(t *testing.T) {
	e, err := Open(t.TempDir(), Options{NoSync: true, GCLifeTime: time.Millisecond, GCInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	big := strings.Repeat("x", mvcc.ShortValueMaxLen+1) // in the default keyspace
	for i := 0; i < 20; i++ {
		for k := 0; k < 5; k++ {
			put(t, e, fmt.Sprintf("k%d", k), fmt.Sprint(i, big))
		}
	}
	// A transaction begun now pins the safe point: its snapshot survives.
	old, err := e.Begin(ctx, kv.TxnOptions{Mode: kv.Optimistic})
	if err != nil {
		t.Fatal(err)
	}
	for k := 0; k < 5; k++ {
		put(t, e, fmt.Sprintf("k%d", k), "new")
	}
	w0, d0, _ := e.Store.CountVersions()
	time.Sleep(5 * time.Millisecond)
	sp, st, err := e.RunGC(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sp > old.StartTS() || sp == 0 {
		t.Fatalf("safe point %d vs live start ts %d", sp, old.StartTS())
	}
	w1, d1, _ := e.Store.CountVersions()
	if w1 != 10 || d1 != 5 || st.WritesDeleted != w0-w1 || st.DefaultDeleted != d0-d1 {
		t.Fatalf("versions %d/%d -> %d/%d, stats %+v", w0, d0, w1, d1, st)
	}
	v, err := old.Get(ctx, kv.Key("k3"))
	if err != nil || string(v) != fmt.Sprint(19, big) {
		t.Fatalf("old snapshot read: %.10q %v", v, err)
	}
	must(t, old.Rollback())
	time.Sleep(5 * time.Millisecond)
	if _, _, err := e.RunGC(ctx); err != nil {
		t.Fatal(err)
	}
	if w, d, _ := e.Store.CountVersions(); w != 5 || d != 0 {
		t.Fatalf("after the live txn finished: %d/%d", w, d)
	}
	if got := get(t, e, "k1"); got != "new" {
		t.Fatalf("k1 = %q", got)
	}
	// Reads below the safe point are refused.
	_, err = e.GetSnapshot(1).Get(ctx, kv.Key("k1"))
	var gcErr *mvcc.GCTooEarlyError
	if !errors.As(err, &gcErr) && (err == nil || !strings.Contains(err.Error(), "GC safe point")) {
		t.Fatalf("read below the safe point: %v", err)
	}
}

// The background worker runs alongside writers and readers.
func TestGCBackgroundConcurrent(t *testing.T) {
	e, err := Open(t.TempDir(), Options{NoSync: true, GCLifeTime: time.Millisecond, GCInterval: 5 * time.Millisecond, GCBatchKeys: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var wg sync.WaitGroup
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 150; i++ {
				k := fmt.Sprintf("k%d", (w*7+i)%10)
				txn, err := e.Begin(ctx, kv.TxnOptions{Mode: kv.Optimistic})
				if err != nil {
					t.Error(err)
					return
				}
				if _, err := txn.Get(ctx, kv.Key(k)); err != nil && !errors.Is(err, kv.ErrNotExist) {
					t.Error(err)
					_ = txn.Rollback()
					return
				}
				_ = txn.Set(kv.Key(k), []byte(fmt.Sprint(w, i)))
				if err := txn.Commit(ctx); err != nil && !errors.Is(err, kv.ErrWriteConflict) {
					t.Error(err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	time.Sleep(20 * time.Millisecond)
	if _, _, err := e.RunGC(ctx); err != nil {
		t.Fatal(err)
	}
	if w, _, _ := e.Store.CountVersions(); w > 10 {
		t.Fatalf("%d write records left", w)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A GC policy (the SQL layer's tidb_gc_life_time / tidb_gc_enable)
// replaces Options.GCLifeTime: a long life time keeps every version, a
// disabled policy stops background rounds but not RunGC.
func TestGCPolicy(t *testing.T) {
	e, err := Open(t.TempDir(), Options{NoSync: true, GCLifeTime: time.Millisecond, GCInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for i := range 3 {
		put(t, e, "k", fmt.Sprint(i))
	}
	life, enabled := time.Hour, true
	e.SetGCPolicy(func() (time.Duration, bool) { return life, enabled })
	time.Sleep(5 * time.Millisecond)
	if _, st, err := e.RunGC(ctx); err != nil || st.WritesDeleted != 0 {
		t.Fatalf("GC with an hour's life time: %+v, %v", st, err)
	}
	life, enabled = time.Millisecond, false
	if sp, st, err := e.runGC(ctx, true); err != nil || sp != 0 || st.WritesDeleted != 0 {
		t.Fatalf("a background round while disabled: sp %d, %+v, %v", sp, st, err)
	}
	if _, st, err := e.RunGC(ctx); err != nil || st.WritesDeleted != 2 {
		t.Fatalf("RunGC while disabled: %+v, %v", st, err)
	}
}

// A range queued by a DROP (kv/delrange) is stamped by the first GC round
// that sees it and destroyed, every version, by a round whose safe point
// passed the stamp; keys outside it stay.
func TestGCDestroysDroppedRanges(t *testing.T) {
	e, err := Open(t.TempDir(), Options{NoSync: true, GCLifeTime: time.Millisecond, GCInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for i := range 3 {
		for _, k := range []string{"t1_a", "t1_b", "t2_a"} {
			put(t, e, k, fmt.Sprint(i))
		}
	}
	txn, err := e.Begin(ctx, kv.TxnOptions{Mode: kv.Optimistic})
	must(t, err)
	must(t, delrange.Add(txn, 0, kv.Key("t1_"), kv.Key("t1_").PrefixNext()))
	must(t, txn.Commit(ctx))
	// Round 1 stamps the task (and collects old versions); round 2's safe
	// point is above the stamp: the range goes.
	time.Sleep(5 * time.Millisecond)
	if _, _, err := e.RunGC(ctx); err != nil {
		t.Fatal(err)
	}
	if got := get(t, e, "t1_a"); got != "2" {
		t.Fatalf("t1_a = %q before the range was destroyed", got)
	}
	time.Sleep(5 * time.Millisecond)
	if _, _, err := e.RunGC(ctx); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"t1_a": "<nil>", "t1_b": "<nil>", "t2_a": "2"} {
		if got := get(t, e, k); got != want {
			t.Fatalf("%s = %q after the range was destroyed, want %q", k, got, want)
		}
	}
	// After one more round (which collects the queue key's own records):
	// t2_a's newest version and nothing of t1, nor the task.
	time.Sleep(5 * time.Millisecond)
	if _, _, err := e.RunGC(ctx); err != nil {
		t.Fatal(err)
	}
	writes, defaults, err := e.Store.CountVersions()
	must(t, err)
	snap := e.GetSnapshot(math.MaxUint64)
	it, err := snap.Iter(ctx, delrange.Prefix, delrange.Prefix.PrefixNext())
	must(t, err)
	defer it.Close()
	if writes != 1 || defaults != 0 || it.Valid() {
		t.Fatalf("left %d writes, %d values, task queued: %v", writes, defaults, it.Valid())
	}
}

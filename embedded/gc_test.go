package embedded

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shoaldb/shoal/kv"
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

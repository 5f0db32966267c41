package tikvclient_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/shoaldb/shoal/kv/tikvclient"
	"github.com/shoaldb/shoal/store/kvrpc"
)

// ScanLocks pages through every region's locks in key order (a limit
// stops inside a region and the next call resumes after the last lock);
// GC visits every region once and removes the old versions there.
func TestScanLocksAndGCAcrossRegions(t *testing.T) {
	e := newEnv(t, envOpts{cluster: fourRegions})
	ctx := testCtx(t)
	keys := []string{"a", "a2", "c", "e", "g", "h"}
	for v := range 3 {
		var kvs []string
		for _, k := range keys {
			kvs = append(kvs, k, fmt.Sprint("v", v))
		}
		e.write(t, ctx, false, kvs...)
	}
	// Dangling locks on four keys in three regions (a prewrite never
	// committed), and one above the scan's max ts.
	old := e.ts(t)
	var ms []kvrpc.Mutation
	for _, k := range []string{"a", "a2", "c", "g"} {
		ms = append(ms, kvrpc.Mutation{Op: kvrpc.OpPut, Key: []byte(k), Value: []byte("x")})
	}
	_, err := e.cl.KvPrewrite(ctx, kvrpc.PrewriteRequest{Mutations: ms, PrimaryLock: []byte("a"), StartTS: old, LockTTL: 1})
	must(t, err)
	young := e.ts(t)
	_, err = e.cl.KvPrewrite(ctx, kvrpc.PrewriteRequest{Mutations: []kvrpc.Mutation{{Op: kvrpc.OpPut, Key: []byte("e"), Value: []byte("y")}},
		PrimaryLock: []byte("e"), StartTS: young, LockTTL: 1})
	must(t, err)

	var got []string
	var start []byte
	for calls := 0; ; calls++ {
		if calls > 20 {
			t.Fatalf("ScanLocks does not finish: %q so far", got)
		}
		locks, next, err := e.cl.ScanLocks(ctx, start, nil, young-1, 1)
		must(t, err)
		for _, l := range locks {
			if l.LockTS != old {
				t.Fatalf("lock %q at %d above the max ts", l.Key, l.LockTS)
			}
			got = append(got, string(l.Key))
		}
		if next == nil {
			break
		}
		start = next
	}
	if fmt.Sprint(got) != "[a a2 c g]" {
		t.Fatalf("locks = %q, want a a2 c g", got)
	}

	// GC at a safe point above all three versions keeps the newest only.
	sp := e.ts(t)
	st, err := e.cl.GC(ctx, sp, nil, nil)
	must(t, err)
	want := tikvclient.GCStats{Regions: 4, Keys: uint64(len(keys)), WritesDeleted: uint64(2 * len(keys))}
	if st != want {
		t.Fatalf("GC stats = %+v, want %+v", st, want)
	}
	// Each region's leader published the safe point.
	for _, s := range e.c.Stores {
		if got := s.Service.Store().GCSafePoint(); got != sp {
			t.Fatalf("store %d safe point %d, want %d", s.ID, got, sp)
		}
	}
	// A second pass finds nothing; a sub-range visits only its regions.
	st, err = e.cl.GC(ctx, sp, []byte("c"), []byte("e"))
	must(t, err)
	if st != (tikvclient.GCStats{Regions: 2, Keys: 1}) { // [b, d) and [d, f)
		t.Fatalf("second GC over [c, e) = %+v", st)
	}
}

// A range command over a region that never answers gives up after the
// client's backoff budget for that region, not at the caller's deadline:
// each region keeps one budget across its retries (a fresh one per retry
// once made GC and DeleteRange retry a dead store until the round's
// context ended, which for the GC worker is never).
func TestRangeCommandGivesUpOnDeadRegion(t *testing.T) {
	e := newEnv(t, envOpts{cluster: fourRegions, client: tikvclient.Options{MaxBackoff: 500 * time.Millisecond, RPCTimeout: 200 * time.Millisecond}})
	ctx := testCtx(t)
	e.write(t, ctx, false, "a", "1", "c", "1")
	e.c.StoreByID(leaderOf("c")).Stop()
	sp := e.ts(t)
	if _, err := e.cl.GC(ctx, sp, nil, nil); err == nil || ctx.Err() != nil {
		t.Fatalf("GC with region [b, d) down: err %v, ctx %v; want the client's error before the test's deadline", err, ctx.Err())
	}
	if _, err := e.cl.DeleteRange(ctx, []byte("b"), []byte("d")); err == nil || ctx.Err() != nil {
		t.Fatalf("DeleteRange with region [b, d) down: err %v, ctx %v", err, ctx.Err())
	}
}

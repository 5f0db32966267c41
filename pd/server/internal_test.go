package server

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/shoaldb/shoal/proto/metapb"
)

func reg(id uint64, start, end string, confVer, version uint64) *regionInfo {
	return &regionInfo{meta: &metapb.Region{
		Id: id, StartKey: []byte(start), EndKey: []byte(end),
		RegionEpoch: &metapb.RegionEpoch{ConfVer: confVer, Version: version},
		Peers:       []*metapb.Peer{{Id: id * 10, StoreId: 1}},
	}, leader: &metapb.Peer{Id: id * 10, StoreId: 1}}
}

func layout(c *cluster) string {
	var s string
	for _, r := range c.scanRegions(nil, nil, 0) {
		s += fmt.Sprintf("%d[%s,%s) ", r.meta.Id, r.meta.StartKey, r.meta.EndKey)
	}
	return s
}

// TestRegionIndex: splits replace their parent, stale reports are refused,
// merges evict the regions they cover, and lookups follow the layout.
func TestRegionIndex(t *testing.T) {
	c := newCluster()
	mustPut := func(r *regionInfo) {
		t.Helper()
		if _, _, err := c.putRegion(r); err != nil {
			t.Fatalf("put %d: %v", r.meta.Id, err)
		}
	}
	mustPut(reg(1, "", "", 1, 1))
	// Split at "m": the new region 2 takes the left half.
	mustPut(reg(2, "", "m", 1, 2))
	if got := layout(c); got != "2[,m) " {
		t.Fatalf("after left half: %s", got)
	}
	mustPut(reg(1, "m", "", 1, 2))
	if got := layout(c); got != "2[,m) 1[m,) " {
		t.Fatalf("after split: %s", got)
	}
	// The unsplit region reported late is stale.
	if _, _, err := c.putRegion(reg(1, "", "", 1, 1)); !errors.Is(err, errStaleRegion) {
		t.Fatalf("stale report: %v", err)
	}
	// A lower conf_ver is stale too.
	if _, _, err := c.putRegion(reg(1, "m", "", 0, 2)); !errors.Is(err, errStaleRegion) {
		t.Fatalf("stale conf_ver: %v", err)
	}
	mustPut(reg(3, "t", "", 1, 3))
	mustPut(reg(1, "m", "t", 1, 3))
	if got := layout(c); got != "2[,m) 1[m,t) 3[t,) " {
		t.Fatalf("after second split: %s", got)
	}
	for key, want := range map[string]uint64{"": 2, "a": 2, "m": 1, "s": 1, "t": 3, "zz": 3} {
		if r := c.getRegion([]byte(key)); r == nil || r.meta.Id != want {
			t.Errorf("getRegion(%q) = %v, want %d", key, r, want)
		}
	}
	if p := c.getPrevRegion([]byte("u")); p == nil || p.meta.Id != 1 {
		t.Errorf("getPrevRegion(u) = %v", p)
	}
	if p := c.getPrevRegion([]byte("a")); p != nil {
		t.Errorf("getPrevRegion(a) = %v", p)
	}
	if got := c.scanRegions([]byte("n"), []byte("u"), 0); len(got) != 2 || got[0].meta.Id != 1 || got[1].meta.Id != 3 {
		t.Errorf("scan [n,u) = %v", got)
	}
	if got := c.scanRegions([]byte("a"), nil, 2); len(got) != 2 {
		t.Errorf("scan limit 2 = %d regions", len(got))
	}
	// Region 2 merges 1 into itself: it covers [,t) with a higher version.
	changed, removed, err := c.putRegion(reg(2, "", "t", 1, 4))
	if err != nil || !changed || len(removed) != 1 || removed[0].meta.Id != 1 {
		t.Fatalf("merge: changed=%v removed=%v err=%v", changed, removed, err)
	}
	if got := layout(c); got != "2[,t) 3[t,) " {
		t.Fatalf("after merge: %s", got)
	}
	// Same report again: nothing to persist.
	if changed, _, _ := c.putRegion(reg(2, "", "t", 1, 4)); changed {
		t.Fatal("identical report counted as a change")
	}
	c.putStore(&storeInfo{meta: &metapb.Store{Id: 1}})
	if ss := c.scheduleStores(); len(ss) != 1 || ss[0].RegionCount != 2 || ss[0].LeaderCount != 2 {
		t.Fatalf("store counts %+v", ss)
	}
}

// fakeSaver records the limits saved and can fail.
type fakeSaver struct {
	mu    sync.Mutex
	saved int64
	fail  bool
	calls int
}

func (f *fakeSaver) save(_ context.Context, limit int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.fail {
		return errors.New("etcd down")
	}
	if limit < f.saved {
		return fmt.Errorf("limit went down: %d < %d", limit, f.saved)
	}
	f.saved = limit
	return nil
}

// TestTSOAllocator: batches are consecutive, never reach the durable
// limit, start above a loaded limit even with the clock behind it, and
// fail (rather than exceed the window) when saving fails.
func TestTSOAllocator(t *testing.T) {
	clock := time.UnixMilli(1_000_000)
	now := func() time.Time { return clock }
	fs := &fakeSaver{}
	// The previous leader's limit is ahead of our clock.
	a := newTSOAllocator(1_005_000, 3*time.Second, now, fs.save)
	ctx := context.Background()
	if err := a.prepare(ctx); err != nil {
		t.Fatal(err)
	}
	p, l, err := a.generate(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if p != 1_005_000 || l != 9 {
		t.Fatalf("first batch ends at %d.%d, want 1005000.9", p, l)
	}
	p2, l2, _ := a.generate(ctx, 1)
	if p2 != p || l2 != 10 {
		t.Fatalf("next ts %d.%d", p2, l2)
	}
	// Exhaust a millisecond's logical space: the next batch borrows the
	// next millisecond and is still consecutive.
	p3, l3, _ := a.generate(ctx, maxLogical-10)
	if p3 != p || l3 != maxLogical {
		t.Fatalf("filling batch ends at %d.%d", p3, l3)
	}
	p4, l4, _ := a.generate(ctx, 5)
	if p4 != p+1 || l4 != 4 {
		t.Fatalf("borrowed batch ends at %d.%d", p4, l4)
	}
	a.wg.Wait()
	// Every physical part stays below what is durable.
	if p4 >= fs.saved {
		t.Fatalf("handed out %d with durable limit %d", p4, fs.saved)
	}
	// Jump the clock past the window while etcd fails: an error, not a
	// timestamp beyond the limit.
	fs.mu.Lock()
	fs.fail = true
	fs.mu.Unlock()
	clock = time.UnixMilli(fs.saved + 10)
	if _, _, err := a.generate(ctx, 1); err == nil {
		t.Fatal("generate beyond the durable window succeeded while saves fail")
	}
	fs.mu.Lock()
	fs.fail = false
	fs.mu.Unlock()
	p5, _, err := a.generate(ctx, 1)
	if err != nil || p5 != clock.UnixMilli() {
		t.Fatalf("after recovery: %d, %v", p5, err)
	}
	a.close()
	if _, _, err := a.generate(ctx, 1); !errors.Is(err, errAllocatorClosed) {
		t.Fatalf("closed allocator: %v", err)
	}
}

// TestIDAllocator: IDs are reserved in batches before use and resume at
// the loaded limit.
func TestIDAllocator(t *testing.T) {
	var saved uint64
	save := func(_ context.Context, l uint64) error { saved = l; return nil }
	a := newIDAllocator(500, 100, save)
	first, err := a.alloc(context.Background(), 1)
	if err != nil || first != 500 || saved < 501 {
		t.Fatalf("first id %d (saved %d), %v", first, saved, err)
	}
	next, _ := a.alloc(context.Background(), 150)
	if next != 501 || saved < 651 {
		t.Fatalf("batch starts at %d (saved %d)", next, saved)
	}
}

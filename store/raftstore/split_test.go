package raftstore

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/shoaldb/shoal/store/mvcc"
)

// TestSplitWhileIsolatedThenCatchUp: a store misses splits and log
// compaction; on rejoining it gets the shrunken parent through a snapshot
// and the new regions through peers created from their leaders' messages.
func TestSplitWhileIsolatedThenCatchUp(t *testing.T) {
	c := newTestCluster(t, 3, func(cfg *Config) {
		cfg.RaftLogGCCountLimit = 20
		cfg.RaftLogGCTicks = 3
	})
	c.bootstrap(1, 2, 3)
	c.mustPut("key0000", "x")
	leader := c.leaderOf(1)
	var isolated uint64
	for id := uint64(1); id <= 3; id++ {
		if id != leader.StoreID() {
			isolated = id
			break
		}
	}
	c.waitValue(isolated, "key0000", "x")
	f := c.net.AddFilter(Isolate(isolated))
	for i := 0; i < 200; i++ {
		c.mustPut(fmt.Sprintf("key%04d", i), bigValue)
	}
	c.eventually("splits", func() bool { return len(c.store(leader.StoreID()).Regions()) >= 3 })
	c.net.RemoveFilter(f)
	want := len(c.store(leader.StoreID()).Regions())
	c.eventually("isolated store has every region", func() bool {
		return len(c.store(isolated).Regions()) >= want
	})
	for i := 0; i < 200; i++ {
		c.waitValue(isolated, fmt.Sprintf("key%04d", i), bigValue)
	}
	// Its regions agree with the leader's store.
	for _, info := range c.store(leader.StoreID()).Regions() {
		id := info.Region.GetId()
		c.eventually(fmt.Sprintf("region %d matches", id), func() bool {
			mine, ok := c.store(isolated).Region(id)
			cur, _ := c.store(leader.StoreID()).Region(id)
			return ok && mine.Region.String() == cur.Region.String()
		})
	}
}

// TestMVCCAcrossSplits writes versioned MVCC data through the leader of
// each key's region while regions split under it; afterwards every key
// reads back through mvcc from its region's leader, and each region's
// boundary is a user key that none of its neighbour's records share.
func TestMVCCAcrossSplits(t *testing.T) {
	c := newTestCluster(t, 3, func(cfg *Config) { cfg.RegionSplitSize = 32 << 10 })
	c.bootstrap(1, 2, 3)
	ctx := context.Background()
	// A fresh mvcc.Store per command: mvcc counts the lock records it
	// writes itself, and a store that gains leadership holds locks its
	// followers' applies wrote without counting them.
	mvccOf := func(s *Store) *mvcc.Store { return mvcc.New(s.Engine(), mvcc.Options{}) }
	ts := uint64(time.Now().UnixMilli()) << 18
	value := string(make([]byte, 200))
	const keys = 120
	for version := 0; version < 3; version++ {
		for i := 0; i < keys; i++ {
			k := fmt.Sprintf("user%04d", i)
			c.eventually("write "+k, func() bool {
				regionID := c.regionOfKey(k)
				s := c.leaderOf(regionID)
				if _, err := s.RegionRead(ctx, regionID, nil); err != nil {
					return false
				}
				ts += 10
				st := mvccOf(s)
				if _, err := st.Prewrite(ctx, kvrpcPrewrite(k, fmt.Sprintf("%d%s", version, value), ts)); err != nil {
					if _, ok := AsRegionError(err); ok || errors.Is(err, ErrTimeout) {
						return false
					}
					t.Fatalf("prewrite %s: %v", k, err)
				}
				for attempt := 0; ; attempt++ {
					if attempt == 1000 {
						t.Fatalf("commit %s: no progress", k)
					}
					err := kvrpcCommit(ctx, st, k, ts, ts+1)
					if err == nil {
						return true
					}
					// The lock is there: commit it wherever the region's
					// leader now is.
					if _, ok := AsRegionError(err); !ok && !errors.Is(err, ErrTimeout) {
						t.Fatalf("commit %s: %v", k, err)
					}
					time.Sleep(time.Millisecond)
					s = c.leaderOf(c.regionOfKey(k))
					st = mvccOf(s)
				}
			})
		}
	}
	regions := c.store(1).Regions()
	if len(regions) < 3 {
		t.Fatalf("only %d regions", len(regions))
	}
	readTS := ts + 100
	for i := 0; i < keys; i++ {
		k := fmt.Sprintf("user%04d", i)
		regionID := c.regionOfKey(k)
		s := c.leaderOf(regionID)
		v, found, err := mvccGet(ctx, mvccOf(s), k, readTS)
		if err != nil || !found || v != "2"+value {
			t.Fatalf("%s: %q %v %v", k, v[:1], found, err)
		}
	}
}

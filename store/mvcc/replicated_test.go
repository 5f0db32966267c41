package mvcc

import (
	"context"
	"testing"

	"github.com/shoaldb/shoal/store/kvrpc"
	"github.com/shoaldb/shoal/store/pebbleengine"
)

// On a replicated store another store's MVCC writes locks into the same
// engine (a follower applies them). With NoLockCount a store still sees
// them; without it a store whose counts never saw the lock would miss it.
func TestNoLockCountSeesForeignLocks(t *testing.T) {
	e, err := pebbleengine.Open(t.TempDir(), pebbleengine.Options{Split: SplitKey, SplitName: SplitName, BlockCacheSize: 8 << 20, MemTableSize: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	follower := New(e, Options{NoSync: true, NoLockCount: true})
	leader := New(e, Options{NoSync: true})
	must(t, prewrite(t, leader, "a", 10, put("a", "1")))
	ctx := context.Background()
	_, err = follower.Get(ctx, kvrpc.GetRequest{Key: []byte("a"), Version: 20})
	wantLocked(t, err, "a")
	_, err = follower.BatchGet(ctx, kvrpc.BatchGetRequest{Keys: [][]byte{[]byte("a")}, Version: 20})
	wantLocked(t, err, "a")
	_, err = follower.Prewrite(ctx, kvrpc.PrewriteRequest{Mutations: []kvrpc.Mutation{put("a", "2")}, PrimaryLock: []byte("a"), StartTS: 30, LockTTL: 1000})
	wantLocked(t, err, "a")
}

// MaxTSSynced returning false turns a one-phase prewrite into a normal
// one (locks, OnePCCommitTS 0); once it allows, 1PC commits above the
// maxTS raised with UpdateMaxTS.
func TestOnePCNeedsMaxTSSynced(t *testing.T) {
	allow := false
	e, err := pebbleengine.Open(t.TempDir(), pebbleengine.Options{Split: SplitKey, SplitName: SplitName, BlockCacheSize: 8 << 20, MemTableSize: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s := New(e, Options{NoSync: true, MaxTSSynced: func() bool { return allow }})
	ctx := context.Background()
	resp, err := s.Prewrite(ctx, kvrpc.PrewriteRequest{Mutations: []kvrpc.Mutation{put("a", "1")}, PrimaryLock: []byte("a"), StartTS: 10, LockTTL: 1000, TryOnePC: true})
	must(t, err)
	if resp.OnePCCommitTS != 0 {
		t.Fatalf("1PC ran while refused: %+v", resp)
	}
	_, err = s.Get(ctx, kvrpc.GetRequest{Key: []byte("a"), Version: 20})
	wantLocked(t, err, "a")
	must(t, commit(t, s, 10, 11, "a"))

	allow = true
	s.UpdateMaxTS(1000)
	resp, err = s.Prewrite(ctx, kvrpc.PrewriteRequest{Mutations: []kvrpc.Mutation{put("b", "1")}, PrimaryLock: []byte("b"), StartTS: 20, LockTTL: 1000, TryOnePC: true})
	must(t, err)
	if resp.OnePCCommitTS <= 1000 {
		t.Fatalf("1PC commit ts %d not above the raised max ts", resp.OnePCCommitTS)
	}
}

package mvcc

import (
	"errors"
	"fmt"
	"math/rand"
	"testing"

	"github.com/shoaldb/shoal/store/kvrpc"
	"github.com/shoaldb/shoal/store/pebbleengine"
)

// checkLockCounts compares the store's lock counts with a fresh count of
// the engine's lock records: they must never be lower, and with no failed
// commits they are exact.
func checkLockCounts(t *testing.T, s *Store) {
	t.Helper()
	var fresh lockCounts
	fresh.init(s.eng)
	if a, b := s.locks.all.Load(), fresh.all.Load(); a != b {
		t.Fatalf("all-lock count %d, engine holds %d", a, b)
	}
	if a, b := s.locks.blocking.Load(), fresh.blocking.Load(); a != b {
		t.Fatalf("blocking-lock count %d, engine holds %d", a, b)
	}
	for i := range s.locks.slots {
		got, want := &s.locks.slots[i], &fresh.slots[i]
		if got.all.Load() != want.all.Load() || got.blocking.Load() != want.blocking.Load() {
			t.Fatalf("slot %d counts %d/%d, engine holds %d/%d", i,
				got.all.Load(), got.blocking.Load(), want.all.Load(), want.blocking.Load())
		}
	}
}

func wantLocked(t *testing.T, err error, key string) {
	t.Helper()
	var le *kvrpc.KeyIsLockedError
	if !errors.As(err, &le) || string(le.Locks[0].Key) != key {
		t.Fatalf("want KeyIsLocked on %s, got %v", key, err)
	}
}

// The lock-count fast path must still see 2PC locks (reads and writes)
// and pessimistic locks (writes), also after the store is reopened, and
// the counts must return to zero when the locks go.
func TestLockCountFastPath(t *testing.T) {
	dir := t.TempDir()
	open := func() (*Store, func()) {
		e, err := pebbleengine.Open(dir, pebbleengine.Options{Split: SplitKey, SplitName: SplitName, BlockCacheSize: 8 << 20, MemTableSize: 4 << 20})
		if err != nil {
			t.Fatal(err)
		}
		return New(e, Options{NoSync: true}), func() { e.Close() }
	}
	s, closeFn := open()
	must(t, prewrite(t, s, "a", 10, put("a", "1"), put("b", "1")))
	must(t, commit(t, s, 10, 11, "a", "b"))
	checkLockCounts(t, s)
	if s.locks.all.Load() != 0 {
		t.Fatal("locks counted after commit")
	}

	// A 2PC lock blocks Get, BatchGet and Scan.
	must(t, prewrite(t, s, "a", 20, put("a", "2")))
	checkLockCounts(t, s)
	_, err := s.Get(ctx, kvrpc.GetRequest{Key: []byte("a"), Version: 25})
	wantLocked(t, err, "a")
	_, err = s.BatchGet(ctx, kvrpc.BatchGetRequest{Keys: [][]byte{[]byte("b"), []byte("a")}, Version: 25})
	wantLocked(t, err, "a")
	_, err = s.Scan(ctx, kvrpc.ScanRequest{Version: 25})
	wantLocked(t, err, "a")

	// A pessimistic lock does not block reads but does block other writers.
	p := tsNow(1)
	must(t, plock(s, "b", p, p, 0))
	checkLockCounts(t, s)
	if s.locks.all.Load() != 2 || s.locks.blocking.Load() != 1 {
		t.Fatalf("counts %d/%d", s.locks.all.Load(), s.locks.blocking.Load())
	}
	if mustGet(t, s, "b", p+10) != "1" {
		t.Fatal("read blocked by pessimistic lock")
	}
	_, err = s.Prewrite(ctx, kvrpc.PrewriteRequest{Mutations: []kvrpc.Mutation{put("b", "x")}, PrimaryLock: []byte("b"),
		StartTS: p + 1, LockTTL: 3000, TryOnePC: true})
	wantLocked(t, err, "b")

	// Reopen: the locks left behind are counted again.
	closeFn()
	s, closeFn = open()
	defer func() { closeFn() }()
	checkLockCounts(t, s)
	_, err = s.Get(ctx, kvrpc.GetRequest{Key: []byte("a"), Version: 25})
	wantLocked(t, err, "a")
	_, err = s.Scan(ctx, kvrpc.ScanRequest{StartKey: []byte("a"), Version: 25, Limit: 1})
	wantLocked(t, err, "a")
	_, err = s.Prewrite(ctx, kvrpc.PrewriteRequest{Mutations: []kvrpc.Mutation{put("b", "x")}, PrimaryLock: []byte("b"),
		StartTS: p + 2, LockTTL: 3000, TryOnePC: true})
	wantLocked(t, err, "b")

	// Converting the pessimistic lock by 1PC, and committing the 2PC one
	// (naming its key twice), bring the counts back to zero.
	_, err = s.Prewrite(ctx, kvrpc.PrewriteRequest{Mutations: []kvrpc.Mutation{{Op: kvrpc.OpPut, Key: []byte("b"), Value: []byte("p"), IsPessimisticLock: true}},
		PrimaryLock: []byte("b"), StartTS: p, ForUpdateTS: p, LockTTL: 3000, TryOnePC: true})
	must(t, err)
	checkLockCounts(t, s)
	must(t, commit(t, s, 20, 21, "a", "a"))
	checkLockCounts(t, s)
	if s.locks.all.Load() != 0 {
		t.Fatal("locks counted after commit")
	}
	if mustGet(t, s, "a", 25) != "2" || mustGet(t, s, "b", tsNow(1<<17)) != "p" {
		t.Fatal("values")
	}
}

// Every command that writes locks keeps the counts exact, whatever the
// interleaving; and reads through the fast path agree with a model.
func TestLockCountRandomized(t *testing.T) {
	s := newTestStore(t)
	rng := rand.New(rand.NewSource(7))
	keys := []string{"a", "b", "c", "d", "e"}
	pick := func() [][]byte {
		n := 1 + rng.Intn(3)
		var out [][]byte
		for i := 0; i < n; i++ {
			out = append(out, []byte(keys[rng.Intn(len(keys))])) // duplicates allowed
		}
		return out
	}
	base := tsNow(0)
	var live []uint64 // start ts of txns that may hold locks
	for i := 0; i < 600; i++ {
		ts := base + uint64(i)*4
		ks := pick()
		switch rng.Intn(8) {
		case 0, 1: // 2PC prewrite
			var ms []kvrpc.Mutation
			for _, k := range ks {
				op := []kvrpc.Op{kvrpc.OpPut, kvrpc.OpDel, kvrpc.OpLock}[rng.Intn(3)]
				ms = append(ms, kvrpc.Mutation{Op: op, Key: k, Value: []byte(fmt.Sprint(i))})
			}
			if _, err := s.Prewrite(ctx, kvrpc.PrewriteRequest{Mutations: ms, PrimaryLock: ks[0], StartTS: ts, LockTTL: 3000}); err == nil {
				live = append(live, ts)
			}
		case 2: // pessimistic lock
			var pks []kvrpc.PessimisticLockKey
			for _, k := range ks {
				pks = append(pks, kvrpc.PessimisticLockKey{Key: k})
			}
			if _, err := s.PessimisticLock(ctx, kvrpc.PessimisticLockRequest{Keys: pks, PrimaryLock: ks[0], StartTS: ts, ForUpdateTS: ts, LockTTL: 3000}); err == nil {
				live = append(live, ts)
			}
		case 3: // 1PC
			s.Prewrite(ctx, kvrpc.PrewriteRequest{Mutations: []kvrpc.Mutation{put(string(ks[0]), "1pc")}, PrimaryLock: ks[0], StartTS: ts, LockTTL: 3000, TryOnePC: true})
		default: // finish a live txn: commit, rollback, resolve, pessimistic rollback
			if len(live) == 0 {
				continue
			}
			j := rng.Intn(len(live))
			start := live[j]
			all := [][]byte{}
			for _, k := range keys {
				all = append(all, []byte(k))
			}
			all = append(all, []byte("a"))
			switch rng.Intn(5) {
			case 0:
				s.Commit(ctx, kvrpc.CommitRequest{Keys: all, StartTS: start, CommitTS: ts})
			case 1:
				s.BatchRollback(ctx, kvrpc.BatchRollbackRequest{Keys: all, StartTS: start})
			case 2:
				s.ResolveLock(ctx, kvrpc.ResolveLockRequest{StartTS: start, CommitTS: ts * uint64(rng.Intn(2))})
			case 3:
				s.PessimisticRollback(ctx, kvrpc.PessimisticRollbackRequest{Keys: all, StartTS: start})
			case 4:
				s.TxnHeartBeat(ctx, kvrpc.TxnHeartBeatRequest{PrimaryLock: all[rng.Intn(len(keys))], StartTS: start, AdviseLockTTL: uint64(5000 + i)})
			}
			if rng.Intn(2) == 0 {
				live = append(live[:j], live[j+1:]...)
			}
		}
		checkLockCounts(t, s)
	}
	// Clean up everything; the counts must reach zero.
	locks, err := s.ScanLocks(0)
	must(t, err)
	for _, l := range locks {
		_, err := s.ResolveLock(ctx, kvrpc.ResolveLockRequest{StartTS: l.LockTS})
		must(t, err)
	}
	checkLockCounts(t, s)
	if s.locks.all.Load() != 0 || s.locks.blocking.Load() != 0 {
		t.Fatalf("counts %d/%d after cleanup", s.locks.all.Load(), s.locks.blocking.Load())
	}
}

package mvcc

import (
	"errors"
	"testing"

	"github.com/shoaldb/shoal/store/kvrpc"
	"github.com/shoaldb/shoal/store/pebbleengine"
)

func asyncPrewrite(s *Store, primary string, secondaries []string, start uint64, ms ...kvrpc.Mutation) (kvrpc.PrewriteResponse, error) {
	var sec [][]byte
	for _, k := range secondaries {
		sec = append(sec, []byte(k))
	}
	return s.Prewrite(ctx, kvrpc.PrewriteRequest{Mutations: ms, PrimaryLock: []byte(primary), StartTS: start,
		LockTTL: 3000, UseAsyncCommit: true, Secondaries: sec})
}

// An async-commit prewrite picks a min_commit_ts above every read the
// store served, keeps the secondaries in the primary's lock, and answers
// the same min_commit_ts when retried.
func TestAsyncCommitPrewrite(t *testing.T) {
	onEngines(t, func(t *testing.T, eng testEngine) {
		s := eng.newStore(t)
		start := tsNow(0)
		readTS := start + 100
		mustGet(t, s, "a", readTS) // raises maxTS
		resp, err := asyncPrewrite(s, "a", []string{"b"}, start, put("a", "1"), put("b", "2"))
		must(t, err)
		if resp.MinCommitTS <= readTS {
			t.Fatalf("min_commit_ts %d not above the read at %d", resp.MinCommitTS, readTS)
		}
		st, err := s.CheckSecondaryLocks(ctx, kvrpc.CheckSecondaryLocksRequest{Keys: [][]byte{[]byte("a"), []byte("b")}, StartTS: start})
		must(t, err)
		if len(st.Locks) != 2 || st.CommitTS != 0 {
			t.Fatalf("CheckSecondaryLocks = %+v, want two locks", st)
		}
		for _, l := range st.Locks {
			if !l.UseAsyncCommit || l.MinCommitTS != resp.MinCommitTS {
				t.Fatalf("lock %q: async=%v min_commit_ts=%d, want async at %d", l.Key, l.UseAsyncCommit, l.MinCommitTS, resp.MinCommitTS)
			}
			if want := string(l.Key) == "a"; want != (len(l.Secondaries) == 1) {
				t.Fatalf("lock %q has secondaries %q", l.Key, l.Secondaries)
			}
		}
		again, err := asyncPrewrite(s, "a", []string{"b"}, start, put("a", "1"), put("b", "2"))
		must(t, err)
		if again.MinCommitTS != resp.MinCommitTS {
			t.Fatalf("retried prewrite answered %d, first %d", again.MinCommitTS, resp.MinCommitTS)
		}
		// Committing at the min_commit_ts makes it visible there.
		must(t, commit(t, s, start, resp.MinCommitTS, "a", "b"))
		if v := mustGet(t, s, "b", resp.MinCommitTS); v != "2" {
			t.Fatalf("b at commit ts = %q", v)
		}
	})
}

// An expired async-commit primary is not rolled back by CheckTxnStatus
// (only its secondaries can tell whether it committed), unless the caller
// forces the two-phase rules.
func TestAsyncCommitCheckTxnStatus(t *testing.T) {
	onEngines(t, func(t *testing.T, eng testEngine) {
		s := eng.newStore(t)
		start := tsNow(0)
		_, err := s.Prewrite(ctx, kvrpc.PrewriteRequest{Mutations: []kvrpc.Mutation{put("p", "1")}, PrimaryLock: []byte("p"),
			StartTS: start, LockTTL: 1, UseAsyncCommit: true, Secondaries: [][]byte{[]byte("s")}})
		must(t, err)
		late := tsNow(0) + 10<<18 // 10ms later: expired
		resp, err := s.CheckTxnStatus(ctx, kvrpc.CheckTxnStatusRequest{PrimaryKey: []byte("p"), LockTS: start, CurrentTS: late})
		must(t, err)
		if resp.LockTTL == 0 || resp.Lock == nil || !resp.Lock.UseAsyncCommit || string(resp.Lock.Secondaries[0]) != "s" {
			t.Fatalf("expired async primary: %+v, want it returned, not rolled back", resp)
		}
		resp, err = s.CheckTxnStatus(ctx, kvrpc.CheckTxnStatusRequest{PrimaryKey: []byte("p"), LockTS: start, CurrentTS: late, ForceSyncCommit: true})
		must(t, err)
		if resp.LockTTL != 0 || resp.Action != kvrpc.TTLExpireRollback {
			t.Fatalf("forced: %+v, want rolled back", resp)
		}
	})
}

// CheckSecondaryLocks rolls back keys the transaction did not prewrite
// (so it can no longer commit), rolls back its pessimistic locks, and
// reports a commit it finds.
func TestCheckSecondaryLocks(t *testing.T) {
	onEngines(t, func(t *testing.T, eng testEngine) {
		s := eng.newStore(t)
		start := tsNow(0)
		_, err := asyncPrewrite(s, "a", []string{"b", "c"}, start, put("a", "1"), put("b", "2"))
		must(t, err)
		must(t, plock(s, "d", start, start, 0))
		resp, err := s.CheckSecondaryLocks(ctx, kvrpc.CheckSecondaryLocksRequest{
			Keys: [][]byte{[]byte("a"), []byte("b"), []byte("c"), []byte("d")}, StartTS: start})
		must(t, err)
		if len(resp.Locks) != 2 || resp.CommitTS != 0 {
			t.Fatalf("CheckSecondaryLocks = %+v, want the locks of a and b only", resp)
		}
		// c got a rollback record: the late prewrite of c fails.
		if _, err := asyncPrewrite(s, "a", nil, start, put("c", "3")); err == nil {
			t.Fatal("prewrite of a key checked as missing succeeded")
		}
		// d's pessimistic lock is gone.
		if _, ok, err := s.newReadReader().loadLock([]byte("d")); err != nil || ok {
			t.Fatalf("d still locked (%v)", err)
		}

		// A committed key reports the commit ts.
		start2 := tsNow(1)
		r2, err := asyncPrewrite(s, "x", []string{"y"}, start2, put("x", "1"), put("y", "2"))
		must(t, err)
		must(t, commit(t, s, start2, r2.MinCommitTS, "y"))
		resp, err = s.CheckSecondaryLocks(ctx, kvrpc.CheckSecondaryLocksRequest{Keys: [][]byte{[]byte("x"), []byte("y")}, StartTS: start2})
		must(t, err)
		if resp.CommitTS != r2.MinCommitTS {
			t.Fatalf("CheckSecondaryLocks after a commit = %+v, want commit ts %d", resp, r2.MinCommitTS)
		}
	})
}

// A store whose maxTS is not known to cover earlier leaders' reads writes
// ordinary locks and says so (MinCommitTS 0): the client commits in two
// phases.
func TestAsyncCommitNeedsMaxTSSynced(t *testing.T) {
	e, err := pebbleengine.Open(t.TempDir(), pebbleengine.Options{Split: SplitKey, SplitName: SplitName})
	must(t, err)
	t.Cleanup(func() { e.Close() })
	s := New(e, Options{NoSync: true, MaxTSSynced: func() bool { return false }})
	start := tsNow(0)
	resp, err := asyncPrewrite(s, "a", nil, start, put("a", "1"))
	must(t, err)
	if resp.MinCommitTS != 0 {
		t.Fatalf("unsynced store answered min_commit_ts %d", resp.MinCommitTS)
	}
	l, ok, err := s.newReadReader().loadLock([]byte("a"))
	if err != nil || !ok || l.UseAsyncCommit {
		t.Fatalf("lock = %+v %v %v, want an ordinary lock", l, ok, err)
	}
}

func TestLockCodecAsync(t *testing.T) {
	for _, l := range []Lock{
		{Type: kvrpc.OpPut, Primary: []byte("p"), StartTS: 5, TTL: 3, MinCommitTS: 9, ShortValue: []byte("v"), HasShortValue: true},
		{Type: kvrpc.OpDel, Primary: []byte("p"), StartTS: 5, UseAsyncCommit: true, MinCommitTS: 9},
		{Type: kvrpc.OpPut, Primary: []byte("p"), StartTS: 5, UseAsyncCommit: true, Secondaries: [][]byte{[]byte("a"), []byte(""), []byte("ccc")},
			ShortValue: []byte("v"), HasShortValue: true},
	} {
		got, err := parseLock(l.appendTo(nil))
		must(t, err)
		if got.Type != l.Type || got.UseAsyncCommit != l.UseAsyncCommit || len(got.Secondaries) != len(l.Secondaries) ||
			string(got.ShortValue) != string(l.ShortValue) || got.MinCommitTS != l.MinCommitTS {
			t.Fatalf("round trip: %+v -> %+v", l, got)
		}
		for i := range l.Secondaries {
			if string(got.Secondaries[i]) != string(l.Secondaries[i]) {
				t.Fatalf("secondary %d: %q -> %q", i, l.Secondaries[i], got.Secondaries[i])
			}
		}
	}
	b := (&Lock{Type: kvrpc.OpPut, UseAsyncCommit: true, Secondaries: [][]byte{[]byte("abc")}}).appendTo(nil)
	if _, err := parseLock(b[:len(b)-3]); !errors.Is(err, errCorrupt) {
		t.Fatalf("truncated async lock parsed: %v", err)
	}
}

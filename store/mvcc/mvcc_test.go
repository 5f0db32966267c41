package mvcc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/shoaldb/shoal/store/kvrpc"
	"github.com/shoaldb/shoal/store/pebbleengine"
)

var ctx = context.Background()

func newTestStore(t *testing.T) *Store {
	t.Helper()
	e, err := pebbleengine.Open(t.TempDir(), pebbleengine.Options{Split: SplitKey, SplitName: SplitName, BlockCacheSize: 8 << 20, MemTableSize: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return New(e, Options{NoSync: true})
}

// ts builds a timestamp whose physical part is "now" so TTLs behave.
func tsNow(logical uint64) uint64 { return uint64(time.Now().UnixMilli())<<18 | logical }

func put(k, v string) kvrpc.Mutation {
	return kvrpc.Mutation{Op: kvrpc.OpPut, Key: []byte(k), Value: []byte(v)}
}

func prewrite(t *testing.T, s *Store, primary string, start uint64, ms ...kvrpc.Mutation) error {
	t.Helper()
	_, err := s.Prewrite(ctx, kvrpc.PrewriteRequest{Mutations: ms, PrimaryLock: []byte(primary), StartTS: start, LockTTL: 3000})
	return err
}

func commit(t *testing.T, s *Store, start, commitTS uint64, keys ...string) error {
	t.Helper()
	var ks [][]byte
	for _, k := range keys {
		ks = append(ks, []byte(k))
	}
	_, err := s.Commit(ctx, kvrpc.CommitRequest{Keys: ks, StartTS: start, CommitTS: commitTS})
	return err
}

func mustGet(t *testing.T, s *Store, k string, ts uint64) string {
	t.Helper()
	r, err := s.Get(ctx, kvrpc.GetRequest{Key: []byte(k), Version: ts})
	if err != nil {
		t.Fatalf("get %s@%d: %v", k, ts, err)
	}
	if r.NotFound {
		return "<nil>"
	}
	return string(r.Value)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestKeyEncoding(t *testing.T) {
	keys := [][]byte{{}, {0}, {0, 0}, []byte("a"), []byte("a\x00"), []byte("a\xff"), []byte("abcdefgh"), []byte("abcdefgh\x00"), []byte("abcdefghi"), []byte("b")}
	sort.Slice(keys, func(i, j int) bool { return bytes.Compare(keys[i], keys[j]) < 0 })
	var encs [][]byte
	for _, k := range keys {
		e := appendEncodedKey(nil, k)
		d, rest, err := decodeKey(nil, e)
		if err != nil || !bytes.Equal(d, k) || len(rest) != 0 {
			t.Fatalf("roundtrip %q: %q %v", k, d, err)
		}
		encs = append(encs, versionedKey(nil, PrefixWrite, k, 5))
	}
	if !sort.SliceIsSorted(encs, func(i, j int) bool { return bytes.Compare(encs[i], encs[j]) < 0 }) {
		t.Fatal("encoding does not preserve order")
	}
	// Newer versions sort first.
	if bytes.Compare(versionedKey(nil, PrefixWrite, []byte("a"), 10), versionedKey(nil, PrefixWrite, []byte("a"), 5)) >= 0 {
		t.Fatal("version order")
	}
}

func TestPrewriteCommitGet(t *testing.T) {
	s := newTestStore(t)
	big := string(bytes.Repeat([]byte("x"), 1000))
	must(t, prewrite(t, s, "a", 10, put("a", "1"), put("b", big), kvrpc.Mutation{Op: kvrpc.OpDel, Key: []byte("c")}))
	// Reader below the lock is not blocked; above it is.
	if got := mustGet(t, s, "a", 9); got != "<nil>" {
		t.Fatal(got)
	}
	_, err := s.Get(ctx, kvrpc.GetRequest{Key: []byte("a"), Version: 11})
	var le *kvrpc.KeyIsLockedError
	if !errors.As(err, &le) || le.Locks[0].LockTS != 10 || string(le.Locks[0].Primary) != "a" {
		t.Fatalf("want locked, got %v", err)
	}
	must(t, commit(t, s, 10, 20, "a", "b", "c"))
	must(t, commit(t, s, 10, 20, "a", "b", "c")) // idempotent
	if got := mustGet(t, s, "a", 19); got != "<nil>" {
		t.Fatal(got)
	}
	if got := mustGet(t, s, "a", 20); got != "1" {
		t.Fatal(got)
	}
	if got := mustGet(t, s, "b", 25); got != big {
		t.Fatal("big value")
	}
	// Overwrite and delete.
	must(t, prewrite(t, s, "a", 30, put("a", "2"), kvrpc.Mutation{Op: kvrpc.OpDel, Key: []byte("b")}))
	must(t, commit(t, s, 30, 40, "a", "b"))
	if mustGet(t, s, "a", 35) != "1" || mustGet(t, s, "a", 40) != "2" || mustGet(t, s, "b", 40) != "<nil>" || mustGet(t, s, "b", 39) != big {
		t.Fatal("versions")
	}
	r, err := s.BatchGet(ctx, kvrpc.BatchGetRequest{Keys: [][]byte{[]byte("a"), []byte("b"), []byte("z")}, Version: 39})
	must(t, err)
	if len(r.Pairs) != 2 {
		t.Fatalf("batchget %v", r.Pairs)
	}
}

func TestWriteConflictAndLocked(t *testing.T) {
	s := newTestStore(t)
	must(t, prewrite(t, s, "k", 10, put("k", "1")))
	// Another txn meets the lock.
	err := prewrite(t, s, "k", 12, put("k", "2"))
	var le *kvrpc.KeyIsLockedError
	if !errors.As(err, &le) {
		t.Fatalf("want locked: %v", err)
	}
	must(t, commit(t, s, 10, 15, "k"))
	// Started before the commit: conflict.
	err = prewrite(t, s, "k", 12, put("k", "2"))
	var wc *kvrpc.WriteConflictError
	if !errors.As(err, &wc) || wc.ConflictCommitTS != 15 || wc.ConflictStartTS != 10 {
		t.Fatalf("want conflict: %v", err)
	}
	// Started after: fine.
	must(t, prewrite(t, s, "k", 16, put("k", "3")))
	// Insert on an existing key.
	err = prewrite(t, s, "j", 17, kvrpc.Mutation{Op: kvrpc.OpInsert, Key: []byte("k"), Value: []byte("x")})
	if !errors.As(err, &le) { // still locked by 16
		t.Fatalf("want locked: %v", err)
	}
	must(t, commit(t, s, 16, 18, "k"))
	err = prewrite(t, s, "j", 19, kvrpc.Mutation{Op: kvrpc.OpInsert, Key: []byte("k"), Value: []byte("x")})
	var ke *kvrpc.KeyExistsError
	if !errors.As(err, &ke) {
		t.Fatalf("want exists: %v", err)
	}
	must(t, prewrite(t, s, "j", 19, kvrpc.Mutation{Op: kvrpc.OpInsert, Key: []byte("j"), Value: []byte("x")}))
}

func TestRollback(t *testing.T) {
	s := newTestStore(t)
	must(t, prewrite(t, s, "a", 10, put("a", "1"), put("b", string(bytes.Repeat([]byte("y"), 300)))))
	_, err := s.BatchRollback(ctx, kvrpc.BatchRollbackRequest{Keys: [][]byte{[]byte("a"), []byte("b")}, StartTS: 10})
	must(t, err)
	if mustGet(t, s, "a", 100) != "<nil>" || mustGet(t, s, "b", 100) != "<nil>" {
		t.Fatal("rolled back data visible")
	}
	// Commit after rollback fails.
	err = commit(t, s, 10, 20, "a")
	var nf *kvrpc.TxnLockNotFoundError
	if !errors.As(err, &nf) {
		t.Fatalf("want lock not found: %v", err)
	}
	// A late prewrite of the rolled back txn fails.
	err = prewrite(t, s, "a", 10, put("a", "1"))
	var rb *kvrpc.TxnRolledBackError
	if !errors.As(err, &rb) {
		t.Fatalf("want rolled back: %v", err)
	}
	// Rollback of a committed txn fails.
	must(t, prewrite(t, s, "c", 30, put("c", "1")))
	must(t, commit(t, s, 30, 31, "c"))
	_, err = s.BatchRollback(ctx, kvrpc.BatchRollbackRequest{Keys: [][]byte{[]byte("c")}, StartTS: 30})
	var ce *kvrpc.TxnCommittedError
	if !errors.As(err, &ce) {
		t.Fatalf("want committed: %v", err)
	}
	// Rollback of an unknown txn leaves a protecting record.
	_, err = s.BatchRollback(ctx, kvrpc.BatchRollbackRequest{Keys: [][]byte{[]byte("d")}, StartTS: 40})
	must(t, err)
	if err := prewrite(t, s, "d", 40, put("d", "1")); !errors.As(err, &rb) {
		t.Fatalf("want rolled back: %v", err)
	}
}

func TestOverlappedRollback(t *testing.T) {
	s := newTestStore(t)
	// Txn 10 commits k at 20; txn 20 (start_ts equals that commit ts) rolls back on k.
	must(t, prewrite(t, s, "k", 10, put("k", "v")))
	must(t, commit(t, s, 10, 20, "k"))
	_, err := s.BatchRollback(ctx, kvrpc.BatchRollbackRequest{Keys: [][]byte{[]byte("k")}, StartTS: 20})
	must(t, err)
	if mustGet(t, s, "k", 20) != "v" {
		t.Fatal("commit record lost to a rollback")
	}
	var rb *kvrpc.TxnRolledBackError
	if err := prewrite(t, s, "k", 20, put("k", "w")); !errors.As(err, &rb) {
		t.Fatalf("want rolled back: %v", err)
	}
}

func TestCheckTxnStatusAndResolve(t *testing.T) {
	s := newTestStore(t)
	start := tsNow(0)
	_, err := s.Prewrite(ctx, kvrpc.PrewriteRequest{Mutations: []kvrpc.Mutation{put("p", "1"), put("s", "2")},
		PrimaryLock: []byte("p"), StartTS: start, LockTTL: 100})
	must(t, err)
	st, err := s.CheckTxnStatus(ctx, kvrpc.CheckTxnStatusRequest{PrimaryKey: []byte("p"), LockTS: start, CurrentTS: start + 1})
	must(t, err)
	if st.LockTTL != 100 {
		t.Fatalf("want alive: %+v", st)
	}
	hb, err := s.TxnHeartBeat(ctx, kvrpc.TxnHeartBeatRequest{PrimaryLock: []byte("p"), StartTS: start, AdviseLockTTL: 200})
	must(t, err)
	if hb.LockTTL != 200 {
		t.Fatal(hb)
	}
	later := start + 300<<18
	st, err = s.CheckTxnStatus(ctx, kvrpc.CheckTxnStatusRequest{PrimaryKey: []byte("p"), LockTS: start, CurrentTS: later})
	must(t, err)
	if st.Action != kvrpc.TTLExpireRollback || st.LockTTL != 0 || st.CommitTS != 0 {
		t.Fatalf("want expired rollback: %+v", st)
	}
	// The secondary is still locked; resolve it as rolled back.
	_, err = s.Get(ctx, kvrpc.GetRequest{Key: []byte("s"), Version: later})
	var le *kvrpc.KeyIsLockedError
	if !errors.As(err, &le) {
		t.Fatal(err)
	}
	_, err = s.ResolveLock(ctx, kvrpc.ResolveLockRequest{StartTS: start})
	must(t, err)
	if mustGet(t, s, "s", later) != "<nil>" {
		t.Fatal("resolved")
	}
	// Committed primary: status says committed, resolve commits secondary.
	s2 := start + 1000<<18
	must(t, prewrite(t, s, "p", s2, put("p", "a"), put("s", "b")))
	must(t, commit(t, s, s2, s2+5, "p"))
	st, err = s.CheckTxnStatus(ctx, kvrpc.CheckTxnStatusRequest{PrimaryKey: []byte("p"), LockTS: s2, CurrentTS: s2 + 10})
	must(t, err)
	if st.CommitTS != s2+5 {
		t.Fatalf("want committed: %+v", st)
	}
	_, err = s.ResolveLock(ctx, kvrpc.ResolveLockRequest{StartTS: s2, CommitTS: s2 + 5, Keys: [][]byte{[]byte("s")}})
	must(t, err)
	if mustGet(t, s, "s", s2+5) != "b" {
		t.Fatal("secondary not committed")
	}
	// Unknown txn with RollbackIfNotExist leaves a rollback record.
	st, err = s.CheckTxnStatus(ctx, kvrpc.CheckTxnStatusRequest{PrimaryKey: []byte("q"), LockTS: 7, CurrentTS: later, RollbackIfNotExist: true})
	must(t, err)
	if st.Action != kvrpc.LockNotExistRollback {
		t.Fatal(st)
	}
}

func TestScan(t *testing.T) {
	s := newTestStore(t)
	var ms []kvrpc.Mutation
	for i := 0; i < 100; i++ {
		ms = append(ms, put(fmt.Sprintf("k%03d", i), fmt.Sprint(i)))
	}
	// Keys that share prefixes must not interleave.
	ms = append(ms, put("k050\x00", "x"), put("k050\xff", "y"))
	must(t, prewrite(t, s, "k000", 10, ms...))
	var keys [][]byte
	for _, m := range ms {
		keys = append(keys, m.Key)
	}
	_, err := s.Commit(ctx, kvrpc.CommitRequest{Keys: keys, StartTS: 10, CommitTS: 11})
	must(t, err)
	must(t, prewrite(t, s, "k010", 12, kvrpc.Mutation{Op: kvrpc.OpDel, Key: []byte("k010")}))
	must(t, commit(t, s, 12, 13, "k010"))

	r, err := s.Scan(ctx, kvrpc.ScanRequest{StartKey: []byte("k005"), EndKey: []byte("k020"), Version: 20})
	must(t, err)
	if len(r.Pairs) != 14 || string(r.Pairs[0].Key) != "k005" || string(r.Pairs[13].Key) != "k019" {
		t.Fatalf("forward: %d %q", len(r.Pairs), r.Pairs)
	}
	r, err = s.Scan(ctx, kvrpc.ScanRequest{StartKey: []byte("k005"), EndKey: []byte("k020"), Version: 20, Reverse: true, Limit: 3})
	must(t, err)
	if len(r.Pairs) != 3 || string(r.Pairs[0].Key) != "k019" || string(r.Pairs[2].Key) != "k017" {
		t.Fatalf("reverse: %q", r.Pairs)
	}
	r, err = s.Scan(ctx, kvrpc.ScanRequest{StartKey: []byte("k050"), EndKey: []byte("k051"), Version: 20})
	must(t, err)
	if len(r.Pairs) != 3 || string(r.Pairs[1].Key) != "k050\x00" || string(r.Pairs[2].Value) != "y" {
		t.Fatalf("prefix keys: %q", r.Pairs)
	}
	r, err = s.Scan(ctx, kvrpc.ScanRequest{Version: 20, Reverse: true})
	must(t, err)
	if len(r.Pairs) != 101 || string(r.Pairs[0].Key) != "k099" {
		t.Fatalf("full reverse: %d", len(r.Pairs))
	}
	// A lock in range blocks at read ts >= lock ts; a pessimistic lock does not.
	must(t, prewrite(t, s, "k015", 30, put("k015", "new")))
	_, err = s.PessimisticLock(ctx, kvrpc.PessimisticLockRequest{Keys: []kvrpc.PessimisticLockKey{{Key: []byte("k012")}},
		PrimaryLock: []byte("k012"), StartTS: 31, ForUpdateTS: 31, LockTTL: 3000})
	must(t, err)
	r, err = s.Scan(ctx, kvrpc.ScanRequest{StartKey: []byte("k010"), EndKey: []byte("k020"), Version: 40})
	var le *kvrpc.KeyIsLockedError
	if !errors.As(err, &le) || string(le.Locks[0].Key) != "k015" || len(r.Pairs) != 4 {
		t.Fatalf("want locked at k015 after 4 pairs: %v %q", err, r.Pairs)
	}
	r, err = s.Scan(ctx, kvrpc.ScanRequest{StartKey: []byte("k010"), EndKey: []byte("k020"), Version: 40, Reverse: true})
	if !errors.As(err, &le) || string(le.Locks[0].Key) != "k015" || len(r.Pairs) != 4 || string(r.Pairs[0].Key) != "k019" {
		t.Fatalf("reverse: want locked at k015 after 4 pairs: %v %q", err, r.Pairs)
	}
	// A lock on a key with no committed version, past every write.
	must(t, prewrite(t, s, "z", 32, put("z", "1")))
	r, err = s.Scan(ctx, kvrpc.ScanRequest{StartKey: []byte("k098"), Version: 40, Reverse: true})
	if !errors.As(err, &le) || string(le.Locks[0].Key) != "z" || len(r.Pairs) != 0 {
		t.Fatalf("reverse from a lone lock: %v %q", err, r.Pairs)
	}
	r, err = s.Scan(ctx, kvrpc.ScanRequest{StartKey: []byte("k098"), Version: 31})
	must(t, err)
	if len(r.Pairs) != 2 {
		t.Fatalf("lock above read ts: %q", r.Pairs)
	}
	r, err = s.Scan(ctx, kvrpc.ScanRequest{StartKey: []byte("k010"), EndKey: []byte("k020"), Version: 29})
	must(t, err)
	if len(r.Pairs) != 9 {
		t.Fatal(len(r.Pairs))
	}
}

func TestRandomizedAgainstModel(t *testing.T) {
	s := newTestStore(t)
	rng := rand.New(rand.NewSource(1))
	model := map[string][]struct {
		ts uint64
		v  string
	}{}
	ts := uint64(10)
	for i := 0; i < 300; i++ {
		k := fmt.Sprintf("k%d", rng.Intn(20))
		ts += 2
		start := ts
		var m kvrpc.Mutation
		var v string
		if rng.Intn(4) == 0 {
			m = kvrpc.Mutation{Op: kvrpc.OpDel, Key: []byte(k)}
			v = "<nil>"
		} else {
			v = fmt.Sprint(i)
			m = put(k, v)
		}
		must(t, prewrite(t, s, k, start, m))
		ts += 2
		if rng.Intn(5) == 0 {
			_, err := s.BatchRollback(ctx, kvrpc.BatchRollbackRequest{Keys: [][]byte{[]byte(k)}, StartTS: start})
			must(t, err)
			continue
		}
		must(t, commit(t, s, start, ts, k))
		model[k] = append(model[k], struct {
			ts uint64
			v  string
		}{ts, v})
	}
	for j := 0; j < 200; j++ {
		k := fmt.Sprintf("k%d", rng.Intn(20))
		read := uint64(rng.Intn(int(ts + 5)))
		want := "<nil>"
		for _, ver := range model[k] {
			if ver.ts <= read {
				want = ver.v
			}
		}
		if got := mustGet(t, s, k, read); got != want {
			t.Fatalf("%s@%d: got %s want %s", k, read, got, want)
		}
	}
}

// A rollback raises max_ts, so a later 1PC on the key never commits at
// the rolled-back start_ts (putWrite does not look for a rollback there).
func TestOnePCAboveRollback(t *testing.T) {
	s := newTestStore(t)
	mustGet(t, s, "other", 499) // max_ts 499: a 1PC would pick 500
	_, err := s.BatchRollback(ctx, kvrpc.BatchRollbackRequest{Keys: [][]byte{[]byte("k")}, StartTS: 500})
	must(t, err)
	r, err := s.Prewrite(ctx, kvrpc.PrewriteRequest{Mutations: []kvrpc.Mutation{put("k", "v")},
		PrimaryLock: []byte("k"), StartTS: 50, LockTTL: 3000, TryOnePC: true})
	must(t, err)
	if r.OnePCCommitTS <= 500 {
		t.Fatalf("1PC commit ts %d not above the rollback at 500", r.OnePCCommitTS)
	}
	st, err := s.CheckTxnStatus(ctx, kvrpc.CheckTxnStatusRequest{PrimaryKey: []byte("k"), LockTS: 500, CurrentTS: 600})
	must(t, err)
	if st.LockTTL != 0 || st.CommitTS != 0 {
		t.Fatalf("txn 500 should stay rolled back: %+v", st)
	}
	if mustGet(t, s, "k", r.OnePCCommitTS) != "v" {
		t.Fatal("1PC value")
	}
}

func TestOnePC(t *testing.T) {
	s := newTestStore(t)
	// A read at 100 pushes max_ts; the 1PC must commit above it.
	mustGet(t, s, "x", 100)
	r, err := s.Prewrite(ctx, kvrpc.PrewriteRequest{Mutations: []kvrpc.Mutation{put("x", "1"), put("y", "2")},
		PrimaryLock: []byte("x"), StartTS: 50, LockTTL: 3000, TryOnePC: true})
	must(t, err)
	if r.OnePCCommitTS <= 100 {
		t.Fatalf("1PC commit ts %d not above max read ts", r.OnePCCommitTS)
	}
	if mustGet(t, s, "x", 100) != "<nil>" || mustGet(t, s, "y", r.OnePCCommitTS) != "2" {
		t.Fatal("1PC visibility")
	}
	locks, err := s.ScanLocks(0)
	must(t, err)
	if len(locks) != 0 {
		t.Fatal("1PC left locks")
	}
	// 1PC conflicts like prewrite.
	_, err = s.Prewrite(ctx, kvrpc.PrewriteRequest{Mutations: []kvrpc.Mutation{put("x", "3")},
		PrimaryLock: []byte("x"), StartTS: 60, LockTTL: 3000, TryOnePC: true})
	var wc *kvrpc.WriteConflictError
	if !errors.As(err, &wc) {
		t.Fatal(err)
	}
}

// TestOnePCReadRace hammers concurrent readers against 1PC writers: a
// reader at read_ts that later sees a commit_ts <= read_ts for a value it
// missed would break snapshot isolation.
func TestOnePCReadRace(t *testing.T) {
	s := newTestStore(t)
	var clock struct {
		sync.Mutex
		ts uint64
	}
	next := func() uint64 {
		clock.Lock()
		defer clock.Unlock()
		clock.ts++
		return clock.ts
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	type obs struct {
		readTS uint64
		val    string
	}
	var mu sync.Mutex
	var seen []obs
	commits := map[string]uint64{}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 1; i <= 200; i++ {
			r, err := s.Prewrite(ctx, kvrpc.PrewriteRequest{Mutations: []kvrpc.Mutation{put("k", fmt.Sprint(i))},
				PrimaryLock: []byte("k"), StartTS: next(), LockTTL: 3000, TryOnePC: true})
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			commits[fmt.Sprint(i)] = r.OnePCCommitTS
			mu.Unlock()
		}
		close(stop)
	}()
	for g := 0; g < 2; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				rt := next()
				r, err := s.Get(ctx, kvrpc.GetRequest{Key: []byte("k"), Version: rt})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				seen = append(seen, obs{rt, string(r.Value)})
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	// For each read, the value seen must be the one with the largest
	// commit ts <= read ts.
	for _, o := range seen {
		var best string
		var bestTS uint64
		for v, cts := range commits {
			if cts <= o.readTS && cts > bestTS {
				best, bestTS = v, cts
			}
		}
		if o.val != best {
			t.Fatalf("read@%d saw %q, want %q (commit ts %d)", o.readTS, o.val, best, bestTS)
		}
	}
}

func plock(s *Store, key string, start, forUpdate uint64, wait time.Duration) error {
	_, err := s.PessimisticLock(ctx, kvrpc.PessimisticLockRequest{Keys: []kvrpc.PessimisticLockKey{{Key: []byte(key)}},
		PrimaryLock: []byte(key), StartTS: start, ForUpdateTS: forUpdate, LockTTL: 20000, WaitTimeout: wait})
	return err
}

func TestPessimisticLockWaitAndWake(t *testing.T) {
	s := newTestStore(t)
	start1 := tsNow(1)
	must(t, plock(s, "k", start1, start1, time.Second))
	done := make(chan error, 1)
	start2 := tsNow(2)
	go func() { done <- plock(s, "k", start2, start2+10, 5*time.Second) }()
	time.Sleep(50 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("did not wait: %v", err)
	default:
	}
	// Txn 1 commits k: the waiter wakes and meets a newer write.
	_, err := s.Prewrite(ctx, kvrpc.PrewriteRequest{Mutations: []kvrpc.Mutation{{Op: kvrpc.OpPut, Key: []byte("k"), Value: []byte("1"), IsPessimisticLock: true}},
		PrimaryLock: []byte("k"), StartTS: start1, ForUpdateTS: start1, LockTTL: 3000})
	must(t, err)
	must(t, commit(t, s, start1, start2+20, "k"))
	err = <-done
	var wc *kvrpc.WriteConflictError
	if !errors.As(err, &wc) || wc.ConflictCommitTS != start2+20 {
		t.Fatalf("want write conflict: %v", err)
	}
	// Retrying at a newer for_update_ts succeeds and returns the value.
	r, err := s.PessimisticLock(ctx, kvrpc.PessimisticLockRequest{Keys: []kvrpc.PessimisticLockKey{{Key: []byte("k")}},
		PrimaryLock: []byte("k"), StartTS: start2, ForUpdateTS: start2 + 30, LockTTL: 3000, ReturnValues: true})
	must(t, err)
	if string(r.Values[0]) != "1" {
		t.Fatal(r.Values)
	}
	// Pessimistic rollback releases a waiter, which then gets the lock.
	start3 := tsNow(3)
	go func() { done <- plock(s, "k", start3, start2+40, 5*time.Second) }()
	time.Sleep(30 * time.Millisecond)
	_, err = s.PessimisticRollback(ctx, kvrpc.PessimisticRollbackRequest{Keys: [][]byte{[]byte("k")}, StartTS: start2, ForUpdateTS: start2 + 30})
	must(t, err)
	must(t, <-done)
	// Key exists check.
	if err := plock(s, "k", start3, start2+40, 0); err != nil {
		t.Fatal(err) // re-locking own key is fine
	}
	_, err = s.PessimisticLock(ctx, kvrpc.PessimisticLockRequest{Keys: []kvrpc.PessimisticLockKey{{Key: []byte("k"), ShouldNotExist: true}},
		PrimaryLock: []byte("k"), StartTS: tsNow(4), ForUpdateTS: start2 + 50, LockTTL: 3000})
	var le *kvrpc.KeyIsLockedError
	if !errors.As(err, &le) {
		t.Fatalf("nowait on a held lock: %v", err)
	}
}

func TestPessimisticLockTimeout(t *testing.T) {
	s := newTestStore(t)
	a, b := tsNow(1), tsNow(2)
	must(t, plock(s, "k", a, a, 0))
	begin := time.Now()
	err := plock(s, "k", b, b, 100*time.Millisecond)
	var te *kvrpc.LockWaitTimeoutError
	if !errors.As(err, &te) || te.Lock.LockTS != a {
		t.Fatalf("want timeout: %v", err)
	}
	if time.Since(begin) < 100*time.Millisecond {
		t.Fatal("returned early")
	}
}

func TestDeadlock(t *testing.T) {
	s := newTestStore(t)
	a, b := tsNow(1), tsNow(2)
	must(t, plock(s, "x", a, a, 0))
	must(t, plock(s, "y", b, b, 0))
	done := make(chan error, 1)
	go func() { done <- plock(s, "y", a, a, 5*time.Second) }() // a waits for b
	time.Sleep(50 * time.Millisecond)
	err := plock(s, "x", b, b, 5*time.Second) // b would wait for a
	var de *kvrpc.DeadlockError
	if !errors.As(err, &de) || de.LockTS != a {
		t.Fatalf("want deadlock: %v", err)
	}
	_, err = s.PessimisticRollback(ctx, kvrpc.PessimisticRollbackRequest{Keys: [][]byte{[]byte("y")}, StartTS: b})
	must(t, err)
	must(t, <-done)
}

func TestPessimisticPrewriteNeedsLock(t *testing.T) {
	s := newTestStore(t)
	a := tsNow(1)
	_, err := s.Prewrite(ctx, kvrpc.PrewriteRequest{Mutations: []kvrpc.Mutation{{Op: kvrpc.OpPut, Key: []byte("k"), Value: []byte("1"), IsPessimisticLock: true}},
		PrimaryLock: []byte("k"), StartTS: a, ForUpdateTS: a, LockTTL: 3000})
	var pn *kvrpc.PessimisticLockNotFoundError
	if !errors.As(err, &pn) {
		t.Fatalf("want pessimistic lock not found: %v", err)
	}
	// Lock, then 1PC commit converts the pessimistic lock.
	must(t, plock(s, "k", a, a+1, 0))
	r, err := s.Prewrite(ctx, kvrpc.PrewriteRequest{Mutations: []kvrpc.Mutation{{Op: kvrpc.OpPut, Key: []byte("k"), Value: []byte("1"), IsPessimisticLock: true}},
		PrimaryLock: []byte("k"), StartTS: a, ForUpdateTS: a + 1, LockTTL: 3000, TryOnePC: true})
	must(t, err)
	if r.OnePCCommitTS <= a+1 || mustGet(t, s, "k", r.OnePCCommitTS) != "1" {
		t.Fatal("1PC after pessimistic lock")
	}
	if locks, _ := s.ScanLocks(0); len(locks) != 0 {
		t.Fatal("locks left")
	}
}

package txnkv_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoaldb/shoal/embedded"
	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/kv/txnkv"
	"github.com/shoaldb/shoal/store/kvrpc"
)

var ctx = context.Background()

func open(t testing.TB) *embedded.Embedded {
	t.Helper()
	e, err := embedded.Open(t.TempDir(), embedded.Options{NoSync: true, BlockCacheSize: 8 << 20, MemTableSize: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func begin(t testing.TB, s kv.Storage, mode kv.TxnMode, onePC bool) kv.Txn {
	t.Helper()
	txn, err := s.Begin(ctx, kv.TxnOptions{Mode: mode, Enable1PC: onePC})
	must(t, err)
	return txn
}

func get(t testing.TB, r kv.Retriever, k string) string {
	t.Helper()
	v, err := r.Get(ctx, kv.Key(k))
	if errors.Is(err, kv.ErrNotExist) {
		return "<nil>"
	}
	must(t, err)
	return string(v)
}

func write(t testing.TB, s kv.Storage, onePC bool, kvs ...string) {
	t.Helper()
	txn := begin(t, s, kv.Optimistic, onePC)
	for i := 0; i < len(kvs); i += 2 {
		if kvs[i+1] == "<del>" {
			must(t, txn.Delete(kv.Key(kvs[i])))
		} else {
			must(t, txn.Set(kv.Key(kvs[i]), []byte(kvs[i+1])))
		}
	}
	must(t, txn.Commit(ctx))
}

func TestBasicAndSnapshotIsolation(t *testing.T) {
	for _, onePC := range []bool{false, true} {
		t.Run(fmt.Sprint("1pc=", onePC), func(t *testing.T) {
			s := open(t)
			write(t, s, onePC, "a", "1", "b", "2")
			reader := begin(t, s, kv.Optimistic, onePC)
			if get(t, reader, "a") != "1" {
				t.Fatal("a")
			}
			write(t, s, onePC, "a", "10", "b", "<del>", "c", "3")
			// The reader's view does not change.
			if get(t, reader, "a") != "1" || get(t, reader, "b") != "2" || get(t, reader, "c") != "<nil>" {
				t.Fatal("snapshot changed")
			}
			m, err := reader.BatchGet(ctx, []kv.Key{kv.Key("a"), kv.Key("b"), kv.Key("c")})
			must(t, err)
			if len(m) != 2 || string(m["a"]) != "1" {
				t.Fatal(m)
			}
			// SetReadTS moves the read view; own writes still overlay.
			must(t, reader.Set(kv.Key("a"), []byte("mine")))
			now, _ := s.CurrentTS(ctx)
			reader.SetReadTS(now)
			if get(t, reader, "c") != "3" || get(t, reader, "a") != "mine" || get(t, reader, "b") != "<nil>" {
				t.Fatal("SetReadTS")
			}
			reader.SetReadTS(0)
			if get(t, reader, "c") != "<nil>" {
				t.Fatal("SetReadTS(0)")
			}
			must(t, reader.Rollback())
			fresh := begin(t, s, kv.Optimistic, onePC)
			if get(t, fresh, "a") != "10" || get(t, fresh, "b") != "<nil>" || get(t, fresh, "c") != "3" {
				t.Fatal("fresh view")
			}
			// Empty values are not nil.
			write(t, s, onePC, "e", "")
			if v, err := begin(t, s, kv.Optimistic, false).Get(ctx, kv.Key("e")); err != nil || v == nil || len(v) != 0 {
				t.Fatalf("empty value: %v %v", v, err)
			}
		})
	}
}

func TestOptimisticWriteConflict(t *testing.T) {
	for _, onePC := range []bool{false, true} {
		s := open(t)
		t1 := begin(t, s, kv.Optimistic, onePC)
		t2 := begin(t, s, kv.Optimistic, onePC)
		must(t, t1.Set(kv.Key("k"), []byte("1")))
		must(t, t2.Set(kv.Key("k"), []byte("2")))
		// t2 reads before t1 commits, so t1's commit ts lands above t2's
		// snapshot (a blind write may be ordered before the snapshot by 1PC).
		get(t, t2, "unrelated")
		must(t, t1.Commit(ctx))
		err := t2.Commit(ctx)
		var wc *kv.WriteConflictError
		if !errors.As(err, &wc) || !errors.Is(err, kv.ErrWriteConflict) || wc.ConflictTS != t1.CommitTS() || string(wc.Key) != "k" {
			t.Fatalf("want write conflict, got %v", err)
		}
		// Optimistic LockKeys turns a read into a conflict check.
		t3 := begin(t, s, kv.Optimistic, onePC)
		must(t, t3.LockKeys(ctx, kv.LockOptions{}, kv.Key("k")))
		must(t, t3.Set(kv.Key("other"), []byte("x")))
		write(t, s, onePC, "k", "3")
		if err := t3.Commit(ctx); !errors.Is(err, kv.ErrWriteConflict) {
			t.Fatalf("want conflict on a locked key: %v", err)
		}
		// Insert on an existing key.
		t4 := begin(t, s, kv.Optimistic, onePC)
		must(t, t4.Set(kv.Key("k"), []byte("x")))
		t4.SetPresumeKeyNotExists(kv.Key("k"))
		if err := t4.Commit(ctx); !errors.Is(err, kv.ErrKeyExists) {
			t.Fatalf("want key exists: %v", err)
		}
		// Read-only commits trivially.
		t5 := begin(t, s, kv.Optimistic, onePC)
		get(t, t5, "k")
		must(t, t5.Commit(ctx))
	}
}

func TestPessimisticWaitTimeoutDeadlock(t *testing.T) {
	s := open(t)
	t1 := begin(t, s, kv.Pessimistic, true)
	t2 := begin(t, s, kv.Pessimistic, true)
	must(t, t1.LockKeys(ctx, kv.LockOptions{ForUpdateTS: t1.StartTS(), WaitTimeout: -1}, kv.Key("x")))
	// NOWAIT and a short timeout.
	if err := t2.LockKeys(ctx, kv.LockOptions{ForUpdateTS: t2.StartTS(), WaitTimeout: 0}, kv.Key("x")); !errors.Is(err, kv.ErrLockWaitTimeout) {
		t.Fatalf("nowait: %v", err)
	}
	begin1 := time.Now()
	if err := t2.LockKeys(ctx, kv.LockOptions{ForUpdateTS: t2.StartTS(), WaitTimeout: 100 * time.Millisecond}, kv.Key("x")); !errors.Is(err, kv.ErrLockWaitTimeout) {
		t.Fatalf("timeout: %v", err)
	}
	if time.Since(begin1) < 100*time.Millisecond {
		t.Fatal("timed out early")
	}
	// Wait, then get the lock after t1 commits -> write conflict at the old
	// for_update_ts, success at a new one.
	must(t, t2.LockKeys(ctx, kv.LockOptions{ForUpdateTS: t2.StartTS(), WaitTimeout: -1}, kv.Key("y")))
	done := make(chan error, 1)
	go func() {
		done <- t2.LockKeys(ctx, kv.LockOptions{ForUpdateTS: t2.StartTS(), WaitTimeout: 5 * time.Second}, kv.Key("x"))
	}()
	time.Sleep(50 * time.Millisecond)
	// Deadlock: t1 now waits for y, held by t2 which waits for x.
	err := t1.LockKeys(ctx, kv.LockOptions{ForUpdateTS: t1.StartTS(), WaitTimeout: 5 * time.Second}, kv.Key("y"))
	if !errors.Is(err, kv.ErrDeadlock) {
		t.Fatalf("want deadlock: %v", err)
	}
	must(t, t1.Set(kv.Key("x"), []byte("t1")))
	must(t, t1.Commit(ctx))
	err = <-done
	var wc *kv.WriteConflictError
	if !errors.As(err, &wc) || wc.ConflictTS != t1.CommitTS() {
		t.Fatalf("want write conflict: %v", err)
	}
	fu, _ := s.CurrentTS(ctx)
	must(t, t2.LockKeys(ctx, kv.LockOptions{ForUpdateTS: fu, WaitTimeout: -1}, kv.Key("x")))
	t2.SetReadTS(fu)
	if get(t, t2, "x") != "t1" {
		t.Fatal("current read")
	}
	must(t, t2.Set(kv.Key("x"), []byte("t2")))
	must(t, t2.Commit(ctx))
	if get(t, begin(t, s, kv.Optimistic, false), "x") != "t2" {
		t.Fatal("final")
	}
	// Rollback releases pessimistic locks.
	t3 := begin(t, s, kv.Pessimistic, false)
	must(t, t3.LockKeys(ctx, kv.LockOptions{ForUpdateTS: t3.StartTS(), WaitTimeout: -1}, kv.Key("x"), kv.Key("z")))
	must(t, t3.Rollback())
	t4 := begin(t, s, kv.Pessimistic, false)
	must(t, t4.LockKeys(ctx, kv.LockOptions{ForUpdateTS: t4.StartTS(), WaitTimeout: 0}, kv.Key("x"), kv.Key("z")))
	// Locked-but-unwritten keys are released by commit (2PC here).
	must(t, t4.Commit(ctx))
	t5 := begin(t, s, kv.Pessimistic, false)
	must(t, t5.LockKeys(ctx, kv.LockOptions{ForUpdateTS: t5.StartTS(), WaitTimeout: 0}, kv.Key("x")))
	// Presume-not-exists is checked by LockKeys.
	must(t, t5.Set(kv.Key("x"), []byte("dup")))
	t5.SetPresumeKeyNotExists(kv.Key("x"))
	t6 := begin(t, s, kv.Pessimistic, false)
	must(t, t6.Set(kv.Key("new"), []byte("1")))
	t6.SetPresumeKeyNotExists(kv.Key("new"))
	must(t, t6.LockKeys(ctx, kv.LockOptions{ForUpdateTS: t6.StartTS()}, kv.Key("new")))
	must(t, t6.Set(kv.Key("x"), []byte("1")))
	t6.SetPresumeKeyNotExists(kv.Key("x"))
	must(t, t5.Rollback())
	if err := t6.LockKeys(ctx, kv.LockOptions{ForUpdateTS: t6.StartTS()}, kv.Key("x")); !errors.Is(err, kv.ErrKeyExists) {
		t.Fatalf("want key exists: %v", err)
	}
}

func TestStaging(t *testing.T) {
	s := open(t)
	write(t, s, false, "a", "base")
	txn := begin(t, s, kv.Optimistic, false)
	must(t, txn.Set(kv.Key("k1"), []byte("1")))
	h1 := txn.Staging()
	must(t, txn.Set(kv.Key("k2"), []byte("2")))
	must(t, txn.Set(kv.Key("k1"), []byte("1b")))
	h2 := txn.Staging()
	must(t, txn.Delete(kv.Key("a")))
	must(t, txn.Set(kv.Key("k3"), []byte("3")))
	txn.Release(h2)
	if get(t, txn, "a") != "<nil>" || get(t, txn, "k3") != "3" {
		t.Fatal("released")
	}
	txn.Cleanup(h1)
	if get(t, txn, "k1") != "1" || get(t, txn, "k2") != "<nil>" || get(t, txn, "k3") != "<nil>" || get(t, txn, "a") != "base" {
		t.Fatal("cleanup")
	}
	if txn.Len() != 1 || txn.Size() != 3 {
		t.Fatalf("len %d size %d", txn.Len(), txn.Size())
	}
	it, err := txn.Iter(ctx, nil, nil)
	must(t, err)
	var keys []string
	for ; it.Valid(); must(t, it.Next()) {
		keys = append(keys, string(it.Key()))
	}
	it.Close()
	if fmt.Sprint(keys) != "[a k1]" {
		t.Fatal(keys)
	}
	must(t, txn.Commit(ctx))
}

// A SQL savepoint is a long-lived staging under the statements' own: a
// statement's release keeps its writes for the savepoint to undo, a
// cleanup reopens at the same handle, and a pessimistic lock taken after
// the savepoint stays held and is committed as a lock only.
func TestStagingAsSavepoint(t *testing.T) {
	s := open(t)
	write(t, s, false, "k", "base")
	txn := begin(t, s, kv.Pessimistic, false)
	must(t, txn.Set(kv.Key("a"), []byte("before")))
	sp := txn.Staging()
	stmt := txn.Staging()
	must(t, txn.LockKeys(ctx, kv.LockOptions{ForUpdateTS: txn.StartTS(), WaitTimeout: -1}, kv.Key("k")))
	must(t, txn.Set(kv.Key("k"), []byte("changed")))
	must(t, txn.Delete(kv.Key("a")))
	txn.Release(stmt)
	inner := txn.Staging() // a later savepoint
	must(t, txn.Set(kv.Key("b"), []byte("later")))
	txn.Cleanup(sp)
	if get(t, txn, "k") != "base" || get(t, txn, "a") != "before" || get(t, txn, "b") != "<nil>" {
		t.Fatal("rollback to savepoint kept later writes")
	}
	if again := txn.Staging(); again != sp || inner <= sp {
		t.Fatalf("savepoint reopened at %d, was %d (inner %d)", again, sp, inner)
	}
	other := begin(t, s, kv.Pessimistic, false)
	if err := other.LockKeys(ctx, kv.LockOptions{ForUpdateTS: other.StartTS(), WaitTimeout: 0}, kv.Key("k")); !errors.Is(err, kv.ErrLockWaitTimeout) {
		t.Fatalf("lock taken after the savepoint was released: %v", err)
	}
	must(t, txn.Commit(ctx))
	must(t, other.Rollback())
	r := begin(t, s, kv.Optimistic, false)
	if get(t, r, "k") != "base" || get(t, r, "a") != "before" || get(t, r, "b") != "<nil>" {
		t.Fatal("commit after rollback to savepoint")
	}
	must(t, r.Rollback())
	// The lock ended with the commit.
	after := begin(t, s, kv.Pessimistic, false)
	must(t, after.LockKeys(ctx, kv.LockOptions{ForUpdateTS: after.StartTS(), WaitTimeout: 0}, kv.Key("k")))
	must(t, after.Rollback())
}

func TestIterators(t *testing.T) {
	s := open(t)
	const n = 1000
	txn := begin(t, s, kv.Optimistic, false)
	for i := 0; i < n; i += 2 { // even keys committed
		must(t, txn.Set(kv.Key(fmt.Sprintf("k%05d", i)), []byte(fmt.Sprint(i))))
	}
	must(t, txn.Commit(ctx))
	txn = begin(t, s, kv.Optimistic, false)
	model := map[int]bool{}
	for i := 0; i < n; i += 2 {
		model[i] = true
	}
	rng := rand.New(rand.NewSource(2))
	for j := 0; j < 300; j++ {
		i := rng.Intn(n)
		if rng.Intn(3) == 0 {
			must(t, txn.Delete(kv.Key(fmt.Sprintf("k%05d", i))))
			delete(model, i)
		} else {
			must(t, txn.Set(kv.Key(fmt.Sprintf("k%05d", i)), []byte(fmt.Sprint(i))))
			model[i] = true
		}
	}
	check := func(r kv.Retriever, lo, hi int, reverse bool) {
		t.Helper()
		var want []string
		for i := 0; i < n; i++ {
			if model[i] && i >= lo && i < hi {
				want = append(want, fmt.Sprintf("k%05d", i))
			}
		}
		if reverse {
			for a, b := 0, len(want)-1; a < b; a, b = a+1, b-1 {
				want[a], want[b] = want[b], want[a]
			}
		}
		lower, upper := kv.Key(fmt.Sprintf("k%05d", lo)), kv.Key(fmt.Sprintf("k%05d", hi))
		var it kv.Iterator
		var err error
		if reverse {
			it, err = r.IterReverse(ctx, lower, upper)
		} else {
			it, err = r.Iter(ctx, lower, upper)
		}
		must(t, err)
		defer it.Close()
		var got []string
		for ; it.Valid(); must(t, it.Next()) {
			got = append(got, string(it.Key()))
			if string(it.Value()) != fmt.Sprint(atoiKey(string(it.Key()))) {
				t.Fatalf("value of %s: %s", it.Key(), it.Value())
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("range [%d,%d) reverse=%v: got %d keys, want %d", lo, hi, reverse, len(got), len(want))
		}
	}
	for _, rg := range [][2]int{{0, n}, {10, 700}, {333, 334}, {500, 500}} {
		check(txn, rg[0], rg[1], false)
		check(txn, rg[0], rg[1], true)
	}
	must(t, txn.Commit(ctx))
	snap := s.GetSnapshot(txn.CommitTS())
	check(snap, 0, n, false)
	check(snap, 0, n, true)
}

func atoiKey(k string) int {
	var i int
	fmt.Sscanf(k, "k%05d", &i)
	return i
}

func TestBankTransfer(t *testing.T) {
	s := open(t)
	const accounts, initial = 10, 100
	txn := begin(t, s, kv.Optimistic, true)
	for i := 0; i < accounts; i++ {
		must(t, txn.Set(kv.Key(fmt.Sprintf("acct%02d", i)), []byte(fmt.Sprint(initial))))
	}
	must(t, txn.Commit(ctx))
	var committed, conflicts atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(w)))
			mode := kv.Pessimistic
			if w%2 == 1 {
				mode = kv.Optimistic
			}
			for i := 0; i < 60; i++ {
				a, b := rng.Intn(accounts), rng.Intn(accounts)
				if a == b {
					continue
				}
				if err := transfer(s, mode, w%4 < 2, a, b, rng.Intn(20)); err != nil {
					if errors.Is(err, kv.ErrWriteConflict) || errors.Is(err, kv.ErrDeadlock) || errors.Is(err, kv.ErrLockWaitTimeout) {
						conflicts.Add(1)
						continue
					}
					t.Error(err)
					return
				}
				committed.Add(1)
			}
		}(w)
	}
	// A concurrent auditor sees a constant total in every snapshot.
	stop := make(chan struct{})
	var auditErr atomic.Value
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if tot, err := total(s); err != nil || tot != accounts*initial {
				auditErr.Store(fmt.Sprintf("audit: total %d err %v", tot, err))
				return
			}
		}
	}()
	wg.Wait()
	close(stop)
	if v := auditErr.Load(); v != nil {
		t.Fatal(v)
	}
	tot, err := total(s)
	must(t, err)
	if tot != accounts*initial {
		t.Fatalf("total %d", tot)
	}
	if committed.Load() == 0 {
		t.Fatal("nothing committed")
	}
	t.Logf("committed %d, conflicts %d", committed.Load(), conflicts.Load())
}

func transfer(s kv.Storage, mode kv.TxnMode, onePC bool, from, to, amount int) error {
	txn, err := s.Begin(ctx, kv.TxnOptions{Mode: mode, Enable1PC: onePC})
	if err != nil {
		return err
	}
	defer func() {
		if txn.Valid() {
			txn.Rollback()
		}
	}()
	ka, kb := kv.Key(fmt.Sprintf("acct%02d", from)), kv.Key(fmt.Sprintf("acct%02d", to))
	if mode == kv.Pessimistic {
		fu, err := s.CurrentTS(ctx)
		if err != nil {
			return err
		}
		if err := txn.LockKeys(ctx, kv.LockOptions{ForUpdateTS: fu, WaitTimeout: 2 * time.Second}, ka, kb); err != nil {
			return err
		}
		txn.SetReadTS(fu)
	}
	m, err := txn.BatchGet(ctx, []kv.Key{ka, kb})
	if err != nil {
		return err
	}
	var va, vb int
	fmt.Sscan(string(m[string(ka)]), &va)
	fmt.Sscan(string(m[string(kb)]), &vb)
	if va < amount {
		amount = va
	}
	txn.Set(ka, []byte(fmt.Sprint(va-amount)))
	txn.Set(kb, []byte(fmt.Sprint(vb+amount)))
	return txn.Commit(ctx)
}

func total(s kv.Storage) (int, error) {
	ts, err := s.CurrentTS(ctx)
	if err != nil {
		return 0, err
	}
	it, err := s.GetSnapshot(ts).Iter(ctx, kv.Key("acct"), kv.Key("acct").PrefixNext())
	if err != nil {
		return 0, err
	}
	defer it.Close()
	sum := 0
	for ; it.Valid(); it.Next() {
		var v int
		fmt.Sscan(string(it.Value()), &v)
		sum += v
	}
	return sum, nil
}

// TestResolveCrashedTxn leaves the locks of a "crashed" transaction (a
// prewrite that never commits, with a short TTL); readers resolve them.
func TestResolveCrashedTxn(t *testing.T) {
	s := open(t)
	write(t, s, false, "p", "old", "s", "old")
	start, _ := s.CurrentTS(ctx)
	_, err := s.Service.KvPrewrite(ctx, kvrpc.PrewriteRequest{
		Mutations:   []kvrpc.Mutation{{Op: kvrpc.OpPut, Key: []byte("p"), Value: []byte("new")}, {Op: kvrpc.OpPut, Key: []byte("s"), Value: []byte("new")}},
		PrimaryLock: []byte("p"), StartTS: start, LockTTL: 50,
	})
	must(t, err)
	r := begin(t, s, kv.Optimistic, false)
	begin1 := time.Now()
	if get(t, r, "s") != "old" {
		t.Fatal("rolled back value visible")
	}
	if time.Since(begin1) < 20*time.Millisecond {
		t.Log("resolved before the TTL ran out?")
	}
	// Committed primary, stale secondary: the reader commits it.
	start2, _ := s.CurrentTS(ctx)
	_, err = s.Service.KvPrewrite(ctx, kvrpc.PrewriteRequest{
		Mutations:   []kvrpc.Mutation{{Op: kvrpc.OpPut, Key: []byte("p"), Value: []byte("v2")}, {Op: kvrpc.OpPut, Key: []byte("s"), Value: []byte("v2")}},
		PrimaryLock: []byte("p"), StartTS: start2, LockTTL: 60000,
	})
	must(t, err)
	cts, _ := s.CurrentTS(ctx)
	_, err = s.Service.KvCommit(ctx, kvrpc.CommitRequest{Keys: [][]byte{[]byte("p")}, StartTS: start2, CommitTS: cts})
	must(t, err)
	if get(t, begin(t, s, kv.Optimistic, false), "s") != "v2" {
		t.Fatal("secondary not resolved as committed")
	}
	// A pessimistic waiter on a dead holder resolves it once its TTL ends.
	start3, _ := s.CurrentTS(ctx)
	_, err = s.Service.KvPessimisticLock(ctx, kvrpc.PessimisticLockRequest{Keys: []kvrpc.PessimisticLockKey{{Key: []byte("p")}},
		PrimaryLock: []byte("p"), StartTS: start3, ForUpdateTS: start3, LockTTL: 100})
	must(t, err)
	w := begin(t, s, kv.Pessimistic, false)
	must(t, w.LockKeys(ctx, kv.LockOptions{ForUpdateTS: w.StartTS(), WaitTimeout: 5 * time.Second}, kv.Key("p")))
	must(t, w.Rollback())
}

func TestGetAllocs(t *testing.T) {
	s := open(t)
	write(t, s, false, "k", "v")
	txn := begin(t, s, kv.Optimistic, false)
	key := kv.Key("k")
	n := testing.AllocsPerRun(200, func() {
		if _, err := txn.Get(ctx, key); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("allocs per point Get: %v", n)
	if n > 12 {
		t.Fatalf("point Get allocates %v times", n)
	}
}

func BenchmarkPointGet(b *testing.B) {
	s := open(b)
	write(b, s, false, "k", "v")
	txn := begin(b, s, kv.Optimistic, false)
	key := kv.Key("k")
	b.ReportAllocs()
	for b.Loop() {
		txn.Get(ctx, key)
	}
}

func BenchmarkParallel1PCWrite(b *testing.B) {
	s := open(b)
	var n atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			txn, _ := s.Begin(ctx, kv.TxnOptions{Mode: kv.Pessimistic, Enable1PC: true})
			k := kv.Key(fmt.Sprintf("row%08d", i%1000))
			if err := txn.LockKeys(ctx, kv.LockOptions{ForUpdateTS: txn.StartTS(), WaitTimeout: -1}, k); err != nil {
				txn.Rollback()
				continue
			}
			txn.Set(k, []byte("value"))
			if err := txn.Commit(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// scanCounter counts KvScan calls of the client it wraps.
type scanCounter struct {
	kvrpc.Client
	scans atomic.Int64
}

func (c *scanCounter) KvScan(ctx context.Context, req kvrpc.ScanRequest) (kvrpc.ScanResponse, error) {
	c.scans.Add(1)
	return c.Client.KvScan(ctx, req)
}

// TestIterSizedOneFetch: a range of known size is read in one scan call
// (a round trip in a cluster), both ways, where a plain iterator grows its
// batches from a small first one.
func TestIterSizedOneFetch(t *testing.T) {
	e := open(t)
	var kvs []string
	for i := 0; i < 300; i++ {
		kvs = append(kvs, fmt.Sprintf("k%04d", i), "v")
	}
	write(t, e, true, kvs...)
	counter := &scanCounter{Client: e.Service}
	s := txnkv.New(e.PD, counter, txnkv.Options{})
	ts, err := s.CurrentTS(ctx)
	must(t, err)
	count := func(it kv.Iterator, err error) int {
		must(t, err)
		defer it.Close()
		n := 0
		for ; it.Valid(); n++ {
			must(t, it.Next())
		}
		return n
	}
	for _, reverse := range []bool{false, true} {
		counter.scans.Store(0)
		n := count(kv.IterSized(ctx, s.GetSnapshot(ts), kv.Key("k0100"), kv.Key("k0200"), reverse, 100))
		if n != 100 || counter.scans.Load() != 1 {
			t.Fatalf("reverse=%v: sized iterator read %d keys in %d scans, want 100 in 1", reverse, n, counter.scans.Load())
		}
		counter.scans.Store(0)
		if n := count(kv.IterSized(ctx, s.GetSnapshot(ts), kv.Key("k0100"), kv.Key("k0200"), reverse, 0)); n != 100 || counter.scans.Load() < 2 {
			t.Fatalf("reverse=%v: plain iterator read %d keys in %d scans", reverse, n, counter.scans.Load())
		}
	}
	// An underestimate still reads everything.
	if n := count(kv.IterSized(ctx, s.GetSnapshot(ts), kv.Key("k"), kv.Key("l"), false, 10)); n != 300 {
		t.Fatalf("undersized iterator read %d keys, want 300", n)
	}
}

// getCounter counts KvGet and KvBatchGet calls of the client it wraps.
type getCounter struct {
	kvrpc.Client
	gets, batchGets atomic.Int64
}

func (c *getCounter) KvGet(ctx context.Context, req kvrpc.GetRequest) (kvrpc.GetResponse, error) {
	c.gets.Add(1)
	return c.Client.KvGet(ctx, req)
}

func (c *getCounter) KvBatchGet(ctx context.Context, req kvrpc.BatchGetRequest) (kvrpc.BatchGetResponse, error) {
	c.batchGets.Add(1)
	return c.Client.KvBatchGet(ctx, req)
}

// TestSnapshotCache: keys a transaction read with BatchGet (present or
// absent) are answered by later Gets without a call; its own writes still
// win; a new read ts forgets them; pessimistic LockAndGet fills it too.
func TestSnapshotCache(t *testing.T) {
	e := open(t)
	write(t, e, true, "a", "1", "b", "2")
	counter := &getCounter{Client: e.Service}
	s := txnkv.New(e.PD, counter, txnkv.Options{})
	txn := begin(t, s, kv.Optimistic, true)
	got, err := txn.BatchGet(ctx, []kv.Key{kv.Key("a"), kv.Key("b"), kv.Key("c")})
	must(t, err)
	if len(got) != 2 || counter.batchGets.Load() != 1 {
		t.Fatalf("BatchGet = %q in %d calls", got, counter.batchGets.Load())
	}
	write(t, e, true, "a", "changed", "c", "3") // after the snapshot: invisible
	if get(t, txn, "a") != "1" || get(t, txn, "c") != "<nil>" || counter.gets.Load() != 0 {
		t.Fatalf("cached reads: a=%s c=%s with %d calls", get(t, txn, "a"), get(t, txn, "c"), counter.gets.Load())
	}
	if _, err := txn.BatchGet(ctx, []kv.Key{kv.Key("a"), kv.Key("c")}); err != nil || counter.batchGets.Load() != 1 {
		t.Fatalf("a cached BatchGet called the store: %v, %d calls", err, counter.batchGets.Load())
	}
	must(t, txn.Set(kv.Key("c"), []byte("mine")))
	if get(t, txn, "c") != "mine" {
		t.Fatal("the transaction's own write lost to the cache")
	}
	ts, err := s.CurrentTS(ctx)
	must(t, err)
	txn.SetReadTS(ts)
	if get(t, txn, "a") != "changed" || counter.gets.Load() != 1 {
		t.Fatalf("after a new read ts: a=%s with %d calls", get(t, txn, "a"), counter.gets.Load())
	}
	must(t, txn.Rollback())

	// Pessimistic: LockAndGet's values serve later reads at that ts.
	p := begin(t, s, kv.Pessimistic, false)
	fu, err := s.CurrentTS(ctx)
	must(t, err)
	p.SetReadTS(fu)
	if _, err := p.LockAndGet(ctx, kv.LockOptions{ForUpdateTS: fu, WaitTimeout: time.Second}, []kv.Key{kv.Key("b"), kv.Key("d")}); err != nil {
		t.Fatal(err)
	}
	counter.gets.Store(0)
	counter.batchGets.Store(0)
	if get(t, p, "b") != "2" || get(t, p, "d") != "<nil>" || counter.gets.Load()+counter.batchGets.Load() != 0 {
		t.Fatalf("reads after LockAndGet made %d calls", counter.gets.Load()+counter.batchGets.Load())
	}
	must(t, p.Rollback())
}

// slowPrewrite answers prewrites only after a delay (a big transaction's
// prewrite across many regions).
type slowPrewrite struct {
	kvrpc.Client
	delay time.Duration
	done  chan struct{}
}

func (c *slowPrewrite) KvPrewrite(ctx context.Context, req kvrpc.PrewriteRequest) (kvrpc.PrewriteResponse, error) {
	resp, err := c.Client.KvPrewrite(ctx, req)
	close(c.done)
	time.Sleep(c.delay)
	return resp, err
}

// TestBigOptimisticTxnOutlivesPrewriteTTL: a large optimistic transaction
// whose prewrite takes longer than the short prewrite TTL is not rolled
// back by a reader meeting its locks (DROP DATABASE of a big database in
// a cluster was, and failed with "txn lock not found").
func TestBigOptimisticTxnOutlivesPrewriteTTL(t *testing.T) {
	e := open(t)
	slow := &slowPrewrite{Client: e.Service, delay: 4 * time.Second, done: make(chan struct{})}
	s := txnkv.New(e.PD, slow, txnkv.Options{})
	txn := begin(t, s, kv.Optimistic, false)
	for i := range 5000 {
		must(t, txn.Set(kv.Key(fmt.Sprintf("k%05d", i)), []byte("big")))
	}
	committed := make(chan error, 1)
	go func() { committed <- txn.Commit(ctx) }()
	<-slow.done
	// The reader began before the commit: it waits for the locks to be
	// settled, then reads nothing (its snapshot is older) — without
	// rolling the transaction back.
	reader := begin(t, e, kv.Optimistic, false)
	defer reader.Rollback()
	if v := get(t, reader, "k00000"); v != "<nil>" {
		t.Fatalf("reader saw %q", v)
	}
	must(t, <-committed)
	after := begin(t, e, kv.Optimistic, false)
	defer after.Rollback()
	if v := get(t, after, "k04999"); v != "big" {
		t.Fatalf("after the commit: %q", v)
	}
}

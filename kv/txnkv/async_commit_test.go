package txnkv_test

import (
	"testing"

	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/store/kvrpc"
)

// An async commit returns once its keys are prewritten; its commit ts is
// above the reads served before it, and a reader at a later timestamp
// sees every key (resolving the locks the background phase may not have
// committed yet).
func TestAsyncCommit(t *testing.T) {
	e := open(t)
	for _, mode := range []kv.TxnMode{kv.Optimistic, kv.Pessimistic} {
		readTS, err := e.CurrentTS(ctx)
		must(t, err)
		_, _ = e.GetSnapshot(readTS).Get(ctx, kv.Key("a")) // a read the commit ts must exceed
		txn, err := e.Begin(ctx, kv.TxnOptions{Mode: mode, EnableAsyncCommit: true})
		must(t, err)
		if mode == kv.Pessimistic {
			must(t, txn.LockKeys(ctx, kv.LockOptions{ForUpdateTS: txn.StartTS()}, kv.Key("a"), kv.Key("b")))
		}
		must(t, txn.Set(kv.Key("a"), []byte("1")))
		must(t, txn.Set(kv.Key("b"), []byte("2")))
		must(t, txn.Commit(ctx))
		if txn.CommitTS() <= readTS {
			t.Fatalf("commit ts %d not above an earlier read at %d", txn.CommitTS(), readTS)
		}
		if got := get(t, e.GetSnapshot(txn.CommitTS()), "b"); got != "2" {
			t.Fatalf("b at the commit ts = %q", got)
		}
		ts, err := e.CurrentTS(ctx)
		must(t, err)
		if got := get(t, e.GetSnapshot(ts), "a"); got != "1" {
			t.Fatalf("a = %q", got)
		}
	}
}

// The owner of an async-commit transaction died after prewriting: a reader
// finds it committed when every key holds its lock (at the largest
// min_commit_ts), and rolled back when one key was never prewritten.
func TestAsyncCommitResolvedByReaders(t *testing.T) {
	e := open(t)
	prewrite := func(start uint64, primary string, secondaries []string, keys ...string) uint64 {
		var sec [][]byte
		for _, k := range secondaries {
			sec = append(sec, []byte(k))
		}
		var ms []kvrpc.Mutation
		for _, k := range keys {
			ms = append(ms, kvrpc.Mutation{Op: kvrpc.OpPut, Key: []byte(k), Value: []byte("v-" + k)})
		}
		// Each key on its own, as regions on different stores would be.
		var minCommit uint64
		for _, m := range ms {
			var s [][]byte
			if string(m.Key) == primary {
				s = sec
			}
			resp, err := e.Service.KvPrewrite(ctx, kvrpc.PrewriteRequest{Mutations: []kvrpc.Mutation{m}, PrimaryLock: []byte(primary),
				StartTS: start, LockTTL: 1, UseAsyncCommit: true, Secondaries: s})
			must(t, err)
			minCommit = max(minCommit, resp.MinCommitTS)
		}
		return minCommit
	}
	// Committed: every key is locked.
	start, err := e.CurrentTS(ctx)
	must(t, err)
	minCommit := prewrite(start, "p1", []string{"s1", "s2"}, "p1", "s1", "s2")
	ts, err := e.CurrentTS(ctx)
	must(t, err)
	if got := get(t, e.GetSnapshot(ts), "s2"); got != "v-s2" {
		t.Fatalf("s2 of a fully prewritten async txn = %q, want it committed", got)
	}
	if got := get(t, e.GetSnapshot(minCommit), "p1"); got != "v-p1" {
		t.Fatalf("p1 at the largest min_commit_ts %d = %q", minCommit, got)
	}
	if got := get(t, e.GetSnapshot(minCommit-1), "s1"); got != "<nil>" {
		t.Fatalf("s1 below the commit ts = %q", got)
	}

	// Rolled back: s4 was never prewritten.
	start, err = e.CurrentTS(ctx)
	must(t, err)
	prewrite(start, "p3", []string{"s3", "s4"}, "p3", "s3")
	ts, err = e.CurrentTS(ctx)
	must(t, err)
	if got := get(t, e.GetSnapshot(ts), "s3"); got != "<nil>" {
		t.Fatalf("s3 of a partly prewritten async txn = %q, want it rolled back", got)
	}
	// The late prewrite of s4 cannot bring it back.
	if _, err := e.Service.KvPrewrite(ctx, kvrpc.PrewriteRequest{Mutations: []kvrpc.Mutation{{Op: kvrpc.OpPut, Key: []byte("s4"), Value: []byte("x")}},
		PrimaryLock: []byte("p3"), StartTS: start, LockTTL: 1, UseAsyncCommit: true}); err == nil {
		t.Fatal("late prewrite of a rolled-back async txn succeeded")
	}
}

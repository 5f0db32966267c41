package gcworker

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/kv/delrange"
	"github.com/shoaldb/shoal/kv/tikvclient"
	"github.com/shoaldb/shoal/kv/txnkv"
	"github.com/shoaldb/shoal/pd/pdclient"
	"github.com/shoaldb/shoal/pd/server/pdtest"
	"github.com/shoaldb/shoal/store/grpcserver/grpctest"
	"github.com/shoaldb/shoal/store/kvrpc"
)

// node is one SQL node's storage stack and GC worker over a shared PD and
// shared stores.
type node struct {
	s *txnkv.Storage
	w *Worker
}

type env struct {
	pd    *pdclient.Client
	kvc   *tikvclient.Client
	nodes []*node
	set   Settings
}

func newEnv(t *testing.T, nodes int) *env {
	t.Helper()
	pds := pdtest.Start(t, 1, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pdc, err := pdclient.New(ctx, pds.Addrs(), pdclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pdc.Close)
	c := grpctest.NewCluster(t, grpctest.Options{Stores: 3, SplitKeys: []string{"b", "d", "f"}})
	kvc := tikvclient.New(c, tikvclient.Options{MaxBackoff: 5 * time.Second, RPCTimeout: 5 * time.Second})
	t.Cleanup(func() { _ = kvc.Close() })
	e := &env{pd: pdc, kvc: kvc, set: Settings{LifeTime: time.Millisecond, RunInterval: time.Millisecond}}
	for i := range nodes {
		s := txnkv.New(pdc, kvc, txnkv.Options{})
		t.Cleanup(func() { _ = s.Close() })
		w := New(Config{ServiceID: fmt.Sprintf("sql-%d", i), Settings: func() Settings { return e.set }}, pdc, kvc, s)
		e.nodes = append(e.nodes, &node{s: s, w: w})
	}
	return e
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func (e *env) ts(t *testing.T) uint64 {
	ts, err := e.pd.GetTS(context.Background())
	must(t, err)
	return ts
}

func (e *env) write(t *testing.T, ctx context.Context, val string, keys ...string) {
	t.Helper()
	txn, err := e.nodes[0].s.Begin(ctx, kv.TxnOptions{Mode: kv.Optimistic})
	must(t, err)
	for _, k := range keys {
		must(t, txn.Set(kv.Key(k), []byte(val)))
	}
	must(t, txn.Commit(ctx))
}

func read(t *testing.T, ctx context.Context, txn kv.Txn, k string) (string, error) {
	t.Helper()
	v, err := txn.Get(ctx, kv.Key(k))
	if errors.Is(err, kv.ErrNotExist) {
		return "<nil>", nil
	}
	return string(v), err
}

// A round: the safe point stops at another node's live transaction (its
// claim), which still reads its snapshot; a dead lock below it is rolled
// back; old versions go, reads below the safe point fail; once the
// transaction ends the next round passes it; a live lock holds a round
// back; a disabled GC runs no round.
func TestRounds(t *testing.T) {
	e := newEnv(t, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	a, b := e.nodes[0], e.nodes[1]
	keys := []string{"a", "c", "e", "g"}

	e.write(t, ctx, "v0", keys...)
	t0 := e.ts(t)
	e.write(t, ctx, "v1", keys...)
	e.write(t, ctx, "v2", keys...)
	// A dead transaction's lock on h (TTL 1 ms), which nobody reads or
	// writes before GC comes.
	dead := e.ts(t)
	_, err := e.kvc.KvPrewrite(ctx, kvrpc.PrewriteRequest{Mutations: []kvrpc.Mutation{{Op: kvrpc.OpPut, Key: []byte("h"), Value: []byte("dead")}},
		PrimaryLock: []byte("h"), StartTS: dead, LockTTL: 1})
	must(t, err)
	// Node b's long transaction.
	long, err := b.s.Begin(ctx, kv.TxnOptions{Mode: kv.Optimistic})
	must(t, err)
	e.write(t, ctx, "v3", keys...)
	_, err = b.w.renewClaim(ctx)
	must(t, err)
	time.Sleep(5 * time.Millisecond)

	r := a.w.RunRound(ctx, false)
	if r.Err != "" || r.Skipped != "" {
		t.Fatalf("round 1: %+v", r)
	}
	if r.SafePoint != long.StartTS() {
		t.Fatalf("round 1 safe point %d, want node b's live transaction's start ts %d", r.SafePoint, long.StartTS())
	}
	if r.LocksScanned != 1 || r.Regions != 4 || r.WritesDeleted < uint64(2*len(keys)) {
		t.Fatalf("round 1 did not resolve the dead lock and collect v0, v1 everywhere: %+v", r)
	}
	for _, k := range keys {
		if v, err := read(t, ctx, long, k); err != nil || v != "v2" {
			t.Fatalf("the long transaction reads %s = %q, %v; want v2", k, v, err)
		}
	}
	if v, err := read(t, ctx, long, "h"); err != nil || v != "<nil>" {
		t.Fatalf("the dead transaction's key h = %q, %v; want it rolled back", v, err)
	}
	old, err := a.s.Begin(ctx, kv.TxnOptions{StartTS: t0})
	must(t, err)
	if _, err := old.Get(ctx, kv.Key("a")); !errors.Is(err, kv.ErrGCTooEarly) {
		t.Fatalf("a read below the safe point: %v, want ErrGCTooEarly", err)
	}
	_ = old.Rollback()

	// The long transaction ends; b's claim moves up; the next round passes.
	must(t, long.Rollback())
	_, err = b.w.renewClaim(ctx)
	must(t, err)
	time.Sleep(5 * time.Millisecond)
	r = a.w.RunRound(ctx, false)
	if r.Err != "" || r.SafePoint <= long.StartTS() || r.WritesDeleted < uint64(len(keys)) {
		t.Fatalf("round 2 (after the long transaction): %+v", r)
	}
	cur, err := a.s.Begin(ctx, kv.TxnOptions{})
	must(t, err)
	for _, k := range keys {
		if v, err := read(t, ctx, cur, k); err != nil || v != "v3" {
			t.Fatalf("%s = %q, %v after GC; want v3", k, v, err)
		}
	}
	_ = cur.Rollback()

	// A live lock (60 s TTL) holds the next round back to its start ts.
	e.write(t, ctx, "v4", keys...)
	live := e.ts(t)
	_, err = e.kvc.KvPrewrite(ctx, kvrpc.PrewriteRequest{Mutations: []kvrpc.Mutation{{Op: kvrpc.OpPut, Key: []byte("e"), Value: []byte("live")}},
		PrimaryLock: []byte("e"), StartTS: live, LockTTL: 60000})
	must(t, err)
	e.write(t, ctx, "v5", "a", "g")
	_, err = b.w.renewClaim(ctx)
	must(t, err)
	time.Sleep(5 * time.Millisecond)
	r = a.w.RunRound(ctx, false)
	if r.Err != "" || r.LiveLockTS != live || r.SafePoint != live {
		t.Fatalf("round 3 (a live lock at %d): %+v", live, r)
	}

	// Disabled: no round, unless forced.
	e.set.Disabled = true
	if r = a.w.RunRound(ctx, false); r.Skipped == "" {
		t.Fatalf("a round ran while disabled: %+v", r)
	}
	if st := a.w.Status(); st.Rounds != 4 || st.LastRound == nil || st.LastRound.Skipped == "" {
		t.Fatalf("status: %+v", st)
	}
}

// One lease holder at a time; it renews its own lease; another node takes
// over an expired one.
func TestLease(t *testing.T) {
	e := newEnv(t, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, b := e.nodes[0].w, e.nodes[1].w
	a.cfg.TickInterval, b.cfg.TickInterval = 100*time.Millisecond, 100*time.Millisecond
	a.cfg.LeaseMin, b.cfg.LeaseMin = time.Millisecond, time.Millisecond
	if ok, err := a.acquireLease(ctx); err != nil || !ok {
		t.Fatalf("a takes the free lease: %v %v", ok, err)
	}
	if ok, err := b.acquireLease(ctx); err != nil || ok {
		t.Fatalf("b takes a's lease: %v %v", ok, err)
	}
	if ok, err := a.acquireLease(ctx); err != nil || !ok {
		t.Fatalf("a renews: %v %v", ok, err)
	}
	// a stops renewing; after three ticks the lease is b's.
	deadline := time.Now().Add(10 * time.Second)
	for {
		ok, err := b.acquireLease(ctx)
		must(t, err)
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("b never took over the expired lease")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if ok, err := a.acquireLease(ctx); err != nil || ok {
		t.Fatalf("a takes b's lease back: %v %v", ok, err)
	}
}

// Started workers run rounds by themselves (the lease holder only), and
// Close withdraws the claims.
func TestStartedWorkers(t *testing.T) {
	e := newEnv(t, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e.write(t, ctx, "v0", "a", "c")
	e.write(t, ctx, "v1", "a", "c")
	for _, n := range e.nodes {
		n.w.cfg.TickInterval, n.w.cfg.ClaimInterval = 50*time.Millisecond, 20*time.Millisecond
		n.w.Start()
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		var collected, leaders int
		for _, n := range e.nodes {
			st := n.w.Status()
			if st.Leader {
				leaders++
			}
			if st.LastRound != nil && st.LastRound.WritesDeleted > 0 {
				collected++
			}
		}
		if leaders > 1 {
			t.Fatal("two lease holders at once")
		}
		if collected == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no round collected: %+v / %+v", e.nodes[0].w.Status(), e.nodes[1].w.Status())
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, n := range e.nodes {
		n.w.Close()
	}
	m, id, err := e.pd.UpdateServiceGCSafePoint(ctx, "probe", time.Minute, 0)
	must(t, err)
	if id != "probe" {
		t.Fatalf("a closed worker's claim remains: %s at %d", id, m)
	}
}

// A range queued by a DROP spanning two regions is stamped by one round
// and destroyed region by region by a later one; keys around it stay.
func TestDroppedRanges(t *testing.T) {
	e := newEnv(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w := e.nodes[0].w
	for i := range 2 {
		e.write(t, ctx, fmt.Sprint("v", i), "a", "c1", "c2", "e1", "g")
	}
	txn, err := e.nodes[0].s.Begin(ctx, kv.TxnOptions{Mode: kv.Optimistic})
	must(t, err)
	must(t, delrange.Add(txn, 0, kv.Key("c"), kv.Key("e2")))
	must(t, txn.Commit(ctx))
	time.Sleep(5 * time.Millisecond)
	r := w.RunRound(ctx, true)
	if r.Err != "" || r.DeleteRanges != (delrange.Stats{Stamped: 1, Pending: 1}) {
		t.Fatalf("round 1: %+v", r)
	}
	_, err = w.renewClaim(ctx)
	must(t, err)
	time.Sleep(5 * time.Millisecond)
	r = w.RunRound(ctx, true)
	// c1, c2, e1: each its newest commit record (round 1 collected the
	// older ones).
	if r.Err != "" || r.DeleteRanges.Destroyed != 1 || r.RecordsDropped != 3 {
		t.Fatalf("round 2: %+v", r)
	}
	cur, err := e.nodes[0].s.Begin(ctx, kv.TxnOptions{})
	must(t, err)
	defer cur.Rollback()
	for k, want := range map[string]string{"a": "v1", "c1": "<nil>", "c2": "<nil>", "e1": "<nil>", "g": "v1"} {
		if got, err := read(t, ctx, cur, k); err != nil || got != want {
			t.Fatalf("%s = %q, %v; want %q", k, got, err, want)
		}
	}
}

package tikvclient_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/kv/tikvclient"
	"github.com/shoaldb/shoal/store/grpcserver/grpctest"
	"github.com/shoaldb/shoal/store/kvrpc"
)

func skipUnary(t *testing.T) {
	if *unaryCalls {
		t.Skip("tests the batch streams")
	}
}

// Many goroutines reading at once over the batch streams each get the
// answer to their own request (every key has its own value), and every
// Get went on a stream.
func TestBatchRoutesAnswers(t *testing.T) {
	skipUnary(t)
	for _, wait := range []time.Duration{0, time.Millisecond} {
		t.Run(fmt.Sprintf("wait=%v", wait), func(t *testing.T) {
			e := newEnv(t, envOpts{cluster: fourRegions, client: tikvclient.Options{MaxBatchWaitTime: wait}})
			ctx := testCtx(t)
			const goroutines, gets, keys = 64, 200, 400
			var kvs []string
			for i := range keys {
				kvs = append(kvs, fmt.Sprintf("%c%03d", 'a'+i%8, i), fmt.Sprintf("v%03d", i))
			}
			e.write(t, ctx, false, kvs...)
			ts := e.ts(t)
			errs := make(chan error, goroutines)
			var wg sync.WaitGroup
			for g := range goroutines {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for n := range gets {
						i := (g*gets + n*7) % keys
						resp, err := e.cl.KvGet(ctx, kvrpc.GetRequest{Key: []byte(kvs[2*i]), Version: ts})
						if err != nil {
							errs <- err
							return
						}
						if string(resp.Value) != kvs[2*i+1] {
							errs <- fmt.Errorf("goroutine %d: %s = %q, want %q", g, kvs[2*i], resp.Value, kvs[2*i+1])
							return
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			requests, messages := 0, 0
			for _, s := range e.c.Stores {
				c := s.Calls()
				if c.Unary["KvGet"] != 0 {
					t.Errorf("store %d served %d unary KvGets", s.ID, c.Unary["KvGet"])
				}
				if c.Streams > 2 { // one per connection
					t.Errorf("store %d: %d streams", s.ID, c.Streams)
				}
				requests += c.Requests
				messages += c.Messages
			}
			if requests < goroutines*gets {
				t.Fatalf("%d requests on the streams, want at least %d", requests, goroutines*gets)
			}
			t.Logf("%d requests in %d messages", requests, messages)
		})
	}
}

// gate makes Gets of keys starting with "slow" wait until released or
// their context ends; it reports each such Get's arrival and its
// context's error.
type gate struct {
	kvrpc.Client
	arrived chan struct{}
	release chan struct{}
	ended   chan error
}

func newGate() *gate {
	return &gate{arrived: make(chan struct{}, 100), release: make(chan struct{}), ended: make(chan error, 100)}
}

func (g *gate) KvGet(ctx context.Context, req kvrpc.GetRequest) (kvrpc.GetResponse, error) {
	if len(req.Key) >= 4 && string(req.Key[:4]) == "slow" {
		g.arrived <- struct{}{}
		select {
		case <-g.release:
		case <-ctx.Done():
			g.ended <- ctx.Err()
			return kvrpc.GetResponse{}, ctx.Err()
		}
	}
	return g.Client.KvGet(ctx, req)
}

func waitN(t *testing.T, ch <-chan struct{}, n int) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for range n {
		select {
		case <-ch:
		case <-timeout:
			t.Fatal("timed out")
		}
	}
}

// Cancelling one request's context ends that request alone (at the store
// too); the others on the same stream carry on.
func TestBatchCancelOne(t *testing.T) {
	skipUnary(t)
	g := newGate()
	e := newEnv(t, envOpts{cluster: grpctest.Options{}, client: tikvclient.Options{ConnsPerStore: 1},
		fault: func(_ uint64, svc kvrpc.Client) kvrpc.Client { g.Client = svc; return g }})
	ctx := testCtx(t)
	e.write(t, ctx, false, "a", "1", "slow1", "s1", "slow2", "s2")
	ts := e.ts(t)
	cctx, cancel := context.WithCancel(ctx)
	type result struct {
		v   string
		err error
	}
	cancelled, other := make(chan result, 1), make(chan result, 1)
	get := func(ctx context.Context, key string, out chan<- result) {
		resp, err := e.cl.KvGet(ctx, kvrpc.GetRequest{Key: []byte(key), Version: ts})
		out <- result{string(resp.Value), err}
	}
	go get(cctx, "slow1", cancelled)
	go get(ctx, "slow2", other)
	waitN(t, g.arrived, 2)
	start := time.Now()
	cancel()
	select {
	case r := <-cancelled:
		if status.Code(r.err) != codes.Canceled {
			t.Fatalf("cancelled get: %v", r.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the cancelled get did not return")
	}
	// The store stopped waiting for it (well before the 5s RPC timeout).
	select {
	case err := <-g.ended:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("store side: %v", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("the store kept running the cancelled get")
	}
	t.Logf("cancelled in %v", time.Since(start))
	// A plain read passes while slow2 still waits on the same stream.
	resp, err := e.cl.KvGet(ctx, kvrpc.GetRequest{Key: []byte("a"), Version: ts})
	if err != nil || string(resp.Value) != "1" {
		t.Fatalf("a = %q, %v", resp.Value, err)
	}
	select {
	case r := <-other:
		t.Fatalf("slow2 returned early: %+v", r)
	default:
	}
	close(g.release)
	select {
	case r := <-other:
		if r.err != nil || r.v != "s2" {
			t.Fatalf("slow2 = %+v", r)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("slow2 did not return")
	}
}

// A store killed while requests wait on its stream fails them (they are
// retried within the budget, then reported unavailable); once it is back,
// new requests go through on a new stream.
func TestBatchStoreKilledMidStream(t *testing.T) {
	skipUnary(t)
	g := newGate()
	e := newEnv(t, envOpts{cluster: grpctest.Options{},
		client: tikvclient.Options{MaxBackoff: 300 * time.Millisecond},
		fault:  func(_ uint64, svc kvrpc.Client) kvrpc.Client { g.Client = svc; return g }})
	ctx := testCtx(t)
	e.write(t, ctx, false, "a", "1", "slow", "s")
	ts := e.ts(t)
	const n = 8
	errs := make(chan error, n)
	for range n {
		go func() {
			_, err := e.cl.KvGet(ctx, kvrpc.GetRequest{Key: []byte("slow"), Version: ts})
			errs <- err
		}()
	}
	waitN(t, g.arrived, n)
	st := e.c.Stores[0]
	st.Stop()
	for range n {
		select {
		case err := <-errs:
			var ru *kvrpc.RegionUnavailableError
			if !errors.As(err, &ru) {
				t.Fatalf("want the region unavailable after retries, got %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a waiting get did not fail")
		}
	}
	st.Restart(t)
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := e.cl.KvGet(ctx, kvrpc.GetRequest{Key: []byte("a"), Version: ts})
		if err == nil {
			if string(resp.Value) != "1" {
				t.Fatalf("a = %q", resp.Value)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("store back, get still fails: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if c := st.Calls(); c.Streams < 2 {
		t.Fatalf("want a new stream after the restart, %d opened", c.Streams)
	}
}

// commitThenKill applies a commit on the store, then has the store killed
// before it answers.
type commitThenKill struct {
	kvrpc.Client
	on   func() bool
	kill func()
}

func (c *commitThenKill) KvCommit(ctx context.Context, req kvrpc.CommitRequest) (kvrpc.CommitResponse, error) {
	resp, err := c.Client.KvCommit(ctx, req)
	if c.on() {
		go c.kill()
		<-ctx.Done()
		return resp, ctx.Err()
	}
	return resp, err
}

// The primary's commit applies and its stream breaks before the answer:
// the commit is undetermined (not failed), and in fact committed.
func TestBatchUndeterminedCommitOnBrokenStream(t *testing.T) {
	skipUnary(t)
	var armed sync.Map
	var e *env
	var once sync.Once
	e = newEnv(t, envOpts{
		cluster: fourRegions,
		client:  tikvclient.Options{MaxBackoff: 500 * time.Millisecond},
		fault: func(store uint64, svc kvrpc.Client) kvrpc.Client {
			return &commitThenKill{Client: svc,
				on:   func() bool { _, ok := armed.Load(store); return ok },
				kill: func() { once.Do(func() { e.c.StoreByID(store).Stop() }) }}
		},
	})
	ctx := testCtx(t)
	txn, err := e.s.Begin(ctx, kv.TxnOptions{Mode: kv.Optimistic})
	must(t, err)
	must(t, txn.Set(kv.Key("a"), []byte("1"))) // primary, on store 1
	must(t, txn.Set(kv.Key("c"), []byte("1")))
	armed.Store(uint64(1), true)
	err = txn.Commit(ctx)
	if !errors.Is(err, kv.ErrResultUndetermined) {
		t.Fatalf("want an undetermined result, got %v", err)
	}
	armed.Delete(uint64(1))
	e.c.StoreByID(1).Restart(t)
	deadline := time.Now().Add(10 * time.Second)
	for {
		v, err := func() (string, error) {
			rt, err := e.s.Begin(ctx, kv.TxnOptions{})
			if err != nil {
				return "", err
			}
			defer rt.Rollback()
			v, err := rt.Get(ctx, kv.Key("a"))
			return string(v), err
		}()
		if err == nil {
			if v != "1" {
				t.Fatalf("a = %q: the primary's commit applied", v)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("store back, read still fails: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := e.get(t, ctx, "c"); got != "1" {
		t.Fatalf("c = %s: resolved through the primary", got)
	}
}

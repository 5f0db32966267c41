package tikvclient_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/kv/tikvclient"
	"github.com/shoaldb/shoal/kv/txnkv"
	"github.com/shoaldb/shoal/pd"
	"github.com/shoaldb/shoal/store/grpcserver/grpctest"
	"github.com/shoaldb/shoal/store/kvrpc"
)

// unaryCalls runs the suite with plain unary calls instead of the batch
// streams: go test ./kv/tikvclient -args -unary
var unaryCalls = flag.Bool("unary", false, "send unary calls (Options.DisableBatch) in every test")

// env is a cluster of loopback stores, a client over them and a txnkv
// Storage on the client.
type env struct {
	c   *grpctest.Cluster
	cl  *tikvclient.Client
	s   *txnkv.Storage
	pd  pd.Client
	rec *recorder
}

type envOpts struct {
	cluster grpctest.Options
	client  tikvclient.Options
	// fault, if set, wraps each store's service after the recorder.
	fault func(store uint64, svc kvrpc.Client) kvrpc.Client
}

func newEnv(t *testing.T, o envOpts) *env {
	t.Helper()
	rec := &recorder{}
	o.cluster.Wrap = func(store uint64, svc kvrpc.Client) kvrpc.Client {
		if o.fault != nil {
			svc = o.fault(store, svc)
		}
		return &recording{Client: svc, store: store, rec: rec}
	}
	c := grpctest.NewCluster(t, o.cluster)
	if o.client.MaxBackoff == 0 {
		o.client.MaxBackoff = 5 * time.Second
	}
	if o.client.RPCTimeout == 0 {
		o.client.RPCTimeout = 5 * time.Second
	}
	if *unaryCalls {
		o.client.DisableBatch = true
	}
	cl := tikvclient.New(c, o.client)
	t.Cleanup(func() { _ = cl.Close() })
	pdc, err := pd.OpenLocal(t.TempDir(), pd.AllocatorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pdc.Close)
	s := txnkv.New(pdc, cl, txnkv.Options{})
	t.Cleanup(func() { _ = s.Close() })
	return &env{c: c, cl: cl, s: s, pd: pdc, rec: rec}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func must(t testing.TB, err error) {
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

func (e *env) write(t *testing.T, ctx context.Context, onePC bool, kvs ...string) kv.Txn {
	t.Helper()
	txn, err := e.s.Begin(ctx, kv.TxnOptions{Mode: kv.Optimistic, Enable1PC: onePC})
	must(t, err)
	for i := 0; i < len(kvs); i += 2 {
		must(t, txn.Set(kv.Key(kvs[i]), []byte(kvs[i+1])))
	}
	must(t, txn.Commit(ctx))
	return txn
}

func (e *env) get(t *testing.T, ctx context.Context, k string) string {
	t.Helper()
	txn, err := e.s.Begin(ctx, kv.TxnOptions{})
	must(t, err)
	defer txn.Rollback()
	v, err := txn.Get(ctx, kv.Key(k))
	if errors.Is(err, kv.ErrNotExist) {
		return "<nil>"
	}
	must(t, err)
	return string(v)
}

// ---- recording the calls each store serves ----

type call struct {
	store      uint64
	method     string
	keys       []string
	start, end time.Time
	err        error
}

type recorder struct {
	mu    sync.Mutex
	calls []call
}

func (r *recorder) add(c call) {
	r.mu.Lock()
	r.calls = append(r.calls, c)
	r.mu.Unlock()
}

// since returns the calls of method recorded after mark.
func (r *recorder) of(method string, from int) []call {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []call
	for _, c := range r.calls[from:] {
		if c.method == method {
			out = append(out, c)
		}
	}
	return out
}

func (r *recorder) mark() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.calls)
}

type recording struct {
	kvrpc.Client
	store uint64
	rec   *recorder
}

func strs(keys [][]byte) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = string(k)
	}
	return out
}

func (r *recording) KvCommit(ctx context.Context, req kvrpc.CommitRequest) (kvrpc.CommitResponse, error) {
	start := time.Now()
	resp, err := r.Client.KvCommit(ctx, req)
	r.rec.add(call{store: r.store, method: "Commit", keys: strs(req.Keys), start: start, end: time.Now(), err: err})
	return resp, err
}

// KvPrewrite records the call when it arrives (a hanging call counts).
func (r *recording) KvPrewrite(ctx context.Context, req kvrpc.PrewriteRequest) (kvrpc.PrewriteResponse, error) {
	var keys []string
	for _, m := range req.Mutations {
		keys = append(keys, string(m.Key))
	}
	method := "Prewrite"
	switch {
	case req.TryOnePC:
		method = "Prewrite1PC"
	case req.UseAsyncCommit:
		method = "PrewriteAsync"
	}
	r.rec.add(call{store: r.store, method: method, keys: keys, start: time.Now()})
	return r.Client.KvPrewrite(ctx, req)
}

func (r *recording) KvPessimisticLock(ctx context.Context, req kvrpc.PessimisticLockRequest) (kvrpc.PessimisticLockResponse, error) {
	start := time.Now()
	resp, err := r.Client.KvPessimisticLock(ctx, req)
	var keys []string
	for _, k := range req.Keys {
		keys = append(keys, string(k.Key))
	}
	r.rec.add(call{store: r.store, method: "PessimisticLock", keys: keys, start: start, end: time.Now(), err: err})
	return resp, err
}

func (r *recording) KvResolveLock(ctx context.Context, req kvrpc.ResolveLockRequest) (kvrpc.ResolveLockResponse, error) {
	resp, err := r.Client.KvResolveLock(ctx, req)
	r.rec.add(call{store: r.store, method: "ResolveLock", keys: strs(req.Keys), err: err})
	return resp, err
}

func has(keys []string, k string) bool {
	for _, x := range keys {
		if x == k {
			return true
		}
	}
	return false
}

// holds reports whether store's own engine has a committed value for key
// (partitioned clusters: the data of a region lives on its leader).
func (e *env) holds(t *testing.T, store uint64, key string) bool {
	t.Helper()
	resp, err := e.c.StoreByID(store).Service.KvGet(context.Background(), kvrpc.GetRequest{Key: []byte(key), Version: e.ts(t)})
	must(t, err)
	return !resp.NotFound
}

func keysOf(pairs []kvrpc.KvPair) string {
	var b bytes.Buffer
	for i, p := range pairs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(string(p.Key))
	}
	return b.String()
}

var _ = fmt.Sprint

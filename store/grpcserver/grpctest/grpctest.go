// Package grpctest starts in-process stores served over gRPC on loopback,
// for tests of the store's gRPC face and of clients that talk to it: each
// store is a real Pebble engine (store/pebbleengine), MVCC store and
// store service behind a grpcserver.Server, with a RegionTable deciding
// which regions each store leads; each store counts the calls and batch streams it is
// sent (Store.Calls).
//
// Invariants: servers listen on 127.0.0.1 only (a free port chosen by the
// kernel); everything started is stopped by the test's Cleanup (servers
// first, then services, then engines).
package grpctest

import (
	"context"
	"fmt"
	"net"
	"path"
	"sync"
	"testing"

	"google.golang.org/grpc"

	"github.com/shoaldb/shoal/proto/errorpb"
	"github.com/shoaldb/shoal/proto/metapb"
	"github.com/shoaldb/shoal/proto/tikvpb"
	"github.com/shoaldb/shoal/store/grpcserver"
	"github.com/shoaldb/shoal/store/kvrpc"
	"github.com/shoaldb/shoal/store/mvcc"
	"github.com/shoaldb/shoal/store/pebbleengine"
	"github.com/shoaldb/shoal/store/service"
)

// Store is one served store.
type Store struct {
	ID      uint64
	Addr    string
	Service *service.Service

	mu           sync.Mutex
	grpc         *grpc.Server
	srv          *grpcserver.Server
	regionErrors map[string]int
	calls        Calls
}

// Calls counts what a store was sent over gRPC.
type Calls struct {
	// Unary counts unary calls by method name ("KvGet", ...).
	Unary map[string]int
	// Streams counts BatchCommands streams opened; Messages and Requests
	// the messages and sub-requests received on them.
	Streams, Messages, Requests int
}

// Calls returns what the store was sent so far.
func (s *Store) Calls() Calls {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.calls
	out.Unary = map[string]int{}
	for k, v := range s.calls.Unary {
		out.Unary[k] = v
	}
	return out
}

func (s *Store) countUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	s.mu.Lock()
	s.calls.Unary[path.Base(info.FullMethod)]++
	s.mu.Unlock()
	return h(ctx, req)
}

func (s *Store) countStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	if path.Base(info.FullMethod) != "BatchCommands" {
		return h(srv, ss)
	}
	s.mu.Lock()
	s.calls.Streams++
	s.mu.Unlock()
	return h(srv, countingStream{ss, s})
}

// countingStream counts the batch messages a stream receives.
type countingStream struct {
	grpc.ServerStream
	s *Store
}

func (c countingStream) RecvMsg(m any) error {
	err := c.ServerStream.RecvMsg(m)
	if req, ok := m.(*tikvpb.BatchCommandsRequest); ok && err == nil {
		c.s.mu.Lock()
		c.s.calls.Messages++
		c.s.calls.Requests += len(req.GetRequests())
		c.s.mu.Unlock()
	}
	return err
}

// RegionErrors returns how many region errors of each kind ("NotLeader",
// "EpochNotMatch", "RegionNotFound", "KeyNotInRegion", ...) the store
// answered.
func (s *Store) RegionErrors() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for k, v := range s.regionErrors {
		out[k] = v
	}
	return out
}

// counting counts the region errors of a checker.
type counting struct {
	grpcserver.RegionChecker
	s *Store
}

func (c counting) CheckRegion(ctx context.Context, req *grpcserver.Request) (context.Context, *errorpb.RegionError) {
	ctx, re := c.RegionChecker.CheckRegion(ctx, req)
	if re != nil {
		kind := "Other"
		switch {
		case re.NotLeader != nil:
			kind = "NotLeader"
		case re.EpochNotMatch != nil:
			kind = "EpochNotMatch"
		case re.RegionNotFound != nil:
			kind = "RegionNotFound"
		case re.KeyNotInRegion != nil:
			kind = "KeyNotInRegion"
		case re.ServerIsBusy != nil:
			kind = "ServerIsBusy"
		}
		c.s.mu.Lock()
		c.s.regionErrors[kind]++
		c.s.mu.Unlock()
	}
	return ctx, re
}

// Cluster is a set of stores sharing one region table.
type Cluster struct {
	Table  *grpcserver.RegionTable
	Stores []*Store
}

// Options shape a cluster.
type Options struct {
	// Stores is the number of stores (1 if 0); their ids are 1..Stores.
	Stores int
	// SplitKeys cut the keyspace into len(SplitKeys)+1 regions with ids
	// 1, 2, ...; region i is led by store (i-1)%Stores+1 and has a peer
	// (id region*100+store) on every store.
	SplitKeys []string
	// Shared: all stores run on one engine and service (as replicas that
	// hold the same data), so a region's leader can move with its data.
	// Otherwise each store has its own engine and only the data of the
	// regions it led when the data was written.
	Shared bool
	// Wrap, if set, interposes on each store's service (to record or
	// inject faults).
	Wrap func(store uint64, svc kvrpc.Client) kvrpc.Client
}

// NewCluster starts the stores.
func NewCluster(t testing.TB, o Options) *Cluster {
	t.Helper()
	if o.Stores <= 0 {
		o.Stores = 1
	}
	c := &Cluster{Table: grpcserver.NewRegionTable()}
	start := []byte(nil)
	for i := 0; i <= len(o.SplitKeys); i++ {
		var end []byte
		if i < len(o.SplitKeys) {
			end = []byte(o.SplitKeys[i])
		}
		id := uint64(i + 1)
		r := &metapb.Region{Id: id, StartKey: start, EndKey: end, RegionEpoch: &metapb.RegionEpoch{ConfVer: 1, Version: 1}}
		for s := 1; s <= o.Stores; s++ {
			r.Peers = append(r.Peers, &metapb.Peer{Id: id*100 + uint64(s), StoreId: uint64(s)})
		}
		c.Table.Put(r, uint64(i%o.Stores+1))
		start = end
	}
	var shared *service.Service
	for s := 1; s <= o.Stores; s++ {
		svc := shared
		if svc == nil {
			svc = openService(t)
			if o.Shared {
				shared = svc
			}
		}
		st := &Store{ID: uint64(s), Service: svc, regionErrors: map[string]int{}, calls: Calls{Unary: map[string]int{}}}
		var kc kvrpc.Client = svc
		if o.Wrap != nil {
			kc = o.Wrap(st.ID, svc)
		}
		st.srv = grpcserver.New(kc, counting{c.Table.Checker(st.ID), st},
			grpcserver.Options{GC: grpcserver.MVCCGC{Store: svc.Store(), NoPacing: true}})
		st.serve(t, "127.0.0.1:0")
		c.Stores = append(c.Stores, st)
	}
	return c
}

// openService opens an engine, MVCC store and service, closed at cleanup
// (after the servers, which register their cleanups later).
func openService(t testing.TB) *service.Service {
	t.Helper()
	eng, err := pebbleengine.Open(t.TempDir(), pebbleengine.Options{Split: mvcc.SplitKey, SplitName: mvcc.SplitName, BlockCacheSize: 4 << 20, MemTableSize: 4 << 20, DisableWAL: true})
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(mvcc.New(eng, mvcc.Options{NoSync: true}))
	t.Cleanup(func() {
		svc.Close()
		_ = eng.Close()
	})
	return svc
}

func (s *Store) serve(t testing.TB, addr string) {
	t.Helper()
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	g := grpc.NewServer(append(grpcserver.ServerOptions(),
		grpc.UnaryInterceptor(s.countUnary), grpc.StreamInterceptor(s.countStream))...)
	s.srv.Register(g)
	s.mu.Lock()
	s.grpc, s.Addr = g, lis.Addr().String()
	s.mu.Unlock()
	go func() { _ = g.Serve(lis) }()
	t.Cleanup(s.Stop)
}

// Stop stops serving (connections drop; in-flight calls fail).
func (s *Store) Stop() {
	s.mu.Lock()
	g := s.grpc
	s.grpc = nil
	s.mu.Unlock()
	if g != nil {
		g.Stop()
	}
}

// Restart serves again on the same address after Stop.
func (s *Store) Restart(t testing.TB) {
	t.Helper()
	s.serve(t, s.Addr)
}

// StoreByID returns the store with the id.
func (c *Cluster) StoreByID(id uint64) *Store {
	for _, s := range c.Stores {
		if s.ID == id {
			return s
		}
	}
	return nil
}

// StoreMeta describes a store as PD would.
func (c *Cluster) StoreMeta(id uint64) (*metapb.Store, error) {
	s := c.StoreByID(id)
	if s == nil {
		return nil, fmt.Errorf("store %d not found", id)
	}
	return &metapb.Store{Id: id, Address: s.Addr}, nil
}

// The Cluster is a region source (PD's view) over its table:
// kv/tikvclient.RegionSource.

// GetRegion returns the region holding key and its leader.
func (c *Cluster) GetRegion(_ context.Context, key []byte) (*metapb.Region, *metapb.Peer, error) {
	r, l := c.Table.Locate(key)
	return r, l, nil
}

// GetPrevRegion returns the region ending where the one holding key starts.
func (c *Cluster) GetPrevRegion(_ context.Context, key []byte) (*metapb.Region, *metapb.Peer, error) {
	cur, _ := c.Table.Locate(key)
	if cur == nil || len(cur.StartKey) == 0 {
		return nil, nil, nil
	}
	for _, r := range c.Table.Regions() {
		if string(r.EndKey) == string(cur.StartKey) {
			_, l := c.Table.ByID(r.Id)
			return r, l, nil
		}
	}
	return nil, nil, nil
}

// GetRegionByID returns a region by id and its leader.
func (c *Cluster) GetRegionByID(_ context.Context, id uint64) (*metapb.Region, *metapb.Peer, error) {
	r, l := c.Table.ByID(id)
	return r, l, nil
}

// GetStore returns the store's address.
func (c *Cluster) GetStore(_ context.Context, id uint64) (*metapb.Store, error) {
	return c.StoreMeta(id)
}

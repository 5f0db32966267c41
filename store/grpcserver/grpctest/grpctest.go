// Package grpctest starts in-process stores served over gRPC on loopback,
// for tests of the store's gRPC face and of clients that talk to it: each
// store is a real standalone Pebble engine, MVCC store and store service
// behind a grpcserver.Server, with a RegionTable deciding which regions
// each store leads.
//
// Invariants: servers listen on 127.0.0.1 only (a free port chosen by the
// kernel); everything started is stopped by the test's Cleanup (servers
// first, then services, then engines).
package grpctest

import (
	"fmt"
	"net"
	"sync"
	"testing"

	"google.golang.org/grpc"

	"github.com/shoaldb/shoal/proto/metapb"
	"github.com/shoaldb/shoal/store/grpcserver"
	"github.com/shoaldb/shoal/store/mvcc"
	"github.com/shoaldb/shoal/store/service"
	"github.com/shoaldb/shoal/store/standalone"
)

// Store is one served store.
type Store struct {
	ID      uint64
	Addr    string
	Service *service.Service

	mu   sync.Mutex
	grpc *grpc.Server
	srv  *grpcserver.Server
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
		st := &Store{ID: uint64(s), Service: svc}
		st.srv = grpcserver.New(svc, c.Table.Checker(st.ID), grpcserver.Options{})
		st.serve(t, "127.0.0.1:0")
		c.Stores = append(c.Stores, st)
	}
	return c
}

// openService opens an engine, MVCC store and service, closed at cleanup
// (after the servers, which register their cleanups later).
func openService(t testing.TB) *service.Service {
	t.Helper()
	eng, err := standalone.Open(t.TempDir(), standalone.Options{BlockCacheSize: 4 << 20, MemTableSize: 4 << 20, DisableWAL: true})
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
	g := grpc.NewServer()
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

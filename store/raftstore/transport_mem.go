package raftstore

import (
	"encoding/binary"
	"sync"
	"time"

	"github.com/shoaldb/shoal/proto/raftserverpb"
	"go.etcd.io/raft/v3/raftpb"
)

// MemNetwork is an in-process network of stores for tests: each store's
// Transport delivers straight into the target store, through filters that
// can drop or delay messages.
type MemNetwork struct {
	mu      sync.RWMutex
	stores  map[uint64]RaftMessageHandler
	filters map[int]MessageFilter
	nextID  int
}

// MessageFilter inspects a message: drop it, or deliver it after delay.
type MessageFilter func(m *raftserverpb.RaftMessage) (drop bool, delay time.Duration)

// NewMemNetwork returns an empty network.
func NewMemNetwork() *MemNetwork {
	return &MemNetwork{stores: map[uint64]RaftMessageHandler{}, filters: map[int]MessageFilter{}}
}

// Register attaches a store (replacing a previous one with the id).
func (n *MemNetwork) Register(storeID uint64, h RaftMessageHandler) {
	n.mu.Lock()
	n.stores[storeID] = h
	n.mu.Unlock()
}

// Unregister detaches a store: messages to it are lost.
func (n *MemNetwork) Unregister(storeID uint64) {
	n.mu.Lock()
	delete(n.stores, storeID)
	n.mu.Unlock()
}

// AddFilter installs a filter and returns its id for RemoveFilter.
func (n *MemNetwork) AddFilter(f MessageFilter) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.nextID++
	n.filters[n.nextID] = f
	return n.nextID
}

// RemoveFilter removes one filter.
func (n *MemNetwork) RemoveFilter(id int) {
	n.mu.Lock()
	delete(n.filters, id)
	n.mu.Unlock()
}

// ClearFilters removes all filters.
func (n *MemNetwork) ClearFilters() {
	n.mu.Lock()
	n.filters = map[int]MessageFilter{}
	n.mu.Unlock()
}

// Partition returns a filter that drops messages between the two groups
// of stores (messages within a group pass).
func Partition(a, b []uint64) MessageFilter {
	side := map[uint64]int{}
	for _, id := range a {
		side[id] = 1
	}
	for _, id := range b {
		side[id] = 2
	}
	return func(m *raftserverpb.RaftMessage) (bool, time.Duration) {
		f, t := side[m.GetFromPeer().GetStoreId()], side[m.GetToPeer().GetStoreId()]
		return f != 0 && t != 0 && f != t, 0
	}
}

// Isolate returns a filter that drops every message to or from a store.
func Isolate(storeID uint64) MessageFilter {
	return func(m *raftserverpb.RaftMessage) (bool, time.Duration) {
		return m.GetFromPeer().GetStoreId() == storeID || m.GetToPeer().GetStoreId() == storeID, 0
	}
}

// Delay returns a filter that delays every message by d.
func Delay(d time.Duration) MessageFilter {
	return func(*raftserverpb.RaftMessage) (bool, time.Duration) { return false, d }
}

// Transport returns the Transport of store storeID.
func (n *MemNetwork) Transport(storeID uint64) Transport { return memTransport{n: n, from: storeID} }

type memTransport struct {
	n    *MemNetwork
	from uint64
}

func (t memTransport) Send(msgs []*raftserverpb.RaftMessage) {
	for _, m := range msgs {
		t.n.deliver(t.from, m)
	}
}

func (n *MemNetwork) deliver(from uint64, m *raftserverpb.RaftMessage) {
	n.mu.RLock()
	var drop bool
	var delay time.Duration
	for _, f := range n.filters {
		d, dl := f(m)
		drop = drop || d
		if dl > delay {
			delay = dl
		}
	}
	to := n.stores[m.GetToPeer().GetStoreId()]
	sender := n.stores[from]
	n.mu.RUnlock()
	isSnap := isSnapshotMessage(m)
	send := func() {
		if to != nil && !drop {
			to.HandleRaftMessage(m)
		}
		if isSnap && sender != nil {
			// Not inline: Send runs on the sender's raft goroutine.
			go sender.ReportSnapshot(m.GetRegionId(), m.GetToPeer().GetId(), to != nil && !drop)
		}
	}
	if delay > 0 {
		time.AfterFunc(delay, send)
		return
	}
	send()
}

// isSnapshotMessage reports whether m carries a MsgSnap, reading only the
// marshalled raftpb.Message's first field (type, field 1, always written).
func isSnapshotMessage(m *raftserverpb.RaftMessage) bool {
	b := m.GetMessage()
	if m.GetIsTombstone() || len(b) < 2 || b[0] != 0x08 {
		return false
	}
	t, n := binary.Uvarint(b[1:])
	return n > 0 && raftpb.MessageType(t) == raftpb.MsgSnap
}

package raftstore

import (
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"github.com/shoaldb/shoal/proto/metapb"
	"github.com/shoaldb/shoal/proto/raftserverpb"
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// Raft log indexes of a region created by bootstrap or split start after
// raftInitIndex: its initial state is "applied and truncated at index 5,
// term 5", and a peer created from a message (no state, index 0) can only
// catch up through a snapshot. That makes every replica of a region start
// from a snapshot of the same data, never from an empty log that might
// disagree with it.
const (
	raftInitIndex = 5
	raftInitTerm  = 5
)

// peerStorage is a peer's raft.Storage over the store's Pebble: entries,
// hard state and apply state under the region's local keys. It is used
// only on the store's raft goroutine, except for snapshot generation,
// which reads a Pebble snapshot on its own goroutine.
type peerStorage struct {
	db *pebble.DB
	// bg counts background work on db (snapshot generation), which must
	// end before db is closed: the store's WaitGroup.
	bg       *sync.WaitGroup
	regionID uint64
	// region is the peer's current region (for the ConfState and snapshot
	// generation); the peer updates it.
	region *metapb.Region

	hardState raftpb.HardState
	apply     raftserverpb.RaftApplyState
	// appliedTerm is the term of the entry at apply.AppliedIndex.
	appliedTerm uint64
	lastIndex   uint64
	lastTerm    uint64
	// terms answers Term for the log in memory (raft asks often: on every
	// append, commit and probe).
	terms termRuns

	snapMu      sync.Mutex
	durable     snapState
	generating  bool
	generated   *raftpb.Snapshot
	snapFailure error
}

var _ raft.Storage = (*peerStorage)(nil)

// loadPeerStorage reads a region's raft state from db.
func loadPeerStorage(db *pebble.DB, bg *sync.WaitGroup, region *metapb.Region) (*peerStorage, error) {
	ps := &peerStorage{db: db, bg: bg, regionID: region.GetId(), region: region}
	if ok, err := getProto(db, applyStateKey(ps.regionID), &ps.apply); err != nil {
		return nil, err
	} else if !ok && isInitialized(region) {
		return nil, fmt.Errorf("raftstore: region %d has no apply state", ps.regionID)
	}
	hs, err := get(db, hardStateKey(ps.regionID))
	if err != nil {
		return nil, err
	}
	if hs != nil {
		if err := ps.hardState.Unmarshal(hs); err != nil {
			return nil, err
		}
	}
	ps.lastIndex, ps.lastTerm = ps.apply.TruncatedIndex, ps.apply.TruncatedTerm
	lo, hi := raftLogBounds(ps.regionID, ps.apply.TruncatedIndex+1, math.MaxUint64)
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return nil, err
	}
	for ok := it.First(); ok; ok = it.Next() {
		var e raftpb.Entry
		if err := e.Unmarshal(it.Value()); err != nil {
			it.Close()
			return nil, err
		}
		if e.Index != ps.lastIndex+1 {
			it.Close()
			return nil, fmt.Errorf("raftstore: region %d: log gap at %d (last %d)", ps.regionID, e.Index, ps.lastIndex)
		}
		ps.lastIndex, ps.lastTerm = e.Index, e.Term
		ps.terms.add(e.Index, e.Term)
	}
	if err := it.Close(); err != nil {
		return nil, err
	}
	ps.appliedTerm = ps.apply.TruncatedTerm
	if ps.apply.AppliedIndex > ps.apply.TruncatedIndex {
		t, err := ps.Term(ps.apply.AppliedIndex)
		if err != nil {
			return nil, fmt.Errorf("raftstore: region %d: term of applied index %d: %w", ps.regionID, ps.apply.AppliedIndex, err)
		}
		ps.appliedTerm = t
	}
	ps.durable = snapState{region: region, applied: ps.apply.AppliedIndex, appliedTerm: ps.appliedTerm}
	return ps, nil
}

func confStateOf(r *metapb.Region) raftpb.ConfState {
	var cs raftpb.ConfState
	for _, p := range r.GetPeers() {
		if p.GetRole() == metapb.PeerRole_Learner {
			cs.Learners = append(cs.Learners, p.GetId())
		} else {
			cs.Voters = append(cs.Voters, p.GetId())
		}
	}
	return cs
}

func (ps *peerStorage) InitialState() (raftpb.HardState, raftpb.ConfState, error) {
	return ps.hardState, confStateOf(ps.region), nil
}

func (ps *peerStorage) Entries(lo, hi, maxSize uint64) ([]raftpb.Entry, error) {
	if lo <= ps.apply.TruncatedIndex {
		return nil, raft.ErrCompacted
	}
	if hi > ps.lastIndex+1 {
		return nil, raft.ErrUnavailable
	}
	klo, khi := raftLogBounds(ps.regionID, lo, hi)
	it, err := ps.db.NewIter(&pebble.IterOptions{LowerBound: klo, UpperBound: khi})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	ents := make([]raftpb.Entry, 0, hi-lo)
	var size uint64
	next := lo
	for ok := it.First(); ok; ok = it.Next() {
		var e raftpb.Entry
		if err := e.Unmarshal(it.Value()); err != nil {
			return nil, err
		}
		if e.Index != next {
			return nil, raft.ErrUnavailable
		}
		size += uint64(e.Size())
		if len(ents) > 0 && size > maxSize {
			break
		}
		ents = append(ents, e)
		next++
	}
	if err := it.Error(); err != nil {
		return nil, err
	}
	if len(ents) == 0 {
		return nil, raft.ErrUnavailable
	}
	return ents, nil
}

func (ps *peerStorage) Term(i uint64) (uint64, error) {
	switch {
	case i == ps.apply.TruncatedIndex:
		return ps.apply.TruncatedTerm, nil
	case i < ps.apply.TruncatedIndex:
		return 0, raft.ErrCompacted
	case i > ps.lastIndex:
		return 0, raft.ErrUnavailable
	case i == ps.lastIndex:
		return ps.lastTerm, nil
	}
	if t, ok := ps.terms.term(i); ok {
		return t, nil
	}
	v, err := get(ps.db, raftLogKey(ps.regionID, i))
	if err != nil {
		return 0, err
	}
	if v == nil {
		return 0, raft.ErrUnavailable
	}
	var e raftpb.Entry
	if err := e.Unmarshal(v); err != nil {
		return 0, err
	}
	return e.Term, nil
}

func (ps *peerStorage) LastIndex() (uint64, error)  { return ps.lastIndex, nil }
func (ps *peerStorage) FirstIndex() (uint64, error) { return ps.apply.TruncatedIndex + 1, nil }

// Snapshot implements raft.Storage; see snapshot.go.
func (ps *peerStorage) Snapshot() (raftpb.Snapshot, error) { return ps.snapshot() }

// ---- Pebble helpers ----

// get returns a copy of the value of key, or nil if absent.
func get(db *pebble.DB, key []byte) ([]byte, error) {
	v, closer, err := db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := append([]byte(nil), v...)
	closer.Close()
	return out, nil
}

func getProto(db *pebble.DB, key []byte, m proto.Message) (bool, error) {
	v, err := get(db, key)
	if err != nil || v == nil {
		return false, err
	}
	return true, proto.Unmarshal(v, m)
}

func mustMarshal(m proto.Message) []byte {
	b, err := proto.Marshal(m)
	if err != nil {
		panic(err)
	}
	return b
}

func isInitialized(r *metapb.Region) bool { return len(r.GetPeers()) > 0 }

// writeInitialState writes the raft state of a region created by bootstrap
// or split: applied and truncated at raftInitIndex.
func writeInitialState(wb *pebble.Batch, region *metapb.Region) {
	id := region.GetId()
	hs := raftpb.HardState{Term: raftInitTerm, Commit: raftInitIndex}
	hsb, _ := hs.Marshal()
	_ = wb.Set(hardStateKey(id), hsb, nil)
	_ = wb.Set(applyStateKey(id), mustMarshal(&raftserverpb.RaftApplyState{
		AppliedIndex: raftInitIndex, TruncatedIndex: raftInitIndex, TruncatedTerm: raftInitTerm,
	}), nil)
	_ = wb.Set(regionStateKey(id), mustMarshal(&raftserverpb.RegionLocalState{Region: region}), nil)
}

// termRuns records the log's terms as runs: entries from start on have
// term until the next run. Terms change rarely, so it stays tiny.
type termRuns struct{ runs []termRun }

type termRun struct{ start, term uint64 }

// add records entry (index, term), which follows the last added or
// replaces the log from index on.
func (t *termRuns) add(index, term uint64) {
	for len(t.runs) > 0 && t.runs[len(t.runs)-1].start >= index {
		t.runs = t.runs[:len(t.runs)-1]
	}
	if n := len(t.runs); n > 0 && t.runs[n-1].term == term {
		return
	}
	t.runs = append(t.runs, termRun{start: index, term: term})
}

// term returns the term of index if a run covers it (the caller checks
// that index is within the log).
func (t *termRuns) term(index uint64) (uint64, bool) {
	for i := len(t.runs) - 1; i >= 0; i-- {
		if t.runs[i].start <= index {
			return t.runs[i].term, true
		}
	}
	return 0, false
}

// compact forgets runs wholly at or below index.
func (t *termRuns) compact(index uint64) {
	i := 0
	for i+1 < len(t.runs) && t.runs[i+1].start <= index+1 {
		i++
	}
	t.runs = append(t.runs[:0], t.runs[i:]...)
}

func (t *termRuns) reset() { t.runs = t.runs[:0] }

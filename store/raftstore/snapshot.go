package raftstore

import (
	"fmt"
	"math"

	"github.com/cockroachdb/pebble/v2"
	"github.com/shoaldb/shoal/proto/metapb"
	"github.com/shoaldb/shoal/proto/raftserverpb"
	"github.com/shoaldb/shoal/store/mvcc/mvcckey"
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// Raft snapshots carry a region's whole state: its region descriptor and
// every key-value of its range under the data prefixes, as of an applied
// index (a RegionSnapshot in raftpb.Snapshot.Data).
//
// Generation runs off the raft goroutine on a Pebble snapshot taken on it
// right after an apply round, so the data, the applied index and the
// region (ConfState) all describe the same point. Until it is ready raft
// is told ErrSnapshotTemporarilyUnavailable and asks again later.
//
// Applying one replaces the peer's range in the same synced batch as its
// new raft and region state: the store never exposes a half-applied
// snapshot, even after a crash.

// snapState is the applied state as of the last written apply batch: the
// only state a Pebble snapshot can be taken at.
type snapState struct {
	region      *metapb.Region
	applied     uint64
	appliedTerm uint64
}

func (ps *peerStorage) setSnapState(r *metapb.Region, applied, term uint64) {
	ps.snapMu.Lock()
	ps.durable = snapState{region: r, applied: applied, appliedTerm: term}
	ps.snapMu.Unlock()
}

func (ps *peerStorage) snapshot() (raftpb.Snapshot, error) {
	ps.snapMu.Lock()
	defer ps.snapMu.Unlock()
	if g := ps.generated; g != nil {
		ps.generated = nil
		// A snapshot older than the log's start would leave a gap.
		if g.Metadata.Index >= ps.apply.TruncatedIndex {
			return *g, nil
		}
	}
	if ps.generating {
		return raftpb.Snapshot{}, raft.ErrSnapshotTemporarilyUnavailable
	}
	st := ps.durable
	if !isInitialized(st.region) || st.applied == 0 {
		return raftpb.Snapshot{}, raft.ErrSnapshotTemporarilyUnavailable
	}
	ps.generating = true
	meta := raftpb.SnapshotMetadata{Index: st.applied, Term: st.appliedTerm, ConfState: confStateOf(st.region)}
	view := ps.db.NewSnapshot()
	ps.bg.Add(1)
	go func() {
		defer ps.bg.Done()
		data, err := buildSnapshotData(view, st.region)
		_ = view.Close()
		ps.snapMu.Lock()
		defer ps.snapMu.Unlock()
		ps.generating = false
		if err != nil {
			ps.snapFailure = err
			return
		}
		ps.generated = &raftpb.Snapshot{Data: data, Metadata: meta}
	}()
	return raftpb.Snapshot{}, raft.ErrSnapshotTemporarilyUnavailable
}

func buildSnapshotData(view *pebble.Snapshot, region *metapb.Region) ([]byte, error) {
	rs := &raftserverpb.RegionSnapshot{Region: region}
	for _, r := range mvcckey.EngineRanges(region.GetStartKey(), region.GetEndKey()) {
		it, err := view.NewIter(&pebble.IterOptions{LowerBound: r.Start, UpperBound: r.End})
		if err != nil {
			return nil, err
		}
		for ok := it.First(); ok; ok = it.Next() {
			v, err := it.ValueAndErr()
			if err != nil {
				it.Close()
				return nil, err
			}
			rs.Keys = append(rs.Keys, append([]byte(nil), it.Key()...))
			rs.Values = append(rs.Values, append([]byte(nil), v...))
		}
		if err := it.Close(); err != nil {
			return nil, err
		}
	}
	return proto.Marshal(rs)
}

// acceptSnapshot decides, before raft sees it, whether a snapshot may be
// applied here: it must be for this region and must not overlap another
// region of this store (that would happen if this peer missed a split or
// a merge the other one already saw; the range's owner must change first).
func (s *Store) acceptSnapshot(p *peer, msg *raftpb.Message) bool {
	if msg.Snapshot == nil {
		return false
	}
	rs := &raftserverpb.RegionSnapshot{}
	if err := proto.Unmarshal(msg.Snapshot.Data, rs); err != nil {
		return false
	}
	region := rs.GetRegion()
	if region.GetId() != p.regionID() || findStorePeer(region, s.cfg.StoreID) == nil {
		return false
	}
	if p.initialized() && isEpochStale(region.GetRegionEpoch(), p.region.GetRegionEpoch()) {
		return false
	}
	for _, q := range s.peers {
		if q != p && q.initialized() && rangesOverlap(q.region, region) {
			return false
		}
	}
	p.pendingSnap = rs
	p.pendingSnapIndex = msg.Snapshot.Metadata.Index
	return true
}

// isEpochStale reports whether a is older than b in either dimension.
func isEpochStale(a, b *metapb.RegionEpoch) bool {
	return a.GetVersion() < b.GetVersion() || a.GetConfVer() < b.GetConfVer()
}

// persistSnapshot writes the snapshot's data and the peer's new state
// into wb (the round's synced raft batch).
func (s *Store) persistSnapshot(wb *pebble.Batch, p *peer, snap raftpb.Snapshot) error {
	rs := p.pendingSnap
	if rs == nil || p.pendingSnapIndex != snap.Metadata.Index {
		rs = &raftserverpb.RegionSnapshot{}
		if err := proto.Unmarshal(snap.Data, rs); err != nil {
			return err
		}
	}
	p.pendingSnap = nil
	region := rs.GetRegion()
	if len(rs.Keys) != len(rs.Values) {
		return fmt.Errorf("snapshot has %d keys and %d values", len(rs.Keys), len(rs.Values))
	}
	if p.initialized() {
		deleteRegionData(wb, p.region)
	}
	deleteRegionData(wb, region)
	for i := range rs.Keys {
		_ = wb.Set(rs.Keys[i], rs.Values[i], nil)
	}
	rid := p.regionID()
	lo, hi := raftLogBounds(rid, 0, math.MaxUint64)
	_ = wb.DeleteRange(lo, hi, nil)
	idx, term := snap.Metadata.Index, snap.Metadata.Term
	checkSnapshotForward(rid, p.ps.apply.AppliedIndex, idx)
	p.ps.apply = raftserverpb.RaftApplyState{AppliedIndex: idx, TruncatedIndex: idx, TruncatedTerm: term}
	p.ps.appliedTerm = term
	p.ps.lastIndex, p.ps.lastTerm = idx, term
	p.ps.terms.reset()
	_ = wb.Set(applyStateKey(rid), mustMarshal(&p.ps.apply), nil)
	_ = wb.Set(regionStateKey(rid), mustMarshal(&raftserverpb.RegionLocalState{Region: region}), nil)
	p.snapRegion = region
	return nil
}

// afterSnapshot installs the snapshot's region once it is written.
func (p *peer) afterSnapshot(snap raftpb.Snapshot) {
	region := p.snapRegion
	p.snapRegion = nil
	p.props.failUpTo(snap.Metadata.Index, newNotLeader(p.regionID(), p.leaderPeer()))
	delete(p.s.tombstones, p.regionID())
	p.setRegion(region)
	p.ps.setSnapState(region, snap.Metadata.Index, snap.Metadata.Term)
	p.sizeDiffHint = p.s.cfg.RegionSplitSize // check its size soon if it leads
}

// deleteRegionData deletes every data key of region r.
func deleteRegionData(wb *pebble.Batch, r *metapb.Region) {
	for _, rg := range mvcckey.EngineRanges(r.GetStartKey(), r.GetEndKey()) {
		_ = wb.DeleteRange(rg.Start, rg.End, nil)
	}
}

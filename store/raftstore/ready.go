package raftstore

import (
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/shoaldb/shoal/proto/raftserverpb"
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
)

// One Ready round, batched across regions, in the order etcd raft's README
// prescribes:
//
//  1. collect the Ready of every peer with work;
//  2. write all their snapshots, entries and hard states in ONE Pebble
//     batch, synced if any of them must be (so a round costs one fsync
//     however many regions it serves) — a leader's messages leave before
//     this write (see sendsBeforePersist);
//  3. send all the other messages (one Transport.Send);
//  4. apply all committed entries in ONE batch that also carries each
//     region's apply state (not synced: committed entries are durable in
//     the synced log of a quorum and are re-applied from it after a crash,
//     and Pebble's WAL keeps batches in order, so the apply state never
//     gets ahead of the data it describes or of the log it truncates);
//  5. answer proposals and readers, then Advance every RawNode.
type readyItem struct {
	p  *peer
	rd raft.Ready
	// snapRegionApplied: a snapshot from this Ready was applied.
	snapApplied bool
}

func (s *Store) handleReadies() {
	var items []readyItem
	for id, p := range s.dirty {
		delete(s.dirty, id)
		if p.destroyed || !p.rn.HasReady() {
			// A snapshot raft did not take (stale) is not kept around.
			p.pendingSnap = nil
			continue
		}
		items = append(items, readyItem{p: p, rd: p.rn.Ready()})
	}
	if len(items) == 0 {
		return
	}

	// A leader replicates while it writes its own log (Raft thesis
	// 10.2.1; etcd's server does the same): its entries count towards a
	// quorum only after this round's Advance, i.e. after the write below.
	var early []*raftserverpb.RaftMessage
	for i := range items {
		if it := &items[i]; it.p.sendsBeforePersist(&it.rd) {
			early = it.p.appendMessages(early, it.rd.Messages)
			it.rd.Messages = nil
		}
	}
	if len(early) > 0 && s.trans != nil {
		s.trans.Send(early)
	}

	// 2. Persist.
	wb := s.db.NewBatch()
	mustSync := false
	for i := range items {
		it := &items[i]
		if !raft.IsEmptySnap(it.rd.Snapshot) {
			if err := s.persistSnapshot(wb, it.p, it.rd.Snapshot); err != nil {
				panic(fmt.Sprintf("raftstore: region %d: apply snapshot: %v", it.p.regionID(), err))
			}
			it.snapApplied = true
			mustSync = true
		}
		it.p.appendEntries(wb, it.rd.Entries)
		if !raft.IsEmptyHardState(it.rd.HardState) {
			it.p.ps.hardState = it.rd.HardState
			// An uninitialized peer keeps its raft state in memory only
			// (see maybeCreatePeer).
			if it.p.initialized() || it.snapApplied {
				hs, _ := it.rd.HardState.Marshal()
				_ = wb.Set(hardStateKey(it.p.regionID()), hs, nil)
			}
		}
		mustSync = mustSync || it.rd.MustSync
	}
	if !wb.Empty() {
		opt := pebble.NoSync
		if mustSync {
			opt = pebble.Sync
		}
		if err := wb.Commit(opt); err != nil {
			panic(fmt.Sprintf("raftstore: persist raft state: %v", err))
		}
	}
	_ = wb.Close()
	for i := range items {
		it := &items[i]
		it.p.pendingSnap = nil
		if it.snapApplied {
			it.p.afterSnapshot(it.rd.Snapshot)
		}
		if it.rd.SoftState != nil {
			it.p.onSoftState(it.rd.SoftState)
		}
		it.p.indexProposals(it.rd.Entries)
		for _, rs := range it.rd.ReadStates {
			it.p.reads.onReadState(rs.RequestCtx, rs.Index)
		}
	}

	// 3. Send.
	var out []*raftserverpb.RaftMessage
	for i := range items {
		out = items[i].p.appendMessages(out, items[i].rd.Messages)
	}
	if len(out) > 0 && s.trans != nil {
		s.trans.Send(out)
	}

	// 4. Apply.
	ac := &applyContext{wb: s.db.NewBatch()}
	for i := range items {
		it := &items[i]
		if len(it.rd.CommittedEntries) > 0 {
			s.applyEntries(ac, it.p, it.rd.CommittedEntries)
		}
	}
	if !ac.wb.Empty() {
		if err := ac.wb.Commit(pebble.NoSync); err != nil {
			panic(fmt.Sprintf("raftstore: apply: %v", err))
		}
	}
	_ = ac.wb.Close()

	// 5. Answer, run post-apply actions, Advance.
	for _, r := range ac.results {
		r.pr.finish(r.err)
	}
	for i := range items {
		p := items[i].p
		p.ps.setSnapState(p.region, p.ps.apply.AppliedIndex, p.ps.appliedTerm)
		p.reads.release(p.ps.apply.AppliedIndex)
		p.checkLeaderReady()
		checkLeaseHolder(p)
	}
	for _, f := range ac.after {
		f()
	}
	for i := range items {
		p := items[i].p
		if p.destroyed {
			continue
		}
		if p.pendingRemove {
			s.destroyPeer(p)
			continue
		}
		p.rn.Advance(items[i].rd)
		if p.rn.HasReady() {
			s.markDirty(p)
		}
	}
}

// sendsBeforePersist reports whether rd's messages may leave before rd is
// persisted: etcd raft allows it for messages that depend only on entries
// of the same Ready, so a leader's messages may go first unless rd changes
// the term or vote (a vote must be durable before anyone hears of it) or
// carries a snapshot.
func (p *peer) sendsBeforePersist(rd *raft.Ready) bool {
	if len(rd.Messages) == 0 || !raft.IsEmptySnap(rd.Snapshot) {
		return false
	}
	leader := p.isLeader
	if rd.SoftState != nil {
		leader = rd.SoftState.RaftState == raft.StateLeader
	}
	if !leader {
		return false
	}
	hs := rd.HardState
	return raft.IsEmptyHardState(hs) || (hs.Term == p.ps.hardState.Term && hs.Vote == p.ps.hardState.Vote)
}

// appendEntries writes new log entries, deleting any conflicting tail
// they replace.
func (p *peer) appendEntries(wb *pebble.Batch, ents []raftpb.Entry) {
	if len(ents) == 0 {
		return
	}
	rid := p.regionID()
	for i := range ents {
		b, err := ents[i].Marshal()
		if err != nil {
			panic(err)
		}
		_ = wb.Set(raftLogKey(rid, ents[i].Index), b, nil)
		p.ps.terms.add(ents[i].Index, ents[i].Term)
	}
	last := ents[len(ents)-1]
	if p.ps.lastIndex > last.Index {
		lo, hi := raftLogBounds(rid, last.Index+1, p.ps.lastIndex+1)
		_ = wb.DeleteRange(lo, hi, nil)
	}
	p.ps.lastIndex, p.ps.lastTerm = last.Index, last.Term
}

// indexProposals matches the entries a Ready persisted to this peer's
// waiting proposals (see proposalQueue).
func (p *peer) indexProposals(ents []raftpb.Entry) {
	if len(p.props.unindexed) == 0 {
		return
	}
	for i := range ents {
		e := &ents[i]
		var id uint64
		var ok bool
		switch e.Type {
		case raftpb.EntryNormal:
			id, ok = peekProposalID(e.Data)
		case raftpb.EntryConfChangeV2:
			var cc raftpb.ConfChangeV2
			if cc.Unmarshal(e.Data) == nil {
				id, ok = peekProposalID(cc.Context)
			}
		}
		if !ok {
			continue
		}
		if old := p.props.indexEntry(id, e.Index, e.Term); old != nil {
			old.finish(newNotLeader(p.regionID(), p.leaderPeer()))
		}
	}
	p.props.dropUnindexed(func(pr *proposal) error {
		if pr.cc != nil && p.isLeader {
			return errConfChangeRefused
		}
		return newNotLeader(p.regionID(), p.leaderPeer())
	})
}

// appendMessages wraps raft messages for the transport.
func (p *peer) appendMessages(out []*raftserverpb.RaftMessage, msgs []raftpb.Message) []*raftserverpb.RaftMessage {
	for i := range msgs {
		m := &msgs[i]
		p.noteOutgoing(m)
		to := p.findPeer(m.To)
		if to == nil {
			if m.Type == raftpb.MsgSnap {
				p.rn.ReportSnapshot(m.To, raft.SnapshotFailure)
			}
			continue
		}
		b, err := m.Marshal()
		if err != nil {
			panic(err)
		}
		out = append(out, &raftserverpb.RaftMessage{
			RegionId:    p.regionID(),
			FromPeer:    p.self(),
			ToPeer:      to,
			RegionEpoch: p.region.GetRegionEpoch(),
			Message:     b,
			StartKey:    p.region.GetStartKey(),
			EndKey:      p.region.GetEndKey(),
		})
	}
	return out
}

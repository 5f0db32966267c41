package raftstore

import (
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/tracker"
)

// Raft log GC. A leader whose log holds more than RaftLogGCCountLimit
// applied entries proposes an admin CompactLog through raft, so every
// replica truncates at the same index and records it in its apply state
// (the truncation is applied in the same batch as the apply state). The
// index is the slowest follower's match when it is not too far behind,
// else the applied index: a follower that far behind catches up with a
// snapshot instead.

func (s *Store) maybeCompactLog(p *peer) {
	applied, truncated := p.ps.apply.AppliedIndex, p.ps.apply.TruncatedIndex
	limit := s.cfg.RaftLogGCCountLimit
	if applied <= truncated || applied-truncated <= limit {
		return
	}
	minMatch := applied
	p.rn.WithProgress(func(id uint64, _ raft.ProgressType, pr tracker.Progress) {
		if pr.Match < minMatch {
			minMatch = pr.Match
		}
	})
	target := applied
	if minMatch > truncated && applied-minMatch <= limit {
		target = minMatch
	}
	term, err := p.ps.Term(target)
	if err != nil {
		return
	}
	ep := p.region.GetRegionEpoch()
	cmd := &command{kind: cmdCompactLog, proposalID: s.newProposalID(), regionID: p.regionID(),
		confVer: ep.GetConfVer(), version: ep.GetVersion(), compactIndex: target, compactTerm: term}
	s.proposeOnLoop(&proposal{regionID: p.regionID(), id: cmd.proposalID, data: cmd.encode()})
}

func (s *Store) applyCompactLog(ac *applyContext, p *peer, cmd *command) error {
	st := &p.ps.apply
	if cmd.compactIndex <= st.TruncatedIndex {
		return nil
	}
	if cmd.compactIndex > st.AppliedIndex {
		// Cannot happen: the index was applied on the proposer before the
		// entry was proposed, so it is applied here before the entry.
		return nil
	}
	lo, hi := raftLogBounds(p.regionID(), 0, cmd.compactIndex+1)
	_ = ac.wb.DeleteRange(lo, hi, nil)
	st.TruncatedIndex, st.TruncatedTerm = cmd.compactIndex, cmd.compactTerm
	p.ps.terms.compact(cmd.compactIndex)
	return nil
}

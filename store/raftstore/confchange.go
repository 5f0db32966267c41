package raftstore

import (
	"context"
	"fmt"

	"github.com/shoaldb/shoal/proto/metapb"
	"github.com/shoaldb/shoal/proto/pdpb"
	"github.com/shoaldb/shoal/proto/raftserverpb"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// Membership changes are single-step ConfChangeV2s (one peer at a time,
// no joint consensus): add a learner, promote a learner to voter (add
// node on an existing learner), remove a peer. The entry's context is a
// command carrying the peer and the epoch it was planned under; each
// applied change bumps conf_ver. A change whose conf_ver is stale, or
// that does not fit the region (adding a present peer, removing an
// absent one), is not applied by any replica (raft is not told of it).
//
// A removed peer destroys itself when it applies its own removal, or when
// the leader, having applied it, tells it so with a tombstone message (it
// may never receive the entry: the leader stops replicating to it).

// ChangeType is a membership change.
type ChangeType int

const (
	AddLearner ChangeType = iota
	// PromoteLearner makes an existing learner a voter (also adds a voter
	// directly if the peer is absent).
	PromoteLearner
	RemovePeer
)

func confChangeTypeFromPD(t pdpb.ConfChangeType) (ChangeType, bool) {
	switch t {
	case pdpb.ConfChangeType_AddLearnerNode:
		return AddLearner, true
	case pdpb.ConfChangeType_AddNode:
		return PromoteLearner, true
	case pdpb.ConfChangeType_RemoveNode:
		return RemovePeer, true
	}
	return 0, false
}

func (s *Store) newConfChangeProposal(p *peer, change ChangeType, target *metapb.Peer) *proposal {
	target = proto.Clone(target).(*metapb.Peer)
	var t raftpb.ConfChangeType
	switch change {
	case AddLearner:
		t = raftpb.ConfChangeAddLearnerNode
		target.Role = metapb.PeerRole_Learner
	case PromoteLearner:
		t = raftpb.ConfChangeAddNode
		target.Role = metapb.PeerRole_Voter
	case RemovePeer:
		t = raftpb.ConfChangeRemoveNode
	}
	ep := p.region.GetRegionEpoch()
	cmd := &command{kind: cmdConfChange, proposalID: s.newProposalID(), regionID: p.regionID(),
		confVer: ep.GetConfVer(), version: ep.GetVersion(), peer: target}
	cc := &raftpb.ConfChangeV2{
		Changes: []raftpb.ConfChangeSingle{{Type: t, NodeID: target.GetId()}},
		Context: cmd.encode(),
	}
	return &proposal{regionID: p.regionID(), id: cmd.proposalID, cc: cc, check: checkVersion(ep)}
}

// ChangePeer proposes a membership change of a region led by this store
// and waits until it is applied here. For AddLearner the peer's id must be
// new (allocated by PD) and its store set.
func (s *Store) ChangePeer(ctx context.Context, regionID uint64, change ChangeType, target *metapb.Peer) error {
	var pr *proposal
	err := s.call(func() error {
		p := s.peers[regionID]
		if p == nil {
			return newRegionNotFound(regionID)
		}
		if !p.isLeader {
			return newNotLeader(regionID, p.leaderPeer())
		}
		pr = s.newConfChangeProposal(p, change, target)
		return nil
	})
	if err != nil {
		return err
	}
	return s.submit(ctx, pr)
}

func (s *Store) applyConfChange(ac *applyContext, p *peer, cc raftpb.ConfChangeV2) error {
	cmd, err := decodeCommand(cc.Context)
	if err != nil || cmd.kind != cmdConfChange || len(cc.Changes) != 1 {
		return fmt.Errorf("raftstore: region %d: unsupported conf change %v", p.regionID(), cc)
	}
	checkCommandRegion(p.regionID(), cmd)
	r := p.region
	if cmd.confVer != r.GetRegionEpoch().GetConfVer() {
		return s.epochNotMatch(r)
	}
	ch := cc.Changes[0]
	target := cmd.peer
	if ch.NodeID != target.GetId() {
		return fmt.Errorf("raftstore: conf change node %d differs from its peer %d", ch.NodeID, target.GetId())
	}
	var existing *metapb.Peer
	idx := -1
	for i, m := range r.GetPeers() {
		if m.GetId() == target.GetId() {
			existing, idx = m, i
		} else if m.GetStoreId() == target.GetStoreId() && ch.Type != raftpb.ConfChangeRemoveNode {
			return fmt.Errorf("raftstore: region %d already has peer %d on store %d", r.GetId(), m.GetId(), m.GetStoreId())
		}
	}
	nr := proto.Clone(r).(*metapb.Region)
	switch ch.Type {
	case raftpb.ConfChangeAddLearnerNode:
		if existing != nil {
			return fmt.Errorf("raftstore: peer %d already in region %d", target.GetId(), r.GetId())
		}
		nr.Peers = append(nr.Peers, &metapb.Peer{Id: target.GetId(), StoreId: target.GetStoreId(), Role: metapb.PeerRole_Learner})
	case raftpb.ConfChangeAddNode:
		if existing != nil && existing.GetRole() == metapb.PeerRole_Voter {
			return fmt.Errorf("raftstore: peer %d is already a voter of region %d", target.GetId(), r.GetId())
		}
		if existing != nil {
			nr.Peers[idx].Role = metapb.PeerRole_Voter
		} else {
			nr.Peers = append(nr.Peers, &metapb.Peer{Id: target.GetId(), StoreId: target.GetStoreId(), Role: metapb.PeerRole_Voter})
		}
	case raftpb.ConfChangeRemoveNode:
		if existing == nil {
			return fmt.Errorf("raftstore: peer %d not in region %d", target.GetId(), r.GetId())
		}
		nr.Peers = append(nr.Peers[:idx:idx], nr.Peers[idx+1:]...)
	default:
		return fmt.Errorf("raftstore: unsupported conf change type %v", ch.Type)
	}
	nr.RegionEpoch.ConfVer++
	_ = ac.wb.Set(regionStateKey(nr.GetId()), mustMarshal(&raftserverpb.RegionLocalState{Region: nr}), nil)
	p.rn.ApplyConfChange(cc)
	if ch.Type == raftpb.ConfChangeRemoveNode {
		// Keep the removed peer's address: raft may still answer it.
		p.peerCache[existing.GetId()] = existing
	}
	p.setRegion(nr)
	s.markDirty(p)
	if ch.Type == raftpb.ConfChangeRemoveNode {
		if target.GetId() == p.peerID {
			p.pendingRemove = true
		} else if p.isLeader {
			removed := existing
			ac.after = append(ac.after, func() { s.sendTombstone(p, removed) })
		}
	}
	if p.isLeader {
		ac.after = append(ac.after, func() { s.heartbeatPD(p) })
	}
	return nil
}

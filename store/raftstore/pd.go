package raftstore

import (
	"context"
	"time"

	"github.com/shoaldb/shoal/proto/metapb"
	"github.com/shoaldb/shoal/proto/pdpb"
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/tracker"
)

// PDClient is the part of the placement driver a store needs. The real
// client (pd/pdclient) adapts to it; tests fake it.
//
// Operators PD decides on (add/remove/promote a peer, transfer leadership)
// come back asynchronously on PD's heartbeat stream; the adapter passes
// each RegionHeartbeatResponse to Store.HandleRegionHeartbeatResponse.
type PDClient interface {
	// AskBatchSplit allocates a new region id and peer ids (one per peer
	// of region) for each of count splits.
	AskBatchSplit(ctx context.Context, region *metapb.Region, count uint32) ([]*pdpb.SplitID, error)
	// ReportBatchSplit tells PD the regions a split produced.
	ReportBatchSplit(ctx context.Context, regions []*metapb.Region) error
	// RegionHeartbeat reports a region led by this store.
	RegionHeartbeat(ctx context.Context, req *pdpb.RegionHeartbeatRequest) error
}

const pdTimeout = 5 * time.Second

// pdWorker runs PD calls off the raft goroutine, one at a time.
func (s *Store) pdWorker() {
	defer s.wg.Done()
	for {
		select {
		case <-s.stopCh:
			return
		case f := <-s.pdCh:
			f()
		}
	}
}

// runPD queues f for the PD worker; it is dropped if the queue is full
// (every PD task is retried by a later tick).
func (s *Store) runPD(f func()) {
	if s.pd == nil {
		return
	}
	select {
	case s.pdCh <- f:
	default:
	}
}

// heartbeatPD reports region p to PD (leaders only). On the raft goroutine.
func (s *Store) heartbeatPD(p *peer) {
	if s.pd == nil || !p.isLeader || !p.initialized() {
		return
	}
	req := &pdpb.RegionHeartbeatRequest{
		Region:          p.region,
		Leader:          p.self(),
		ApproximateSize: p.approximateSize,
		Term:            p.rn.BasicStatus().Term,
	}
	now := time.Now()
	for _, m := range p.region.GetPeers() {
		if m.GetId() == p.peerID {
			continue
		}
		if heard, ok := p.lastHeard[m.GetId()]; ok && now.Sub(heard) > s.cfg.MaxPeerDownDuration {
			req.DownPeers = append(req.DownPeers, &pdpb.PeerStats{Peer: m, DownSeconds: uint64(now.Sub(heard) / time.Second)})
		}
	}
	// Pending: peers that need a snapshot or are still catching up on it,
	// learners the leader is not yet replicating to normally (PD promotes
	// a learner only once it is not pending), and members raft does not
	// track yet.
	truncated := p.ps.apply.TruncatedIndex
	tracked := map[uint64]bool{}
	p.rn.WithProgress(func(id uint64, typ raft.ProgressType, pr tracker.Progress) {
		tracked[id] = true
		if id == p.peerID {
			return
		}
		caughtUp := pr.Match >= truncated && pr.State != tracker.StateSnapshot
		if typ == raft.ProgressTypeLearner && pr.State != tracker.StateReplicate {
			caughtUp = false
		}
		if caughtUp {
			return
		}
		if m := p.findPeer(id); m != nil {
			req.PendingPeers = append(req.PendingPeers, m)
		}
	})
	for _, m := range p.region.GetPeers() {
		if !tracked[m.GetId()] {
			req.PendingPeers = append(req.PendingPeers, m)
		}
	}
	s.runPD(func() {
		ctx, cancel := context.WithTimeout(s.ctx, pdTimeout)
		defer cancel()
		_ = s.pd.RegionHeartbeat(ctx, req)
	})
}

// HandleRegionHeartbeatResponse carries out the operator PD attached to a
// heartbeat response: a peer change or a leadership transfer. A response
// for another epoch of the region is stale and ignored.
func (s *Store) HandleRegionHeartbeatResponse(resp *pdpb.RegionHeartbeatResponse) {
	if resp == nil {
		return
	}
	s.runTask(func() {
		p := s.peers[resp.GetRegionId()]
		if p == nil || !p.isLeader {
			return
		}
		ep := resp.GetRegionEpoch()
		if ep != nil && (ep.GetConfVer() != p.region.GetRegionEpoch().GetConfVer() || ep.GetVersion() != p.region.GetRegionEpoch().GetVersion()) {
			return
		}
		if tl := resp.GetTransferLeader(); tl != nil && tl.GetPeer() != nil {
			p.rn.TransferLeader(tl.GetPeer().GetId())
			s.markDirty(p)
		}
		if cp := resp.GetChangePeer(); cp != nil && cp.GetPeer() != nil {
			change, ok := confChangeTypeFromPD(cp.GetChangeType())
			if ok {
				pr := s.newConfChangeProposal(p, change, cp.GetPeer())
				s.proposeOnLoop(pr)
			}
		}
	})
}

// Stats returns the store's figures for PD's store heartbeat (region and
// leader counts, approximate used size); the caller fills capacity.
func (s *Store) Stats() *pdpb.StoreStats {
	st := &pdpb.StoreStats{StoreId: s.cfg.StoreID}
	for _, p := range s.router.all() {
		v := p.view.Load()
		if !isInitialized(v.region) {
			continue
		}
		st.RegionCount++
		if v.isLeader {
			st.LeaderCount++
		}
	}
	if m := s.db.Metrics(); m != nil {
		st.UsedSize = m.DiskSpaceUsage()
	}
	st.IsBusy = len(s.propCh) > cap(s.propCh)/2
	return st
}

package raftstore

import (
	"bytes"
	"context"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/shoaldb/shoal/proto/metapb"
	"github.com/shoaldb/shoal/proto/raftserverpb"
	"github.com/shoaldb/shoal/store/mvcc/mvcckey"
	"google.golang.org/protobuf/proto"
)

// Splits by size:
//
//  1. A leader whose region took enough writes since its last check runs
//     the split checker off the raft goroutine, on a Pebble snapshot: it
//     sums the region's data and, past Config.RegionSplitSize, picks the
//     user key at the middle of its write records (so all versions of a
//     key stay on one side).
//  2. It asks PD for the new region's and peers' ids (AskBatchSplit) and
//     proposes an admin split carrying the epoch it planned under.
//  3. Every replica applies it at the same log position: the region keeps
//     [start, key), a new region gets [key, end), both with version+1, and
//     the new region's peer on this store is created with the initial raft
//     state; the leader reports the split to PD.

// maybeSplitCheck starts a split check of a leader's region if enough was
// written since the last one. On the raft goroutine.
func (s *Store) maybeSplitCheck(p *peer) {
	if p.splitChecking || s.pd == nil || !p.initialized() {
		return
	}
	if p.approximateSize != 0 && p.sizeDiffHint < s.cfg.RegionSplitSize/8 {
		return
	}
	p.splitChecking = true
	p.sizeDiffHint = 0
	region := p.region
	view := s.db.NewSnapshot()
	limit := s.cfg.RegionSplitSize
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		size, key, err := findSplitKey(view, region, limit)
		_ = view.Close()
		s.runTask(func() {
			p.splitChecking = false
			if err != nil || p.destroyed {
				return
			}
			p.approximateSize = size
			if key != nil && p.isLeader && proto.Equal(p.region.GetRegionEpoch(), region.GetRegionEpoch()) {
				s.askSplit(p, region, key, nil)
			}
		})
	}()
}

// findSplitKey returns the size of region's data and, if it exceeds
// limit, a user key splitting it in about equal halves.
func findSplitKey(view *pebble.Snapshot, region *metapb.Region, limit uint64) (uint64, []byte, error) {
	ranges := mvcckey.EngineRanges(region.GetStartKey(), region.GetEndKey())
	var total uint64
	sizes := make([]uint64, len(ranges))
	for i, r := range ranges {
		it, err := view.NewIter(&pebble.IterOptions{LowerBound: r.Start, UpperBound: r.End})
		if err != nil {
			return 0, nil, err
		}
		for ok := it.First(); ok; ok = it.Next() {
			sizes[i] += uint64(len(it.Key())) + valueLen(it)
		}
		if err := it.Close(); err != nil {
			return 0, nil, err
		}
		total += sizes[i]
	}
	if total <= limit {
		return total, nil, nil
	}
	// Split where the records of the largest data keyspace (normally the
	// write records, which carry short values inline) reach half.
	best := 0
	for i := range sizes {
		if sizes[i] > sizes[best] {
			best = i
		}
	}
	r := ranges[best]
	it, err := view.NewIter(&pebble.IterOptions{LowerBound: r.Start, UpperBound: r.End})
	if err != nil {
		return 0, nil, err
	}
	defer it.Close()
	var acc uint64
	for ok := it.First(); ok; ok = it.Next() {
		acc += uint64(len(it.Key())) + valueLen(it)
		if acc < sizes[best]/2 {
			continue
		}
		uk, err := mvcckey.UserKey(it.Key())
		if err != nil {
			return 0, nil, err
		}
		// The left part must not be empty: the key must be above start.
		if bytes.Compare(uk, region.GetStartKey()) > 0 {
			return total, uk, nil
		}
	}
	return total, nil, it.Error()
}

// askSplit asks PD for ids and then proposes the split of region at key.
// done (optional) receives the outcome. On the raft goroutine.
func (s *Store) askSplit(p *peer, region *metapb.Region, key []byte, done chan error) {
	finish := func(err error) {
		if done != nil {
			done <- err
		}
	}
	if s.pd == nil {
		finish(fmt.Errorf("raftstore: no PD to allocate split ids"))
		return
	}
	s.runPD(func() {
		ctx, cancel := context.WithTimeout(s.ctx, pdTimeout)
		ids, err := s.pd.AskBatchSplit(ctx, region, 1)
		cancel()
		if err == nil && (len(ids) != 1 || len(ids[0].GetNewPeerIds()) != len(region.GetPeers())) {
			err = fmt.Errorf("raftstore: PD returned %d split ids for a region of %d peers", len(ids), len(region.GetPeers()))
		}
		if err != nil {
			// Check again at the next opportunity.
			s.runTask(func() {
				if q := s.peers[region.GetId()]; q != nil {
					q.sizeDiffHint = s.cfg.RegionSplitSize
				}
			})
			finish(err)
			return
		}
		cmd := &command{
			kind: cmdSplit, proposalID: s.newProposalID(), regionID: region.GetId(),
			confVer: region.GetRegionEpoch().GetConfVer(), version: region.GetRegionEpoch().GetVersion(),
			splitKey: key, newRegionID: ids[0].GetNewRegionId(), newPeerIDs: ids[0].GetNewPeerIds(),
		}
		pr := &proposal{regionID: region.GetId(), id: cmd.proposalID, data: cmd.encode(), check: checkVersion(region.GetRegionEpoch())}
		if done != nil {
			pr.done = done
		}
		s.runTask(func() { s.proposeOnLoop(pr) })
	})
}

func checkVersion(ep *metapb.RegionEpoch) func(p *peer) error {
	return func(p *peer) error {
		if ep.GetVersion() != p.region.GetRegionEpoch().GetVersion() || ep.GetConfVer() != p.region.GetRegionEpoch().GetConfVer() {
			return p.s.epochNotMatch(p.region)
		}
		return nil
	}
}

// SplitRegion splits a region at user key splitKey (PD allocates the new
// ids) and waits until the split is applied on this store's leader peer.
func (s *Store) SplitRegion(ctx context.Context, regionID uint64, splitKey []byte) error {
	done := make(chan error, 1)
	err := s.call(func() error {
		p := s.peers[regionID]
		if p == nil {
			return newRegionNotFound(regionID)
		}
		if !p.isLeader {
			return newNotLeader(regionID, p.leaderPeer())
		}
		s.askSplit(p, p.region, append([]byte(nil), splitKey...), done)
		return nil
	})
	if err != nil {
		return err
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	case <-s.loopDone:
		return ErrStopped
	}
}

// applySplit applies an admin split at its log position.
func (s *Store) applySplit(ac *applyContext, p *peer, cmd *command) error {
	r := p.region
	ep := r.GetRegionEpoch()
	if cmd.version != ep.GetVersion() || cmd.confVer != ep.GetConfVer() {
		return s.epochNotMatch(r)
	}
	key := cmd.splitKey
	if bytes.Compare(key, r.GetStartKey()) <= 0 || (len(r.GetEndKey()) > 0 && bytes.Compare(key, r.GetEndKey()) >= 0) {
		return newKeyNotInRegion(key, r)
	}
	if len(cmd.newPeerIDs) != len(r.GetPeers()) {
		return fmt.Errorf("raftstore: split of region %d: %d new peer ids for %d peers", r.GetId(), len(cmd.newPeerIDs), len(r.GetPeers()))
	}
	newEpoch := &metapb.RegionEpoch{ConfVer: ep.GetConfVer(), Version: ep.GetVersion() + 1}
	left := proto.Clone(r).(*metapb.Region)
	left.EndKey = append([]byte(nil), key...)
	left.RegionEpoch = newEpoch
	right := &metapb.Region{
		Id: cmd.newRegionID, StartKey: append([]byte(nil), key...), EndKey: append([]byte(nil), r.GetEndKey()...),
		RegionEpoch: proto.Clone(newEpoch).(*metapb.RegionEpoch),
	}
	for i, m := range r.GetPeers() {
		right.Peers = append(right.Peers, &metapb.Peer{Id: cmd.newPeerIDs[i], StoreId: m.GetStoreId(), Role: m.GetRole()})
	}
	checkSplit(r, left, right)
	_ = ac.wb.Set(regionStateKey(left.GetId()), mustMarshal(&raftserverpb.RegionLocalState{Region: left}), nil)
	p.setRegion(left)
	// Both halves are checked again soon: each may still be too big.
	p.approximateSize /= 2
	p.sizeDiffHint = s.cfg.RegionSplitSize

	existing := s.peers[right.GetId()]
	createRight := s.tombstones[right.GetId()] == nil && (existing == nil || !existing.initialized())
	if createRight {
		writeInitialState(ac.wb, right)
	}
	wasLeader := p.isLeader
	ac.after = append(ac.after, func() {
		if createRight {
			s.createSplitPeer(right, wasLeader)
		}
		if wasLeader && s.pd != nil {
			regions := []*metapb.Region{left, right}
			s.runPD(func() {
				ctx, cancel := context.WithTimeout(s.ctx, pdTimeout)
				defer cancel()
				_ = s.pd.ReportBatchSplit(ctx, regions)
			})
			s.heartbeatPD(p)
		}
	})
	return nil
}

// createSplitPeer creates this store's peer of a region born from a split
// (its initial state is written). The peer of the old leader's store
// campaigns at once, so the new region gets a leader without waiting for
// an election timeout.
func (s *Store) createSplitPeer(region *metapb.Region, campaign bool) {
	if old := s.peers[region.GetId()]; old != nil {
		// An uninitialized peer created from a message: it has no state.
		s.forgetPeer(old, newRegionNotFound(region.GetId()))
	}
	self := findStorePeer(region, s.cfg.StoreID)
	ps, err := loadPeerStorage(s.db, &s.wg, region)
	if err != nil || self == nil {
		panic(fmt.Sprintf("raftstore: create split region %d: %v", region.GetId(), err))
	}
	np, err := s.newPeer(region, self.GetId(), ps)
	if err != nil {
		panic(err)
	}
	np.sizeDiffHint = s.cfg.RegionSplitSize
	s.addPeer(np)
	if campaign {
		_ = np.rn.Campaign()
	}
}

func valueLen(it *pebble.Iterator) uint64 {
	v, err := it.ValueAndErr()
	if err != nil {
		return 0
	}
	return uint64(len(v))
}

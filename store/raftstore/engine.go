package raftstore

import (
	"context"

	"github.com/shoaldb/shoal/store/engine"
	"github.com/shoaldb/shoal/store/mvcc/mvcckey"
)

// Engine returns the store's engine.Engine for store/mvcc.
//
// NewSnapshot is a snapshot of the local Pebble: it is consistent, but
// linearizable only after RegionRead for the region being read returned
// (the store service calls it before every MVCC command).
//
// A Batch's Commit proposes its writes through raft to the region holding
// its first key and returns once they are applied on this (leader) peer,
// so snapshots taken afterwards see them. They are durable then: the
// entry is in the synced logs of a quorum; the sync argument changes
// nothing. Every key must lie in that one region (a command's keys do; the
// client splits requests by region). Commit fails with a RegionError
// (NotLeader, EpochNotMatch, KeyNotInRegion, RegionNotFound, ServerIsBusy)
// when the writes were certainly not applied, and with ErrTimeout when the
// outcome is unknown.
//
// A batch is refused (NotLeader naming this store, so the client retries
// here) unless, when it was created, the region's peer was a leader that
// had applied an entry of its own term. The MVCC command that fills a
// batch takes its snapshot just before creating it, and a snapshot from
// before that point may lack writes of an earlier leader that were
// committed but not yet applied here. From then on the leader's latches
// order commands, and each one's writes are applied before it returns.
func (s *Store) Engine() engine.Engine { return storeEngine{s} }

type storeEngine struct{ s *Store }

func (e storeEngine) NewSnapshot() engine.Snapshot { return e.s.eng.NewSnapshot() }
func (e storeEngine) NewBatch() engine.Batch {
	return &proposalBatch{s: e.s, leaderGen: e.s.leaderGen.Load()}
}

// Close is a no-op: the Store owns the engine (Store.Close closes it).
func (e storeEngine) Close() error { return nil }

type proposalBatch struct {
	s         *Store
	leaderGen uint64
	ops       []byte
	firstKey  []byte
	count     int
}

func (b *proposalBatch) Set(k, v []byte) {
	if b.count == 0 {
		b.firstKey = append(b.firstKey[:0], k...)
	}
	b.ops = appendOp(b.ops, opSet, k, v)
	b.count++
}

func (b *proposalBatch) Delete(k []byte) {
	if b.count == 0 {
		b.firstKey = append(b.firstKey[:0], k...)
	}
	b.ops = appendOp(b.ops, opDelete, k, nil)
	b.count++
}

func (b *proposalBatch) Count() int { return b.count }
func (b *proposalBatch) Close()     { b.ops, b.count = nil, 0 }

func (b *proposalBatch) Commit(bool) error {
	if b.count == 0 {
		return nil
	}
	uk, err := mvcckey.UserKey(b.firstKey)
	if err != nil {
		return err
	}
	p := b.s.router.byKey(uk)
	if p == nil {
		return newRegionNotFound(0)
	}
	v := p.view.Load()
	if !v.isLeader {
		return newNotLeader(v.region.GetId(), v.leader)
	}
	if err := checkKeysInRegion(b.ops, v.region); err != nil {
		return err
	}
	return b.s.proposeWrite(context.Background(), v.region.GetId(), v.region.GetRegionEpoch().GetConfVer(),
		v.region.GetRegionEpoch().GetVersion(), b.ops, b.leaderGen)
}

// proposeWrite proposes engine writes to a region planned under epoch
// version and waits for them to be applied.
func (s *Store) proposeWrite(ctx context.Context, regionID, confVer, version uint64, ops []byte, leaderGen uint64) error {
	cmd := &command{kind: cmdWrite, proposalID: s.newProposalID(), regionID: regionID, confVer: confVer, version: version, ops: ops}
	pr := &proposal{
		regionID: regionID, id: cmd.proposalID, data: cmd.encode(), leaderGen: leaderGen,
		check: func(p *peer) error {
			if p.region.GetRegionEpoch().GetVersion() != version {
				return p.s.epochNotMatch(p.region)
			}
			return nil
		},
	}
	return s.submit(ctx, pr)
}

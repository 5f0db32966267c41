package raftstore

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/shoaldb/shoal/proto/metapb"
)

// Linearizable reads use raft's ReadIndex (ReadOnlySafe): the leader
// records its commit index, confirms with a quorum of heartbeats that it
// is still the leader, and the read is served once this peer has applied
// up to that index. Every write acknowledged before the read began was
// applied at or below an index the leader had committed by then, so a
// snapshot taken after the wait includes it. Concurrent readers of a
// region share one ReadIndex per raft round.

// readReq is one reader waiting to be allowed to read a region.
type readReq struct {
	regionID uint64
	check    func(p *peer) error // epoch check, on the raft goroutine
	done     chan error          // buffered(1)
}

func (r *readReq) finish(err error) {
	if r.done != nil {
		r.done <- err
		r.done = nil
	}
}

type readBatch struct {
	reqs  []*readReq
	index uint64 // set when raft answered
}

// readQueue tracks a peer's readers from request to applied-index wait.
type readQueue struct {
	pending  []*readReq            // not yet sent to raft
	inflight map[string]*readBatch // by ReadIndex request context
	ready    []*readBatch          // have a read index, wait for apply
	seq      uint64
}

// issue sends one ReadIndex for all pending readers.
func (q *readQueue) issue(p *peer) {
	if len(q.pending) == 0 {
		return
	}
	q.seq++
	ctx := binary.BigEndian.AppendUint64(nil, q.seq)
	ctx = binary.BigEndian.AppendUint64(ctx, p.s.readCtxSalt)
	if q.inflight == nil {
		q.inflight = map[string]*readBatch{}
	}
	q.inflight[string(ctx)] = &readBatch{reqs: q.pending}
	q.pending = nil
	p.rn.ReadIndex(ctx)
}

// onReadState records raft's answer for a batch.
func (q *readQueue) onReadState(ctx []byte, index uint64) {
	b := q.inflight[string(ctx)]
	if b == nil {
		return
	}
	delete(q.inflight, string(ctx))
	b.index = index
	q.ready = append(q.ready, b)
}

// release lets the readers whose index is applied go.
func (q *readQueue) release(applied uint64) {
	kept := q.ready[:0]
	for _, b := range q.ready {
		if b.index <= applied {
			for _, r := range b.reqs {
				r.finish(nil)
			}
			continue
		}
		kept = append(kept, b)
	}
	for i := len(kept); i < len(q.ready); i++ {
		q.ready[i] = nil
	}
	q.ready = kept
}

// failAll fails the readers that have no read index yet. Readers with one
// stay: their index was confirmed by a quorum, so waiting for it to be
// applied still yields a linearizable read.
func (q *readQueue) failAll(err error) {
	for _, r := range q.pending {
		r.finish(err)
	}
	q.pending = nil
	for k, b := range q.inflight {
		for _, r := range b.reqs {
			r.finish(err)
		}
		delete(q.inflight, k)
	}
}

// failEverything also fails readers waiting for apply (peer destroyed).
func (q *readQueue) failEverything(err error) {
	q.failAll(err)
	for _, b := range q.ready {
		for _, r := range b.reqs {
			r.finish(err)
		}
	}
	q.ready = nil
}

// ---- routing reads: lease or ReadIndex ----

// CheckLeader checks, without consulting raft, that this store's peer of
// a region is its leader and that epoch (if given) has the region's
// current version. It is a fast pre-check; RegionRead is the one that
// makes a read linearizable.
func (s *Store) CheckLeader(regionID uint64, epoch *metapb.RegionEpoch) (*metapb.Region, error) {
	p := s.router.get(regionID)
	if p == nil {
		return nil, newRegionNotFound(regionID)
	}
	v := p.view.Load()
	if !v.isLeader {
		return nil, newNotLeader(regionID, v.leader)
	}
	if epoch != nil && epoch.GetVersion() != v.region.GetRegionEpoch().GetVersion() {
		return nil, s.epochNotMatch(v.region)
	}
	return v.region, nil
}

// RegionRead makes a read (or an MVCC command, whose checks read) of a
// region linearizable: it returns once this store's peer is known to be
// the leader of the current term and has applied everything committed
// before the call, so any engine snapshot taken after it returns sees
// every write acknowledged before the call. It returns the region as of
// the check (for key range checks) or a RegionError.
func (s *Store) RegionRead(ctx context.Context, regionID uint64, epoch *metapb.RegionEpoch) (*metapb.Region, error) {
	region, err := s.CheckLeader(regionID, epoch)
	if err != nil {
		return nil, err
	}
	if p := s.router.get(regionID); p != nil && p.leaseValid(monoNow()) {
		leaseReads.Add(1)
		return region, nil
	}
	readIndexReads.Add(1)
	done := make(chan error, 1)
	r := &readReq{regionID: regionID, done: done, check: func(p *peer) error {
		if epoch != nil && epoch.GetVersion() != p.region.GetRegionEpoch().GetVersion() {
			return s.epochNotMatch(p.region)
		}
		return nil
	}}
	select {
	case s.readCh <- r:
	case <-s.loopDone:
		return nil, ErrStopped
	default:
		return nil, newServerIsBusy("raft read queue is full")
	}
	timer := time.NewTimer(s.cfg.ProposalTimeout)
	defer timer.Stop()
	select {
	case err = <-done:
	case <-timer.C:
		err = ErrTimeout
	case <-ctx.Done():
		err = fmt.Errorf("%w: %v", ErrTimeout, ctx.Err())
	case <-s.loopDone:
		err = ErrStopped
	}
	if err != nil {
		return nil, err
	}
	p := s.router.get(regionID)
	if p == nil {
		return nil, newRegionNotFound(regionID)
	}
	return p.view.Load().region, nil
}

func (s *Store) onRead(r *readReq) {
	p := s.peers[r.regionID]
	if p == nil {
		r.finish(newRegionNotFound(r.regionID))
		return
	}
	if !p.isLeader {
		r.finish(newNotLeader(r.regionID, p.leaderPeer()))
		return
	}
	if err := r.check(p); err != nil {
		r.finish(err)
		return
	}
	// A read without a lease asks for one (maybeRenewLease).
	p.leaseUsed.Store(true)
	p.reads.pending = append(p.reads.pending, r)
	s.markDirty(p)
}

// epochNotMatch builds the error for a request planned under another
// epoch of region r: the current region and, after splits, its siblings
// on this store that cover the rest of the old range (the client
// refreshes from PD for the others).
func (s *Store) epochNotMatch(r *metapb.Region) *EpochNotMatchError {
	regions := []*metapb.Region{r}
	end := r.GetEndKey()
	for i := 0; i < 2 && len(end) > 0; i++ {
		q := s.router.byKey(end)
		if q == nil {
			break
		}
		qr := q.view.Load().region
		regions = append(regions, qr)
		end = qr.GetEndKey()
	}
	return newEpochNotMatch(regions...)
}

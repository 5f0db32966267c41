package raftstore

import (
	"encoding/binary"
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

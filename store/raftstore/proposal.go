package raftstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/raft/v3/raftpb"
)

// proposal is a command waiting for its entry to be applied on this peer.
type proposal struct {
	regionID uint64
	id       uint64
	data     []byte               // encoded command (normal entries)
	cc       *raftpb.ConfChangeV2 // conf changes: Context is the encoded command
	// leaderGen: the store's leadership generation when the proposer took
	// the snapshot its command was planned on (0: no check). The command
	// is refused if the peer became leader after that (see engine.go).
	leaderGen uint64
	// check runs on the raft goroutine just before proposing; an error
	// fails the proposal (epoch checks).
	check func(p *peer) error

	index, term uint64
	// proposedAt: monotonic time (monoNow) when raft took it; its
	// commit in the leader's term renews the lease from then (lease.go).
	proposedAt int64
	done       chan error // buffered(1); receives exactly one result
}

func (pr *proposal) finish(err error) {
	if pr.done != nil {
		pr.done <- err
		pr.done = nil
	}
}

// errConfChangeRefused: raft refused a conf change because another one is
// still pending.
var errConfChangeRefused = errors.New("raftstore: conf change refused: another one is pending")

// proposalQueue tracks a peer's proposals from Propose to apply.
//
// A proposal accepted by RawNode is in raft's unstable log and appears in
// the very next Ready's Entries, where it gets its (index, term); one
// missing there was dropped by a leadership change and fails with
// NotLeader. An indexed proposal is answered when its index is applied:
// with its result if the applied entry has its term, else (the entry was
// overwritten by another leader's) with NotLeader. A proposal never gets
// an ambiguous region error: region errors mean "not applied".
type proposalQueue struct {
	unindexed map[uint64]*proposal // by proposal id
	byIndex   map[uint64]*proposal
}

func (q *proposalQueue) addUnindexed(pr *proposal) {
	if q.unindexed == nil {
		q.unindexed = map[uint64]*proposal{}
	}
	q.unindexed[pr.id] = pr
}

// indexEntry records the index of a proposal whose entry was persisted.
// It returns a proposal that waited at the same index: its entry was
// overwritten.
func (q *proposalQueue) indexEntry(id, index, term uint64) (overwritten *proposal) {
	pr := q.unindexed[id]
	if pr == nil {
		return nil
	}
	delete(q.unindexed, id)
	pr.index, pr.term = index, term
	if q.byIndex == nil {
		q.byIndex = map[uint64]*proposal{}
	}
	overwritten = q.byIndex[index]
	q.byIndex[index] = pr
	return overwritten
}

// dropUnindexed fails the proposals a Ready did not persist.
func (q *proposalQueue) dropUnindexed(err func(pr *proposal) error) {
	for id, pr := range q.unindexed {
		pr.finish(err(pr))
		delete(q.unindexed, id)
	}
}

// take returns the proposal waiting for the entry at index, if any.
func (q *proposalQueue) take(index uint64) *proposal {
	pr := q.byIndex[index]
	if pr != nil {
		delete(q.byIndex, index)
	}
	return pr
}

// failUpTo fails every indexed proposal at or below index (a snapshot
// replaced that part of the log).
func (q *proposalQueue) failUpTo(index uint64, err error) {
	for i, pr := range q.byIndex {
		if i <= index {
			pr.finish(err)
			delete(q.byIndex, i)
		}
	}
}

func (q *proposalQueue) failAll(err error) {
	q.dropUnindexed(func(*proposal) error { return err })
	for i, pr := range q.byIndex {
		pr.finish(err)
		delete(q.byIndex, i)
	}
}

// ---- routing proposals to the raft goroutine ----

func (s *Store) newProposalID() uint64 { return s.nextProposalID.Add(1) }

// submit queues a proposal for the raft goroutine and waits for its
// result: nil once applied on this (leader) peer, a RegionError if it
// definitely was not applied, ErrTimeout if unknown.
func (s *Store) submit(ctx context.Context, pr *proposal) error {
	done := make(chan error, 1)
	pr.done = done
	select {
	case s.propCh <- pr:
	case <-s.loopDone:
		return ErrStopped
	default:
		return newServerIsBusy("raft proposal queue is full")
	}
	timer := time.NewTimer(s.cfg.ProposalTimeout)
	defer timer.Stop()
	select {
	case err := <-done:
		return err
	case <-timer.C:
		return ErrTimeout
	case <-ctx.Done():
		return fmt.Errorf("%w: %v", ErrTimeout, ctx.Err())
	case <-s.loopDone:
		select {
		case err := <-done:
			return err
		default:
			return ErrStopped
		}
	}
}

func (s *Store) onProposal(pr *proposal) {
	p := s.peers[pr.regionID]
	if p == nil {
		pr.finish(newRegionNotFound(pr.regionID))
		return
	}
	s.proposeOnLoop(pr)
}

// proposeOnLoop hands a proposal to raft (on the raft goroutine).
func (s *Store) proposeOnLoop(pr *proposal) {
	p := s.peers[pr.regionID]
	if p == nil {
		pr.finish(newRegionNotFound(pr.regionID))
		return
	}
	if !p.isLeader {
		pr.finish(newNotLeader(pr.regionID, p.leaderPeer()))
		return
	}
	if pr.leaderGen != 0 && (!p.leaderReady || p.leaderSinceGen > pr.leaderGen) {
		// The command was planned on a snapshot taken before this leader
		// had applied everything earlier leaders committed: it may have
		// missed some of their writes. The client retries here.
		pr.finish(newNotLeader(pr.regionID, p.self()))
		return
	}
	if pr.check != nil {
		if err := pr.check(p); err != nil {
			pr.finish(err)
			return
		}
	}
	var err error
	pr.proposedAt = monoNow()
	if pr.cc != nil {
		err = p.rn.ProposeConfChange(*pr.cc)
	} else {
		err = p.rn.Propose(pr.data)
	}
	if err != nil {
		pr.finish(newNotLeader(pr.regionID, p.leaderPeer()))
		return
	}
	p.props.addUnindexed(pr)
	s.markDirty(p)
}

package raftstore

import (
	"time"

	"go.etcd.io/raft/v3/raftpb"
)

// Leader leases let a leader serve reads (and the reads of MVCC commands)
// from its applied state without a ReadIndex round of heartbeats.
//
// Why a lease is safe. Let E be an entry this leader L proposed at time t0
// in its term T, committed by a quorum. Any peer W that becomes leader in
// a later term needs a quorum of votes, and a voter that holds E refuses a
// candidate whose log lacks it; the quorums intersect, so W holds E and
// received it after t0. Etcd raft resets a follower's election clock on
// every message from its leader, and W campaigns only once its clock has
// counted ElectionTicks ticks (randomized upwards) since then, or since
// its restart, which is later still. Ticks are processed at most one
// interval apart, except that one tick may wait in the ticker's buffer, so
// W cannot campaign before t0 + (ElectionTicks-2)*TickInterval. Until
// then no other leader can have acknowledged a write, and every write
// acknowledged in term T was applied by L before it was acknowledged;
// entries of earlier terms were applied before E. So a read that checks
// now < t0 + LeaderLease (LeaderLease below that bound, with a margin)
// sees every write acknowledged before it began. A paused process does
// not break this: the check uses the monotonic clock when the read
// arrives, and writes acknowledged before that were already applied here.
//
// What would break the argument, and how it is excluded:
//   - A forced campaign: MsgTimeoutNow (leader transfer) makes its target
//     campaign at once. The leader drops its lease before such a message
//     leaves this store and takes none for the rest of that term
//     (leaseSuspectTerm), even if the transfer is abandoned, since the
//     message may still arrive. Store.Campaign and the campaign of a
//     region created by a split are the only other forced campaigns; they
//     happen when a region has no leader that could hold a lease (a new
//     one-replica region, a split region's first election).
//   - Clock skew between processes: the monotonic clocks of one host run
//     at the same rate; LeaderLease keeps one tick of margin for timers.
//
// Renewal: each of the leader's own entries of its current term, once
// applied, extends the lease to its proposal time + LeaderLease. A leader
// that serves reads but writes nothing proposes an empty write when the
// lease runs low (maybeRenewLease), so read-only load keeps its lease.
// Without a lease, reads fall back to ReadIndex (read.go).

// monoBase anchors monoNow: time.Since reads the monotonic clock.
var monoBase = time.Now()

// monoNow is the monotonic time in nanoseconds since monoBase.
func monoNow() int64 { return int64(time.Since(monoBase)) }

// leaseValid reports whether reads may skip ReadIndex at monotonic time
// now. Safe from any goroutine.
func (p *peer) leaseValid(now int64) bool {
	if now >= p.leaseUntil.Load() {
		return false
	}
	if !p.leaseUsed.Load() {
		p.leaseUsed.Store(true)
	}
	return true
}

// renewLease extends the lease after the leader applied its own entry of
// term, proposed at monotonic time proposedAt. On the raft goroutine.
func (p *peer) renewLease(proposedAt int64, term uint64) {
	lease := p.s.cfg.LeaderLease
	if lease <= 0 || !p.isLeader || term != p.ps.hardState.Term || term == p.leaseSuspectTerm {
		return
	}
	until := proposedAt + int64(lease)
	if until > p.leaseUntil.Load() {
		p.leaseUntil.Store(until)
	}
}

// dropLease ends the lease (leadership lost, peer destroyed).
func (p *peer) dropLease() { p.leaseUntil.Store(0) }

// suspectLease ends the lease and refuses new ones for the current term:
// a leader transfer may make another peer campaign before it would time
// out.
func (p *peer) suspectLease() {
	p.leaseSuspectTerm = p.ps.hardState.Term
	p.dropLease()
}

// noteOutgoing drops the lease before a MsgTimeoutNow leaves the store.
func (p *peer) noteOutgoing(m *raftpb.Message) {
	if m.Type == raftpb.MsgTimeoutNow {
		p.suspectLease()
	}
}

// maybeRenewLease proposes an empty write when this leader's lease was
// used since it was last renewed and less than half of it is left, so a
// leader serving only reads keeps its lease. On a tick.
func (s *Store) maybeRenewLease(p *peer) {
	lease := int64(s.cfg.LeaderLease)
	if lease <= 0 || !p.leaderReady || !p.leaseUsed.Load() || p.ps.hardState.Term == p.leaseSuspectTerm {
		return
	}
	now := monoNow()
	if p.leaseUntil.Load()-now > lease/2 || now-p.lastRenewProposal < lease/4 {
		return
	}
	p.leaseUsed.Store(false)
	p.lastRenewProposal = now
	r := p.region
	cmd := &command{kind: cmdWrite, proposalID: s.newProposalID(), regionID: p.regionID(),
		confVer: r.GetRegionEpoch().GetConfVer(), version: r.GetRegionEpoch().GetVersion()}
	// Nobody waits for it: done stays nil, so finish is a no-op.
	s.proposeOnLoop(&proposal{regionID: p.regionID(), id: cmd.proposalID, data: cmd.encode()})
}

package raftstore

import (
	"bytes"
	"fmt"

	"github.com/shoaldb/shoal/proto/metapb"
	"github.com/shoaldb/shoal/store/internal/invariants"
)

// Checks of the state raftstore hands across its boundaries: the regions
// it publishes (router, epochs, splits), the order it applies the log in,
// and who serves reads on a lease. They run only in builds with the
// "invariants" tag (invariants.Enabled is a constant, so elsewhere they
// compile away) and panic on a violation: a violated invariant is a bug in
// this package, never a client's error. All run on the raft goroutine,
// except checkNoOverlap (under the router's lock).

// checkEpochAdvance: a region's epoch never goes back on a store (neither
// conf_ver nor version), whichever peer incarnation holds it. seen is the
// store's record of the newest epoch per region it has held; a peer not
// yet initialized has no epoch to compare.
func checkEpochAdvance(seen map[uint64]*metapb.RegionEpoch, r *metapb.Region) {
	if !invariants.Enabled || !isInitialized(r) {
		return
	}
	ep := r.GetRegionEpoch()
	if old := seen[r.GetId()]; old != nil && (ep.GetVersion() < old.GetVersion() || ep.GetConfVer() < old.GetConfVer()) {
		panic(fmt.Sprintf("raftstore invariant: region %d epoch went back from %d.%d to %d.%d (conf_ver.version)",
			r.GetId(), old.GetConfVer(), old.GetVersion(), ep.GetConfVer(), ep.GetVersion()))
	}
	seen[r.GetId()] = ep
}

// checkApplyOrder: a peer applies its committed entries once each, in log
// order, without gaps (the apply state then says exactly what the data
// holds).
func checkApplyOrder(regionID, applied, index uint64) {
	if !invariants.Enabled {
		return
	}
	if index != applied+1 {
		panic(fmt.Sprintf("raftstore invariant: region %d applies entry %d after %d", regionID, index, applied))
	}
}

// checkSnapshotForward: a snapshot moves a peer's applied index forward
// (raft only restores one past its commit index, which is at or past the
// applied index).
func checkSnapshotForward(regionID, applied, snapIndex uint64) {
	if !invariants.Enabled {
		return
	}
	if snapIndex <= applied {
		panic(fmt.Sprintf("raftstore invariant: region %d installs a snapshot at %d over applied index %d", regionID, snapIndex, applied))
	}
}

// checkCommandRegion: an entry in a region's log was proposed to that
// region.
func checkCommandRegion(regionID uint64, cmd *command) {
	if !invariants.Enabled {
		return
	}
	if cmd.regionID != regionID {
		panic(fmt.Sprintf("raftstore invariant: region %d's log holds a command for region %d", regionID, cmd.regionID))
	}
}

// checkNoOverlap: the initialized regions of one store, sorted by start
// key, never overlap (routing by key relies on it).
func checkNoOverlap(sorted []*peer) {
	if !invariants.Enabled {
		return
	}
	for i := 1; i < len(sorted); i++ {
		prev, cur := sorted[i-1].view.Load().region, sorted[i].view.Load().region
		if len(prev.GetEndKey()) == 0 || bytes.Compare(prev.GetEndKey(), cur.GetStartKey()) > 0 {
			panic(fmt.Sprintf("raftstore invariant: regions %d [%q, %q) and %d [%q, %q) overlap on one store",
				prev.GetId(), prev.GetStartKey(), prev.GetEndKey(), cur.GetId(), cur.GetStartKey(), cur.GetEndKey()))
		}
	}
}

// checkSplit: a split's two regions cover exactly the parent's range,
// meeting at the split key strictly inside it; both carry the parent's
// conf_ver and its version + 1; the new region has one peer on each of the
// parent's stores, in the same role.
func checkSplit(parent, left, right *metapb.Region) {
	if !invariants.Enabled {
		return
	}
	fail := func(what string) {
		panic(fmt.Sprintf("raftstore invariant: split of region %d [%q, %q) into %d [%q, %q) and %d [%q, %q): %s",
			parent.GetId(), parent.GetStartKey(), parent.GetEndKey(), left.GetId(), left.GetStartKey(), left.GetEndKey(),
			right.GetId(), right.GetStartKey(), right.GetEndKey(), what))
	}
	switch {
	case left.GetId() != parent.GetId() || right.GetId() == parent.GetId():
		fail("the left half keeps the parent's id, the right half gets a new one")
	case !bytes.Equal(left.GetStartKey(), parent.GetStartKey()) || !bytes.Equal(right.GetEndKey(), parent.GetEndKey()):
		fail("the halves do not reach the parent's ends")
	case !bytes.Equal(left.GetEndKey(), right.GetStartKey()):
		fail("the halves do not meet")
	case bytes.Compare(right.GetStartKey(), parent.GetStartKey()) <= 0 ||
		(len(parent.GetEndKey()) > 0 && bytes.Compare(right.GetStartKey(), parent.GetEndKey()) >= 0):
		fail("the split key is not strictly inside the parent")
	}
	pe := parent.GetRegionEpoch()
	for _, half := range []*metapb.Region{left, right} {
		ep := half.GetRegionEpoch()
		if ep.GetVersion() != pe.GetVersion()+1 || ep.GetConfVer() != pe.GetConfVer() {
			fail(fmt.Sprintf("region %d has epoch %d.%d after the parent's %d.%d", half.GetId(),
				ep.GetConfVer(), ep.GetVersion(), pe.GetConfVer(), pe.GetVersion()))
		}
	}
	if len(right.GetPeers()) != len(parent.GetPeers()) {
		fail("the new region's peers differ in number")
	}
	for i, m := range parent.GetPeers() {
		if n := right.GetPeers()[i]; n.GetStoreId() != m.GetStoreId() || n.GetRole() != m.GetRole() {
			fail(fmt.Sprintf("peer %d of the new region is on store %d as %v, not on store %d as %v",
				n.GetId(), n.GetStoreId(), n.GetRole(), m.GetStoreId(), m.GetRole()))
		}
	}
}

// checkLeaseHolder: a peer holding an unexpired lease (lease.go) is a
// leader that applied an entry of its term, has not suspected its lease
// in this term (a leader transfer), and holds it for at most LeaderLease
// from now (a lease starts when its entry was proposed, in the past).
func checkLeaseHolder(p *peer) {
	if !invariants.Enabled {
		return
	}
	now := monoNow()
	until := p.leaseUntil.Load()
	if until <= now {
		return
	}
	switch {
	case !p.isLeader:
		panic(fmt.Sprintf("raftstore invariant: region %d: peer %d holds a lease without leading", p.regionID(), p.peerID))
	case !p.leaderReady:
		panic(fmt.Sprintf("raftstore invariant: region %d: leader %d holds a lease before applying an entry of its term", p.regionID(), p.peerID))
	case p.ps.hardState.Term == p.leaseSuspectTerm:
		panic(fmt.Sprintf("raftstore invariant: region %d: leader %d holds a lease in term %d, where it began a transfer", p.regionID(), p.peerID, p.leaseSuspectTerm))
	case until-now > int64(p.s.cfg.LeaderLease):
		panic(fmt.Sprintf("raftstore invariant: region %d: lease runs %v more, past LeaderLease %v", p.regionID(), until-now, p.s.cfg.LeaderLease))
	}
}

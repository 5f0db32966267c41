//go:build invariants

package raftstore

import (
	"strings"
	"testing"
	"time"

	"github.com/shoaldb/shoal/proto/metapb"
)

func testRegion(id uint64, start, end string, confVer, version uint64, stores ...uint64) *metapb.Region {
	r := &metapb.Region{Id: id, StartKey: []byte(start), EndKey: []byte(end),
		RegionEpoch: &metapb.RegionEpoch{ConfVer: confVer, Version: version}}
	for i, s := range stores {
		r.Peers = append(r.Peers, &metapb.Peer{Id: id*10 + uint64(i), StoreId: s})
	}
	return r
}

func routedPeers(regions ...*metapb.Region) []*peer {
	var out []*peer
	for _, r := range regions {
		p := &peer{id: r.GetId(), region: r}
		p.publish()
		out = append(out, p)
	}
	return out
}

// The invariant checks accept what raftstore does and fire on the states
// they exist to catch.
func TestInvariantsCatchBadStates(t *testing.T) {
	parent := testRegion(1, "b", "x", 3, 4, 1, 2)
	goodLeft := testRegion(1, "b", "m", 3, 5, 1, 2)
	goodRight := testRegion(9, "m", "x", 3, 5, 1, 2)
	leaseStore := &Store{cfg: Config{LeaderLease: time.Second}}
	leaseHolder := func(leader, ready bool, suspect uint64, lease time.Duration) func() {
		return func() {
			p := &peer{s: leaseStore, isLeader: leader, leaderReady: ready, leaseSuspectTerm: suspect, ps: &peerStorage{}}
			p.ps.hardState.Term = 7
			p.leaseUntil.Store(monoNow() + int64(lease))
			checkLeaseHolder(p)
		}
	}
	cases := []struct {
		name, want string // want "": no panic
		check      func()
	}{
		{"epoch moves on", "", func() {
			seen := map[uint64]*metapb.RegionEpoch{}
			checkEpochAdvance(seen, testRegion(1, "", "", 1, 1, 1))
			checkEpochAdvance(seen, testRegion(1, "", "m", 1, 2, 1))
			checkEpochAdvance(seen, &metapb.Region{Id: 1}) // a new, uninitialized incarnation
			checkEpochAdvance(seen, testRegion(1, "", "m", 2, 2, 1))
		}},
		{"version goes back", "epoch went back from 1.2 to 1.1", func() {
			seen := map[uint64]*metapb.RegionEpoch{}
			checkEpochAdvance(seen, testRegion(1, "", "m", 1, 2, 1))
			checkEpochAdvance(seen, testRegion(1, "", "", 1, 1, 1))
		}},
		{"conf_ver goes back", "epoch went back from 3.2 to 2.2", func() {
			seen := map[uint64]*metapb.RegionEpoch{}
			checkEpochAdvance(seen, testRegion(1, "", "m", 3, 2, 1))
			checkEpochAdvance(seen, testRegion(1, "", "m", 2, 2, 1))
		}},
		{"apply in order", "", func() { checkApplyOrder(1, 5, 6) }},
		{"apply skips an entry", "applies entry 8 after 6", func() { checkApplyOrder(1, 6, 8) }},
		{"apply twice", "applies entry 6 after 6", func() { checkApplyOrder(1, 6, 6) }},
		{"snapshot forward", "", func() { checkSnapshotForward(1, 5, 9) }},
		{"snapshot backward", "snapshot at 5 over applied index 9", func() { checkSnapshotForward(1, 9, 5) }},
		{"command of the region", "", func() { checkCommandRegion(3, &command{regionID: 3}) }},
		{"command of another region", "holds a command for region 4", func() { checkCommandRegion(3, &command{regionID: 4}) }},
		{"regions tile", "", func() {
			checkNoOverlap(routedPeers(testRegion(1, "", "b", 1, 1), testRegion(2, "b", "m", 1, 1), testRegion(3, "q", "", 1, 1)))
		}},
		{"regions overlap", "regions 1", func() {
			checkNoOverlap(routedPeers(testRegion(1, "a", "n", 1, 1), testRegion(2, "m", "z", 1, 1)))
		}},
		{"unbounded region followed by another", "overlap", func() {
			checkNoOverlap(routedPeers(testRegion(1, "a", "", 1, 1), testRegion(2, "m", "z", 1, 1)))
		}},
		{"split", "", func() { checkSplit(parent, goodLeft, goodRight) }},
		{"split of an unbounded region", "", func() {
			checkSplit(testRegion(1, "", "", 1, 1, 1), testRegion(1, "", "k", 1, 2, 1), testRegion(5, "k", "", 1, 2, 1))
		}},
		{"halves leave a gap", "do not meet", func() {
			checkSplit(parent, goodLeft, testRegion(9, "n", "x", 3, 5, 1, 2))
		}},
		{"right half too short", "do not reach the parent's ends", func() {
			checkSplit(parent, goodLeft, testRegion(9, "m", "w", 3, 5, 1, 2))
		}},
		{"split at the start key", "strictly inside", func() {
			checkSplit(parent, testRegion(1, "b", "b", 3, 5, 1, 2), testRegion(9, "b", "x", 3, 5, 1, 2))
		}},
		{"version not bumped", "has epoch 3.4 after the parent's 3.4", func() {
			checkSplit(parent, testRegion(1, "b", "m", 3, 4, 1, 2), goodRight)
		}},
		{"new region on other stores", "not on store 2", func() {
			checkSplit(parent, goodLeft, testRegion(9, "m", "x", 3, 5, 1, 3))
		}},
		{"right half keeps the parent's id", "keeps the parent's id", func() {
			checkSplit(parent, goodLeft, testRegion(1, "m", "x", 3, 5, 1, 2))
		}},
		{"ready leader with a lease", "", leaseHolder(true, true, 0, 500*time.Millisecond)},
		{"expired lease on a follower", "", leaseHolder(false, false, 0, -time.Millisecond)},
		{"follower with a lease", "without leading", leaseHolder(false, false, 0, 500*time.Millisecond)},
		{"leader not ready with a lease", "before applying an entry of its term", leaseHolder(true, false, 0, 500*time.Millisecond)},
		{"lease in a transfer's term", "where it began a transfer", leaseHolder(true, true, 7, 500*time.Millisecond)},
		{"lease too long", "past LeaderLease", leaseHolder(true, true, 0, 2*time.Second)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				r := recover()
				msg, _ := r.(string)
				if c.want == "" {
					if r != nil {
						t.Fatalf("panic %v on a good state", r)
					}
					return
				}
				if !strings.Contains(msg, c.want) {
					t.Fatalf("panic %v, want one containing %q", r, c.want)
				}
			}()
			c.check()
		})
	}
}

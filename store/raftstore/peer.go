package raftstore

import (
	"bytes"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/shoaldb/shoal/proto/metapb"
	"github.com/shoaldb/shoal/proto/raftserverpb"
	"go.etcd.io/raft/v3"
	"google.golang.org/protobuf/proto"
)

// peer is this store's replica of one region: a RawNode over its
// peerStorage plus the bookkeeping of proposals and reads waiting on it.
// Everything but view is owned by the store's raft goroutine.
type peer struct {
	s *Store
	// id is the region id (immutable, safe from any goroutine).
	id     uint64
	peerID uint64
	region *metapb.Region // the applied region (copy-on-write: never mutated)
	rn     *raft.RawNode
	ps     *peerStorage

	// peerCache remembers peers learnt from incoming messages, so a peer
	// can answer a sender missing from its region (e.g. it was created
	// from a message and has no region yet).
	peerCache map[uint64]*metapb.Peer
	// lastHeard: when the leader last heard from each peer (down peers).
	lastHeard map[uint64]time.Time

	leaderID uint64
	isLeader bool
	// leaderReady: this leader has applied an entry of its own term, so it
	// has applied everything any earlier leader committed.
	// leaderSinceGen: the store's leadership generation when it became
	// ready (see Store.leaderGen and proposalBatch).
	leaderReady    bool
	leaderSinceGen uint64

	props proposalQueue
	reads readQueue

	// Split checking and PD heartbeats.
	ticks           int
	sizeDiffHint    uint64
	approximateSize uint64
	splitChecking   bool

	// pendingRemove: the peer applied its own removal; it is destroyed
	// after the round.
	pendingRemove bool
	// pendingSnap: the decoded snapshot accepted for raft (index
	// pendingSnapIndex), reused when its Ready is persisted; snapRegion:
	// its region between persisting and installing it.
	pendingSnap      *raftserverpb.RegionSnapshot
	pendingSnapIndex uint64
	snapRegion       *metapb.Region

	// destroyed: the peer left the store; late work on it is skipped.
	destroyed bool

	view atomic.Pointer[peerView]

	// Leader lease (lease.go). leaseUntil (monoNow nanoseconds; 0: none)
	// and leaseUsed are read by request goroutines.
	leaseUntil        atomic.Int64
	leaseUsed         atomic.Bool
	leaseSuspectTerm  uint64
	lastRenewProposal int64
}

// peerView is the immutable state other goroutines read (request checks,
// routing): replaced, never mutated.
type peerView struct {
	region   *metapb.Region
	peerID   uint64
	leader   *metapb.Peer // nil if unknown
	isLeader bool
}

type raftLogger struct{}

func (raftLogger) Debug(...interface{})          {}
func (raftLogger) Debugf(string, ...interface{}) {}
func (raftLogger) Error(...interface{})          {}
func (raftLogger) Errorf(string, ...interface{}) {}
func (raftLogger) Info(...interface{})           {}
func (raftLogger) Infof(string, ...interface{})  {}
func (raftLogger) Warning(...interface{})        {}
func (raftLogger) Warningf(string, ...interface{}) {
}
func (raftLogger) Fatal(v ...interface{}) { panic(fmt.Sprint(v...)) }
func (raftLogger) Fatalf(format string, v ...interface{}) {
	panic(fmt.Sprintf(format, v...))
}
func (raftLogger) Panic(v ...interface{}) { panic(fmt.Sprint(v...)) }
func (raftLogger) Panicf(format string, v ...interface{}) {
	panic(fmt.Sprintf(format, v...))
}

// newPeer creates the peer peerID of region on its loaded storage.
func (s *Store) newPeer(region *metapb.Region, peerID uint64, ps *peerStorage) (*peer, error) {
	cfg := &raft.Config{
		ID:              peerID,
		ElectionTick:    s.cfg.ElectionTicks,
		HeartbeatTick:   s.cfg.HeartbeatTicks,
		Storage:         ps,
		Applied:         ps.apply.AppliedIndex,
		MaxSizePerMsg:   s.cfg.MaxSizePerMsg,
		MaxInflightMsgs: s.cfg.MaxInflightMsgs,
		// Committed entries per Ready are bounded so one busy region
		// cannot stall the round for all others.
		MaxCommittedSizePerReady:  4 << 20,
		MaxUncommittedEntriesSize: 64 << 20,
		CheckQuorum:               true,
		PreVote:                   true,
		ReadOnlyOption:            raft.ReadOnlySafe,
		Logger:                    raftLogger{},
	}
	rn, err := raft.NewRawNode(cfg)
	if err != nil {
		return nil, fmt.Errorf("raftstore: region %d peer %d: %w", region.GetId(), peerID, err)
	}
	p := &peer{s: s, id: region.GetId(), peerID: peerID, region: region, rn: rn, ps: ps, peerCache: map[uint64]*metapb.Peer{}, lastHeard: map[uint64]time.Time{}}
	p.publish()
	return p, nil
}

func (p *peer) regionID() uint64 { return p.id }

func (p *peer) initialized() bool { return isInitialized(p.region) }

// findPeer returns the metadata of peer id from the region or the cache.
func (p *peer) findPeer(id uint64) *metapb.Peer {
	for _, m := range p.region.GetPeers() {
		if m.GetId() == id {
			return m
		}
	}
	return p.peerCache[id]
}

func (p *peer) self() *metapb.Peer {
	if m := p.findPeer(p.peerID); m != nil {
		return m
	}
	return &metapb.Peer{Id: p.peerID, StoreId: p.s.cfg.StoreID}
}

// setRegion installs a new applied region (the caller persisted it).
func (p *peer) setRegion(r *metapb.Region) {
	checkEpochAdvance(p.s.seenEpochs, r)
	p.region = r
	p.ps.region = r
	p.publish()
	p.s.router.update(p)
}

// publish makes the peer's current state visible to other goroutines.
func (p *peer) publish() {
	v := &peerView{region: p.region, peerID: p.peerID, isLeader: p.isLeader}
	if p.leaderID != 0 {
		if m := p.findPeer(p.leaderID); m != nil {
			v.leader = proto.Clone(m).(*metapb.Peer)
		} else {
			v.leader = &metapb.Peer{Id: p.leaderID}
		}
	}
	p.view.Store(v)
}

// onSoftState tracks leadership changes reported by a Ready.
func (p *peer) onSoftState(ss *raft.SoftState) {
	wasLeader := p.isLeader
	p.leaderID = ss.Lead
	p.isLeader = ss.RaftState == raft.StateLeader
	if p.isLeader != wasLeader {
		p.dropLease()
	}
	if p.isLeader && !wasLeader {
		p.leaderReady = false
		now := time.Now()
		for _, m := range p.region.GetPeers() {
			p.lastHeard[m.GetId()] = now
		}
		p.ticks = 0
		p.s.heartbeatPD(p)
	}
	if wasLeader && !p.isLeader {
		p.leaderReady = false
		// Reads waiting for a ReadIndex answer will not get one now.
		p.reads.failAll(newNotLeader(p.regionID(), p.leaderPeer()))
	}
	p.publish()
}

func (p *peer) leaderPeer() *metapb.Peer {
	if p.leaderID == 0 {
		return nil
	}
	return p.findPeer(p.leaderID)
}

// keyInRegion reports whether user key k lies in r.
func keyInRegion(k []byte, r *metapb.Region) bool {
	return bytes.Compare(k, r.GetStartKey()) >= 0 && (len(r.GetEndKey()) == 0 || bytes.Compare(k, r.GetEndKey()) < 0)
}

// rangesOverlap reports whether the ranges of two initialized regions
// intersect.
func rangesOverlap(a, b *metapb.Region) bool {
	aBeforeB := len(a.GetEndKey()) > 0 && bytes.Compare(a.GetEndKey(), b.GetStartKey()) <= 0
	bBeforeA := len(b.GetEndKey()) > 0 && bytes.Compare(b.GetEndKey(), a.GetStartKey()) <= 0
	return !aBeforeB && !bBeforeA
}

// checkLeaderReady marks a leader ready once it applied an entry of its
// term (its first entry, an empty one, is proposed on election). After
// an apply round.
func (p *peer) checkLeaderReady() {
	if !p.isLeader || p.leaderReady || p.ps.appliedTerm != p.rn.BasicStatus().Term {
		return
	}
	p.leaderReady = true
	p.leaderSinceGen = p.s.leaderGen.Add(1)
	p.publish()
}

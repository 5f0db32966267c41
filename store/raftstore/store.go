package raftstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/shoaldb/shoal/proto/metapb"
	"github.com/shoaldb/shoal/proto/raftserverpb"
	"github.com/shoaldb/shoal/store/internal/invariants"
	"github.com/shoaldb/shoal/store/mvcc/mvcckey"
	"github.com/shoaldb/shoal/store/pebbleengine"
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// Store is one storage node's multi-raft: its peers of many regions, all
// driven by one raft goroutine over one Pebble instance.
type Store struct {
	cfg   Config
	eng   *pebbleengine.Engine
	db    *pebble.DB
	trans Transport
	pd    PDClient

	router *router

	// Inputs of the raft goroutine.
	msgCh  chan *raftserverpb.RaftMessage
	propCh chan *proposal
	readCh chan *readReq
	taskCh chan func()
	pdCh   chan func()

	stopOnce sync.Once
	closeErr error
	stopCh   chan struct{}
	// ctx is canceled on Close (bounds PD calls in flight).
	ctx      context.Context
	cancel   context.CancelFunc
	loopDone chan struct{}
	wg       sync.WaitGroup

	// leaderGen counts leadership acquisitions on this store; see
	// proposal.leaderGen.
	leaderGen      atomic.Uint64
	nextProposalID atomic.Uint64
	readCtxSalt    uint64

	// Owned by the raft goroutine.
	peers      map[uint64]*peer
	tombstones map[uint64]*metapb.Region
	dirty      map[uint64]*peer
	// seenEpochs: the newest epoch of each region this store held
	// (invariants builds only; see checkEpochAdvance).
	seenEpochs map[uint64]*metapb.RegionEpoch
}

// Open opens (creating if needed) the store's Pebble in dir, recreates
// the peers of every region persisted there, and starts the raft loop.
// trans sends raft messages; pd may be nil (no splits, no heartbeats).
func Open(dir string, cfg Config, trans Transport, pd PDClient) (*Store, error) {
	if cfg.StoreID == 0 {
		return nil, errors.New("raftstore: StoreID is required")
	}
	if cfg.Engine.DisableWAL {
		return nil, errors.New("raftstore: the WAL cannot be disabled (raft state must be durable)")
	}
	cfg = cfg.withDefaults()
	// The MVCC layer finds a record's versions by prefix (bloom filters).
	cfg.Engine.Split, cfg.Engine.SplitName = mvcckey.SplitKey, mvcckey.SplitName
	eng, err := pebbleengine.Open(dir, cfg.Engine)
	if err != nil {
		return nil, err
	}
	s := &Store{
		cfg: cfg, eng: eng, db: eng.DB(), trans: trans, pd: pd,
		router:     newRouter(),
		msgCh:      make(chan *raftserverpb.RaftMessage, 4096),
		propCh:     make(chan *proposal, cfg.MaxPendingProposals),
		readCh:     make(chan *readReq, cfg.MaxPendingProposals),
		taskCh:     make(chan func(), 1024),
		pdCh:       make(chan func(), 256),
		stopCh:     make(chan struct{}),
		loopDone:   make(chan struct{}),
		peers:      map[uint64]*peer{},
		tombstones: map[uint64]*metapb.Region{},
		dirty:      map[uint64]*peer{},
	}
	if invariants.Enabled {
		s.seenEpochs = map[uint64]*metapb.RegionEpoch{}
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	// Proposal ids only need to differ from those of entries a previous
	// incarnation left in the log: start from the clock.
	s.nextProposalID.Store(uint64(time.Now().UnixNano()))
	// Generation 0 means "no check" in proposals: batches start at 1.
	s.leaderGen.Store(1)
	s.readCtxSalt = uint64(time.Now().UnixNano())
	if err := s.checkIdent(); err != nil {
		s.cancel()
		eng.Close()
		return nil, err
	}
	if err := s.loadPeers(); err != nil {
		s.cancel()
		eng.Close()
		return nil, err
	}
	s.wg.Add(2)
	go s.run()
	go s.pdWorker()
	return s, nil
}

func (s *Store) checkIdent() error {
	var id raftserverpb.StoreIdent
	ok, err := getProto(s.db, storeIdentKey(), &id)
	if err != nil {
		return err
	}
	if ok {
		if id.StoreId != s.cfg.StoreID || id.ClusterId != s.cfg.ClusterID {
			return fmt.Errorf("raftstore: data directory belongs to store %d of cluster %d, not store %d of cluster %d",
				id.StoreId, id.ClusterId, s.cfg.StoreID, s.cfg.ClusterID)
		}
		return nil
	}
	return s.db.Set(storeIdentKey(), mustMarshal(&raftserverpb.StoreIdent{ClusterId: s.cfg.ClusterID, StoreId: s.cfg.StoreID}), pebble.Sync)
}

// loadPeers recreates the peers of the persisted regions: the region
// state, hard state, apply state and log were written atomically with the
// data they describe, so each peer restarts exactly where its last durable
// batch left it.
func (s *Store) loadPeers() error {
	lo, hi := regionStateBounds()
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return err
	}
	var states []*raftserverpb.RegionLocalState
	for ok := it.First(); ok; ok = it.Next() {
		st := &raftserverpb.RegionLocalState{}
		if err := proto.Unmarshal(it.Value(), st); err != nil {
			it.Close()
			return err
		}
		states = append(states, st)
	}
	if err := it.Close(); err != nil {
		return err
	}
	for _, st := range states {
		if st.State == raftserverpb.PeerState_Tombstone {
			s.tombstones[st.Region.GetId()] = st.Region
			continue
		}
		self := findStorePeer(st.Region, s.cfg.StoreID)
		if self == nil {
			return fmt.Errorf("raftstore: region %d has no peer on store %d", st.Region.GetId(), s.cfg.StoreID)
		}
		ps, err := loadPeerStorage(s.db, &s.wg, st.Region)
		if err != nil {
			return err
		}
		p, err := s.newPeer(st.Region, self.GetId(), ps)
		if err != nil {
			return err
		}
		s.addPeer(p)
	}
	return nil
}

func findStorePeer(r *metapb.Region, storeID uint64) *metapb.Peer {
	for _, p := range r.GetPeers() {
		if p.GetStoreId() == storeID {
			return p
		}
	}
	return nil
}

func (s *Store) addPeer(p *peer) {
	checkEpochAdvance(s.seenEpochs, p.region)
	s.peers[p.regionID()] = p
	s.router.update(p)
	s.dirty[p.regionID()] = p
}

func (s *Store) markDirty(p *peer) { s.dirty[p.regionID()] = p }

// Close stops the raft loop, fails everything waiting on it and closes
// Pebble. Everything acknowledged before is durable.
func (s *Store) Close() error {
	s.stopOnce.Do(func() {
		close(s.stopCh)
		s.cancel()
		s.wg.Wait()
		s.closeErr = s.eng.Close()
	})
	return s.closeErr
}

// StoreID returns the store's id.
func (s *Store) StoreID() uint64 { return s.cfg.StoreID }

// LeaderGeneration counts the leaderships this store's peers have taken
// up (a peer counts once it applied an entry of its term, the point from
// which its batches are accepted). It only grows. A batch is accepted
// only from a peer whose leadership is counted at or below the value when
// the batch was created (see Engine), so work that must happen after
// every leadership change (e.g. raising MVCC's maxTS) can compare the
// generation it covered with the current one.
func (s *Store) LeaderGeneration() uint64 { return s.leaderGen.Load() }

// ---- the raft goroutine ----

func (s *Store) run() {
	defer s.wg.Done()
	defer close(s.loopDone)
	ticker := time.NewTicker(s.cfg.TickInterval)
	defer ticker.Stop()
	for {
		if len(s.dirty) == 0 {
			select {
			case <-s.stopCh:
				s.shutdown()
				return
			case <-ticker.C:
				s.tick()
			case m := <-s.msgCh:
				s.onRaftMessage(m)
			case pr := <-s.propCh:
				s.onProposal(pr)
			case r := <-s.readCh:
				s.onRead(r)
			case f := <-s.taskCh:
				f()
			}
		} else {
			select {
			case <-s.stopCh:
				s.shutdown()
				return
			case <-ticker.C:
				s.tick()
			default:
			}
		}
		s.drainInputs()
		for _, p := range s.dirty {
			p.reads.issue(p)
		}
		s.handleReadies()
	}
}

// drainInputs takes what is queued (bounded, so one round stays short).
func (s *Store) drainInputs() {
	for i := 0; i < 4096; i++ {
		select {
		case m := <-s.msgCh:
			s.onRaftMessage(m)
		case pr := <-s.propCh:
			s.onProposal(pr)
		case r := <-s.readCh:
			s.onRead(r)
		case f := <-s.taskCh:
			f()
		default:
			return
		}
	}
}

func (s *Store) shutdown() {
	for _, p := range s.peers {
		p.props.failAll(ErrStopped)
		p.reads.failEverything(ErrStopped)
	}
}

// runTask runs f on the raft goroutine (dropped if the store stopped).
func (s *Store) runTask(f func()) {
	select {
	case s.taskCh <- f:
	case <-s.loopDone:
	}
}

// call runs f on the raft goroutine and waits for its result.
func (s *Store) call(f func() error) error {
	done := make(chan error, 1)
	select {
	case s.taskCh <- func() { done <- f() }:
	case <-s.loopDone:
		return ErrStopped
	}
	select {
	case err := <-done:
		return err
	case <-s.loopDone:
		select {
		case err := <-done:
			return err
		default:
			return ErrStopped
		}
	}
}

func (s *Store) tick() {
	for _, p := range s.peers {
		p.rn.Tick()
		s.markDirty(p)
		checkLeaseHolder(p)
		if !p.isLeader {
			continue
		}
		p.ticks++
		if p.ticks%s.cfg.SplitCheckTicks == 0 {
			s.maybeSplitCheck(p)
		}
		if p.ticks%s.cfg.RaftLogGCTicks == 0 {
			s.maybeCompactLog(p)
		}
		if p.ticks%s.cfg.PDHeartbeatTicks == 0 {
			s.heartbeatPD(p)
		}
		s.maybeRenewLease(p)
	}
}

// ---- incoming raft messages ----

// HandleRaftMessage queues a message from another store. It never blocks:
// when the queue is full the message is dropped (raft retransmits).
func (s *Store) HandleRaftMessage(m *raftserverpb.RaftMessage) {
	select {
	case s.msgCh <- m:
	default:
	}
}

// ReportSnapshot tells raft whether a snapshot sent to a peer arrived.
func (s *Store) ReportSnapshot(regionID, toPeerID uint64, delivered bool) {
	s.runTask(func() {
		if p := s.peers[regionID]; p != nil {
			st := raft.SnapshotFinish
			if !delivered {
				st = raft.SnapshotFailure
			}
			p.rn.ReportSnapshot(toPeerID, st)
			s.markDirty(p)
		}
	})
}

// ReportUnreachable tells raft a peer could not be reached.
func (s *Store) ReportUnreachable(regionID, toPeerID uint64) {
	s.runTask(func() {
		if p := s.peers[regionID]; p != nil {
			p.rn.ReportUnreachable(toPeerID)
		}
	})
}

func (s *Store) onRaftMessage(m *raftserverpb.RaftMessage) {
	to := m.GetToPeer()
	if to.GetStoreId() != s.cfg.StoreID {
		return
	}
	regionID := m.GetRegionId()
	p := s.peers[regionID]
	if m.GetIsTombstone() {
		// The sender applied this peer's removal.
		if p != nil && p.peerID == to.GetId() && (!p.initialized() || m.GetRegionEpoch().GetConfVer() > p.region.GetRegionEpoch().GetConfVer()) {
			s.destroyPeer(p)
		}
		return
	}
	var msg raftpb.Message
	if err := msg.Unmarshal(m.GetMessage()); err != nil {
		return
	}
	if p != nil && p.peerID != to.GetId() {
		if to.GetId() < p.peerID {
			return // a message for an older incarnation of our peer
		}
		// Our peer was removed and the region re-added a newer one here.
		s.destroyPeer(p)
		p = nil
	}
	if p == nil {
		if p = s.maybeCreatePeer(m, &msg); p == nil {
			return
		}
	}
	from := m.GetFromPeer()
	if p.initialized() && p.findPeer(from.GetId()) == nil {
		ep := m.GetRegionEpoch()
		if ep.GetConfVer() > 0 && ep.GetConfVer() < p.region.GetRegionEpoch().GetConfVer() {
			// The sender is not in the region and knows an older
			// configuration: it was removed and missed it. Tell it.
			s.sendTombstone(p, from)
			return
		}
	}
	if from != nil {
		p.peerCache[from.GetId()] = from
		if p.isLeader {
			p.lastHeard[from.GetId()] = time.Now()
		}
	}
	if !p.initialized() && (msg.Type == raftpb.MsgVote || msg.Type == raftpb.MsgPreVote) {
		// A peer without data neither votes nor persists its raft state
		// (see maybeCreatePeer): it only waits for a snapshot.
		return
	}
	if msg.Type == raftpb.MsgSnap && !s.acceptSnapshot(p, &msg) {
		return
	}
	if err := p.rn.Step(msg); err != nil {
		return
	}
	s.markDirty(p)
}

// maybeCreatePeer creates the peer a message is addressed to when this
// store has none, as TiKV does: a leader replicates to a peer added by a
// conf change (or born from a split this store has not applied yet) by
// sending it messages. Only leader messages create peers, never for a
// region known to be removed from here, and never over the range of an
// existing region (the split that creates it will).
//
// The new peer is uninitialized: no range, no log, no data. It does not
// vote and is not persisted until a snapshot initializes it, so losing it
// in a crash loses nothing raft relies on.
func (s *Store) maybeCreatePeer(m *raftserverpb.RaftMessage, msg *raftpb.Message) *peer {
	switch msg.Type {
	case raftpb.MsgApp, raftpb.MsgHeartbeat, raftpb.MsgSnap:
	default:
		return nil
	}
	regionID := m.GetRegionId()
	if t := s.tombstones[regionID]; t != nil && m.GetRegionEpoch().GetConfVer() <= t.GetRegionEpoch().GetConfVer() {
		return nil
	}
	probe := &metapb.Region{StartKey: m.GetStartKey(), EndKey: m.GetEndKey()}
	for _, q := range s.peers {
		if q.initialized() && rangesOverlap(q.region, probe) {
			return nil
		}
	}
	region := &metapb.Region{Id: regionID}
	ps := &peerStorage{db: s.db, bg: &s.wg, regionID: regionID, region: region}
	ps.setSnapState(region, 0, 0)
	p, err := s.newPeer(region, m.GetToPeer().GetId(), ps)
	if err != nil {
		return nil
	}
	delete(s.tombstones, regionID)
	s.addPeer(p)
	return p
}

// sendTombstone tells a removed peer to destroy itself.
func (s *Store) sendTombstone(p *peer, to *metapb.Peer) {
	if to == nil || s.trans == nil {
		return
	}
	s.trans.Send([]*raftserverpb.RaftMessage{{
		RegionId:    p.regionID(),
		FromPeer:    p.self(),
		ToPeer:      to,
		RegionEpoch: p.region.GetRegionEpoch(),
		IsTombstone: true,
	}})
}

// destroyPeer removes a peer from this store for good: its data, raft
// state and log are deleted and a tombstone region state is left, so late
// messages for it do not recreate it.
func (s *Store) destroyPeer(p *peer) {
	wb := s.db.NewBatch()
	if p.initialized() {
		deleteRegionData(wb, p.region)
	}
	lo, hi := raftStateBounds(p.regionID())
	_ = wb.DeleteRange(lo, hi, nil)
	_ = wb.Set(regionStateKey(p.regionID()), mustMarshal(&raftserverpb.RegionLocalState{
		State: raftserverpb.PeerState_Tombstone, Region: p.region,
	}), nil)
	if err := wb.Commit(pebble.Sync); err != nil {
		panic(fmt.Sprintf("raftstore: destroy region %d: %v", p.regionID(), err))
	}
	s.forgetPeer(p, newRegionNotFound(p.regionID()))
	s.tombstones[p.regionID()] = p.region
}

// forgetPeer drops p from memory, failing whatever waits on it.
func (s *Store) forgetPeer(p *peer, err error) {
	p.dropLease()
	p.props.failAll(err)
	p.reads.failEverything(err)
	p.destroyed = true
	delete(s.peers, p.regionID())
	delete(s.dirty, p.regionID())
	s.router.remove(p.regionID())
}

// ---- bootstrap ----

// BootstrapRegion creates the first incarnation of a region on this store
// (cluster bootstrap: every store listed in region.Peers calls it with
// the same region, or one store with a one-peer region that grows by
// conf change). It fails if the region exists or overlaps one.
func (s *Store) BootstrapRegion(region *metapb.Region) error {
	region = proto.Clone(region).(*metapb.Region)
	self := findStorePeer(region, s.cfg.StoreID)
	if self == nil {
		return fmt.Errorf("raftstore: region %d has no peer on store %d", region.GetId(), s.cfg.StoreID)
	}
	return s.call(func() error {
		if s.peers[region.GetId()] != nil || s.tombstones[region.GetId()] != nil {
			return fmt.Errorf("raftstore: region %d already exists", region.GetId())
		}
		for _, q := range s.peers {
			if q.initialized() && rangesOverlap(q.region, region) {
				return fmt.Errorf("raftstore: region %d overlaps region %d", region.GetId(), q.regionID())
			}
		}
		wb := s.db.NewBatch()
		writeInitialState(wb, region)
		if err := wb.Commit(pebble.Sync); err != nil {
			return err
		}
		ps, err := loadPeerStorage(s.db, &s.wg, region)
		if err != nil {
			return err
		}
		p, err := s.newPeer(region, self.GetId(), ps)
		if err != nil {
			return err
		}
		s.addPeer(p)
		return nil
	})
}

// ---- queries ----

// RegionInfo describes this store's peer of a region.
type RegionInfo struct {
	Region   *metapb.Region
	PeerID   uint64
	Leader   *metapb.Peer // nil if unknown
	IsLeader bool
}

// Region returns this store's view of a region, or false if it has no
// peer of it.
func (s *Store) Region(regionID uint64) (RegionInfo, bool) {
	p := s.router.get(regionID)
	if p == nil {
		return RegionInfo{}, false
	}
	v := p.view.Load()
	return RegionInfo{Region: v.region, PeerID: v.peerID, Leader: v.leader, IsLeader: v.isLeader}, true
}

// Regions returns this store's view of all its regions.
func (s *Store) Regions() []RegionInfo {
	var out []RegionInfo
	for _, p := range s.router.all() {
		v := p.view.Load()
		out = append(out, RegionInfo{Region: v.region, PeerID: v.peerID, Leader: v.leader, IsLeader: v.isLeader})
	}
	return out
}

// RegionByKey returns the region holding user key k on this store.
func (s *Store) RegionByKey(k []byte) (RegionInfo, bool) {
	p := s.router.byKey(k)
	if p == nil {
		return RegionInfo{}, false
	}
	return s.Region(p.regionID())
}

// AppliedIndex returns the applied index of this store's peer of a region
// (tests, diagnostics).
func (s *Store) AppliedIndex(regionID uint64) (applied, truncated uint64, ok bool) {
	err := s.call(func() error {
		p := s.peers[regionID]
		if p == nil {
			return newRegionNotFound(regionID)
		}
		applied, truncated = p.ps.apply.AppliedIndex, p.ps.apply.TruncatedIndex
		return nil
	})
	return applied, truncated, err == nil
}

// TransferLeader asks the leader of a region on this store to hand
// leadership to peer toPeerID. It returns once raft took the request; the
// transfer itself completes (or is abandoned) asynchronously.
func (s *Store) TransferLeader(regionID, toPeerID uint64) error {
	return s.call(func() error {
		p := s.peers[regionID]
		if p == nil {
			return newRegionNotFound(regionID)
		}
		if !p.isLeader {
			return newNotLeader(regionID, p.leaderPeer())
		}
		p.suspectLease()
		p.rn.TransferLeader(toPeerID)
		s.markDirty(p)
		return nil
	})
}

// Campaign makes this store's peer of a region start an election (tests,
// bootstrap).
func (s *Store) Campaign(regionID uint64) error {
	return s.call(func() error {
		p := s.peers[regionID]
		if p == nil {
			return newRegionNotFound(regionID)
		}
		s.markDirty(p)
		return p.rn.Campaign()
	})
}

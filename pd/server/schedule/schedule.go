// Package schedule is the placement driver's scheduling logic, kept pure:
// it sees a snapshot of the cluster (stores with their counts and last
// heartbeat, and the region that just reported) and answers with the one
// step that region's leader should take next. It does no I/O and reads no
// clock: the caller passes "now", and new peer IDs come from a function the
// caller supplies, so every decision can be replayed in a test.
//
// Invariants:
//   - At most one operator per region is in flight; it advances one step
//     at a time and only when the region's own heartbeat shows the previous
//     step done (a learner is promoted only after a heartbeat reports it
//     present and not pending, i.e. caught up).
//   - A replica is removed only after its replacement is a voter (add
//     learner, promote, then remove), so a region never drops below its
//     voter count while being repaired or balanced.
//   - A peer that is the leader is never removed directly: the leader is
//     transferred away first.
//   - An operator that does not finish within OperatorTimeout, or whose
//     region was split or merged meanwhile, is dropped; the checkers build
//     a fresh one from the region's current state on a later heartbeat.
package schedule

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/shoaldb/shoal/proto/metapb"
	"github.com/shoaldb/shoal/proto/pdpb"
)

// Config tunes the checkers and schedulers.
type Config struct {
	// MaxReplicas is the number of voters every region should have.
	MaxReplicas int
	// MaxStoreDownTime: a replica on a store silent this long is replaced.
	MaxStoreDownTime time.Duration
	// StoreUnreachableTime: a store silent this long gets no new replicas
	// or leaders (it may just be restarting, so nothing is removed yet).
	StoreUnreachableTime time.Duration
	// OperatorTimeout bounds the life of one operator.
	OperatorTimeout time.Duration
	// StepResendInterval: an unfinished step is sent again at most this
	// often (a heartbeat response can be lost with a leader change).
	StepResendInterval time.Duration
	// LeaderScheduleLimit and RegionScheduleLimit bound the balance
	// operators in flight at once, so balancing never floods the stores.
	LeaderScheduleLimit int
	RegionScheduleLimit int
	// RegionBalanceTolerance is the smallest difference in region counts
	// between two stores that makes balance-region move a replica.
	RegionBalanceTolerance int
}

// DefaultConfig returns the production defaults.
func DefaultConfig() Config {
	return Config{
		MaxReplicas:            3,
		MaxStoreDownTime:       30 * time.Minute,
		StoreUnreachableTime:   20 * time.Second,
		OperatorTimeout:        5 * time.Minute,
		StepResendInterval:     5 * time.Second,
		LeaderScheduleLimit:    4,
		RegionScheduleLimit:    2,
		RegionBalanceTolerance: 3,
	}
}

func (c *Config) fill() {
	d := DefaultConfig()
	if c.MaxReplicas <= 0 {
		c.MaxReplicas = d.MaxReplicas
	}
	if c.MaxStoreDownTime <= 0 {
		c.MaxStoreDownTime = d.MaxStoreDownTime
	}
	if c.StoreUnreachableTime <= 0 {
		c.StoreUnreachableTime = min(d.StoreUnreachableTime, c.MaxStoreDownTime)
	}
	if c.OperatorTimeout <= 0 {
		c.OperatorTimeout = d.OperatorTimeout
	}
	if c.StepResendInterval <= 0 {
		c.StepResendInterval = d.StepResendInterval
	}
	if c.LeaderScheduleLimit <= 0 {
		c.LeaderScheduleLimit = d.LeaderScheduleLimit
	}
	if c.RegionScheduleLimit <= 0 {
		c.RegionScheduleLimit = d.RegionScheduleLimit
	}
	if c.RegionBalanceTolerance <= 0 {
		c.RegionBalanceTolerance = d.RegionBalanceTolerance
	}
}

// Store is what scheduling needs to know of a store.
type Store struct {
	ID            uint64
	State         metapb.StoreState
	LastHeartbeat time.Time
	LeaderCount   int
	RegionCount   int
}

// Region is a region as its leader last reported it.
type Region struct {
	Meta         *metapb.Region
	Leader       *metapb.Peer
	PendingPeers []*metapb.Peer
	DownPeers    []*pdpb.PeerStats
}

// StepKind names what a step asks the region's leader to do.
type StepKind int

const (
	AddLearner StepKind = iota
	PromoteLearner
	RemovePeer
	TransferLeader
)

func (k StepKind) String() string {
	switch k {
	case AddLearner:
		return "add-learner"
	case PromoteLearner:
		return "promote-learner"
	case RemovePeer:
		return "remove-peer"
	case TransferLeader:
		return "transfer-leader"
	}
	return fmt.Sprintf("step(%d)", int(k))
}

// Step is one change to a region's membership or leadership.
type Step struct {
	Kind StepKind
	Peer *metapb.Peer // the peer added, promoted, removed, or to lead
}

func (s Step) String() string {
	return fmt.Sprintf("%s peer %d on store %d", s.Kind, s.Peer.GetId(), s.Peer.GetStoreId())
}

// Response turns the step into the heartbeat response for region r.
func (s Step) Response(r *metapb.Region, leader *metapb.Peer) *pdpb.RegionHeartbeatResponse {
	resp := &pdpb.RegionHeartbeatResponse{
		RegionId:    r.GetId(),
		RegionEpoch: r.GetRegionEpoch(),
		TargetPeer:  leader,
	}
	switch s.Kind {
	case AddLearner:
		resp.ChangePeer = &pdpb.ChangePeer{
			Peer:       &metapb.Peer{Id: s.Peer.Id, StoreId: s.Peer.StoreId, Role: metapb.PeerRole_Learner},
			ChangeType: pdpb.ConfChangeType_AddLearnerNode,
		}
	case PromoteLearner:
		resp.ChangePeer = &pdpb.ChangePeer{
			Peer:       &metapb.Peer{Id: s.Peer.Id, StoreId: s.Peer.StoreId, Role: metapb.PeerRole_Voter},
			ChangeType: pdpb.ConfChangeType_AddNode,
		}
	case RemovePeer:
		resp.ChangePeer = &pdpb.ChangePeer{Peer: s.Peer, ChangeType: pdpb.ConfChangeType_RemoveNode}
	case TransferLeader:
		resp.TransferLeader = &pdpb.TransferLeader{Peer: s.Peer}
	}
	return resp
}

// Operator kinds (also the label of the operator metrics).
const (
	KindReplicaAdd     = "replica-add"
	KindReplicaReplace = "replica-replace"
	KindReplicaRemove  = "replica-remove"
	KindReplicaPromote = "replica-promote"
	KindBalanceLeader  = "balance-leader"
	KindBalanceRegion  = "balance-region"
)

// Operator is a planned sequence of steps for one region.
type Operator struct {
	RegionID uint64
	Kind     string
	Steps    []Step
	Created  time.Time
	// version is the region's epoch version at creation: a split or merge
	// invalidates the plan.
	version uint64
	current int
	// sent/lastSent throttle resending an unfinished step (what was sent
	// may differ from the planned step: a leader transfer before a removal).
	sent     *Step
	lastSent time.Time
	// influence is what the operator will do to store counts when done;
	// the balancers count it in advance so that they do not overshoot.
	influence map[uint64]counts
}

type counts struct{ leaders, regions int }

func (op *Operator) String() string {
	return fmt.Sprintf("%s region %d %v (at step %d)", op.Kind, op.RegionID, op.Steps, op.current)
}

func newOperator(kind string, r Region, now time.Time, steps ...Step) *Operator {
	op := &Operator{
		RegionID:  r.Meta.GetId(),
		Kind:      kind,
		Steps:     steps,
		Created:   now,
		version:   r.Meta.GetRegionEpoch().GetVersion(),
		influence: map[uint64]counts{},
	}
	leaderStore := r.Leader.GetStoreId()
	for _, s := range steps {
		c := op.influence[s.Peer.StoreId]
		switch s.Kind {
		case AddLearner:
			c.regions++
		case RemovePeer:
			c.regions--
			if s.Peer.StoreId == leaderStore {
				c.leaders--
			}
		case TransferLeader:
			c.leaders++
			lc := op.influence[leaderStore]
			lc.leaders--
			op.influence[leaderStore] = lc
		}
		op.influence[s.Peer.StoreId] = c
	}
	return op
}

// Event reports what happened to an operator, for logs and metrics.
type Event struct {
	Op   *Operator
	What string // "create", "finish", "timeout", "cancel"
}

// Coordinator holds the operators in flight and runs the checkers on each
// region heartbeat. It is safe for concurrent use (heartbeats of different
// stores arrive on different streams).
type Coordinator struct {
	cfg Config

	mu  sync.Mutex
	ops map[uint64]*Operator
}

// NewCoordinator returns a coordinator with no operators.
func NewCoordinator(cfg Config) *Coordinator {
	cfg.fill()
	return &Coordinator{cfg: cfg, ops: map[uint64]*Operator{}}
}

// Config returns the effective configuration.
func (c *Coordinator) Config() Config { return c.cfg }

// Operator returns the operator in flight for a region, if any.
func (c *Coordinator) Operator(regionID uint64) *Operator {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ops[regionID]
}

// OperatorCount returns the number of operators in flight.
func (c *Coordinator) OperatorCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.ops)
}

// OnHeartbeat advances the region's operator (or creates one) and returns
// the step to send to the region's leader now, if any, and what happened
// to operators on the way. allocID supplies IDs for new peers.
func (c *Coordinator) OnHeartbeat(now time.Time, r Region, stores []Store, allocID func() (uint64, error)) (*Step, []Event, error) {
	if r.Meta == nil || r.Leader == nil {
		return nil, nil, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var events []Event
	if op := c.ops[r.Meta.Id]; op != nil {
		step, what := c.advanceLocked(now, op, r, stores)
		if what != "" {
			delete(c.ops, r.Meta.Id)
			events = append(events, Event{Op: op, What: what})
		} else {
			return step, events, nil
		}
		if what != "finish" {
			// Let the region settle for one heartbeat before planning anew.
			return nil, events, nil
		}
	}
	view := c.viewLocked(now, stores)
	op, err := c.checkLocked(now, r, view, allocID)
	if err != nil || op == nil {
		return nil, events, err
	}
	c.ops[r.Meta.Id] = op
	events = append(events, Event{Op: op, What: "create"})
	step, what := c.advanceLocked(now, op, r, stores)
	if what != "" { // cannot happen for a fresh operator, but stay consistent
		delete(c.ops, r.Meta.Id)
		events = append(events, Event{Op: op, What: what})
	}
	return step, events, nil
}

// Forget drops the operator of a region (e.g. the region is gone).
func (c *Coordinator) Forget(regionID uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.ops, regionID)
}

// advanceLocked skips the steps the region shows done and returns the step
// to send now (nil when waiting), or a non-empty outcome when the operator
// is over.
func (c *Coordinator) advanceLocked(now time.Time, op *Operator, r Region, stores []Store) (*Step, string) {
	if now.Sub(op.Created) > c.cfg.OperatorTimeout {
		return nil, "timeout"
	}
	if r.Meta.GetRegionEpoch().GetVersion() != op.version {
		return nil, "cancel"
	}
	for op.current < len(op.Steps) && stepDone(op.Steps[op.current], r) {
		op.current++
	}
	if op.current == len(op.Steps) {
		return nil, "finish"
	}
	step := op.Steps[op.current]
	send := step
	switch step.Kind {
	case PromoteLearner:
		p := findPeer(r.Meta, step.Peer.Id)
		if p == nil {
			return nil, "cancel" // the learner vanished
		}
		if isPending(r, p.Id) {
			return nil, "" // still catching up
		}
	case RemovePeer:
		if r.Leader.GetId() == step.Peer.Id {
			// Move the leader off the peer first.
			to := c.pickLeaderTarget(now, r, stores, step.Peer.Id)
			if to == nil {
				return nil, ""
			}
			send = Step{Kind: TransferLeader, Peer: to}
		}
	case TransferLeader:
		if findPeer(r.Meta, step.Peer.Id) == nil {
			return nil, "cancel"
		}
	}
	if op.sent != nil && op.sent.Kind == send.Kind && op.sent.Peer.Id == send.Peer.Id &&
		now.Sub(op.lastSent) < c.cfg.StepResendInterval {
		return nil, ""
	}
	op.sent, op.lastSent = &send, now
	return &send, ""
}

func stepDone(s Step, r Region) bool {
	p := findPeer(r.Meta, s.Peer.Id)
	switch s.Kind {
	case AddLearner:
		return p != nil
	case PromoteLearner:
		return p != nil && p.Role == metapb.PeerRole_Voter
	case RemovePeer:
		return p == nil
	case TransferLeader:
		return r.Leader.GetId() == s.Peer.Id
	}
	return false
}

// storeView is the stores as the checkers see them: with the influence of
// operators in flight already counted.
type storeView struct {
	now    time.Time
	cfg    *Config
	stores map[uint64]Store
	ids    []uint64 // sorted, for deterministic choices
}

func (c *Coordinator) viewLocked(now time.Time, stores []Store) *storeView {
	v := &storeView{now: now, cfg: &c.cfg, stores: make(map[uint64]Store, len(stores))}
	for _, s := range stores {
		v.stores[s.ID] = s
		v.ids = append(v.ids, s.ID)
	}
	slices.Sort(v.ids)
	for _, op := range c.ops {
		for id, inf := range op.influence {
			if s, ok := v.stores[id]; ok {
				s.LeaderCount += inf.leaders
				s.RegionCount += inf.regions
				v.stores[id] = s
			}
		}
	}
	return v
}

// down reports whether the store holding a replica has been gone long
// enough for the replica to be replaced.
func (v *storeView) down(storeID uint64) bool {
	s, ok := v.stores[storeID]
	if !ok || s.State != metapb.StoreState_Up {
		return true
	}
	return v.now.Sub(s.LastHeartbeat) > v.cfg.MaxStoreDownTime
}

// usable reports whether a store may receive a new replica or leader.
func (v *storeView) usable(storeID uint64) bool {
	s, ok := v.stores[storeID]
	return ok && s.State == metapb.StoreState_Up && v.now.Sub(s.LastHeartbeat) <= v.cfg.StoreUnreachableTime
}

// peerDown: the peer's store is down, or the leader has reported the peer
// unresponsive for longer than MaxStoreDownTime.
func (v *storeView) peerDown(r Region, p *metapb.Peer) bool {
	if v.down(p.StoreId) {
		return true
	}
	for _, d := range r.DownPeers {
		if d.GetPeer().GetId() == p.Id && time.Duration(d.DownSeconds)*time.Second >= v.cfg.MaxStoreDownTime {
			return true
		}
	}
	return false
}

// pickLeaderTarget chooses a healthy voter (not excluded) on a usable store
// with the fewest leaders to take over leadership.
func (c *Coordinator) pickLeaderTarget(now time.Time, r Region, stores []Store, exclude uint64) *metapb.Peer {
	v := c.viewLocked(now, stores)
	var best *metapb.Peer
	for _, p := range r.Meta.Peers {
		if p.Id == exclude || p.Role != metapb.PeerRole_Voter || !v.usable(p.StoreId) || isPending(r, p.Id) || v.peerDown(r, p) {
			continue
		}
		if best == nil || v.stores[p.StoreId].LeaderCount < v.stores[best.StoreId].LeaderCount ||
			(v.stores[p.StoreId].LeaderCount == v.stores[best.StoreId].LeaderCount && p.StoreId < best.StoreId) {
			best = p
		}
	}
	return best
}

// pickReplicaTarget chooses a usable store holding no replica of r with the
// fewest regions (lowest ID on ties).
func (v *storeView) pickReplicaTarget(r Region) (uint64, bool) {
	var best uint64
	found := false
	for _, id := range v.ids {
		if !v.usable(id) || storeHasPeer(r.Meta, id) {
			continue
		}
		if !found || v.stores[id].RegionCount < v.stores[best].RegionCount {
			best, found = id, true
		}
	}
	return best, found
}

func (c *Coordinator) countKindLocked(kind string) int {
	n := 0
	for _, op := range c.ops {
		if op.Kind == kind {
			n++
		}
	}
	return n
}

// checkLocked runs the replica checker, then balance-leader, then
// balance-region, and returns the first operator any of them wants.
func (c *Coordinator) checkLocked(now time.Time, r Region, v *storeView, allocID func() (uint64, error)) (*Operator, error) {
	op, hold, err := c.checkReplicas(now, r, v, allocID)
	if err != nil || op != nil || hold {
		return op, err
	}
	if c.countKindLocked(KindBalanceLeader) < c.cfg.LeaderScheduleLimit {
		if op := c.balanceLeader(now, r, v); op != nil {
			return op, nil
		}
	}
	if c.countKindLocked(KindBalanceRegion) < c.cfg.RegionScheduleLimit {
		return c.balanceRegion(now, r, v, allocID)
	}
	return nil, nil
}

// checkReplicas keeps the region at MaxReplicas healthy voters. hold means
// the region is not in a state to be balanced (e.g. a learner catching up).
func (c *Coordinator) checkReplicas(now time.Time, r Region, v *storeView, allocID func() (uint64, error)) (op *Operator, hold bool, err error) {
	var voters, learners, downVoters []*metapb.Peer
	for _, p := range r.Meta.Peers {
		if p.Role == metapb.PeerRole_Learner {
			learners = append(learners, p)
			continue
		}
		voters = append(voters, p)
		if v.peerDown(r, p) {
			downVoters = append(downVoters, p)
		}
	}
	healthy := len(voters) - len(downVoters)
	want := c.cfg.MaxReplicas

	// A learner left over from an interrupted operator: promote it if it is
	// needed and caught up, wait while it catches up, drop it otherwise.
	for _, l := range learners {
		if healthy < want && !v.peerDown(r, l) {
			if isPending(r, l.Id) {
				return nil, true, nil
			}
			return newOperator(KindReplicaPromote, r, now, Step{Kind: PromoteLearner, Peer: l}), false, nil
		}
		return newOperator(KindReplicaRemove, r, now, Step{Kind: RemovePeer, Peer: l}), false, nil
	}

	if healthy < want {
		target, ok := v.pickReplicaTarget(r)
		if ok {
			id, err := allocID()
			if err != nil {
				return nil, true, err
			}
			np := &metapb.Peer{Id: id, StoreId: target, Role: metapb.PeerRole_Learner}
			steps := []Step{{Kind: AddLearner, Peer: np}, {Kind: PromoteLearner, Peer: np}}
			if len(downVoters) > 0 && len(voters) >= want {
				return newOperator(KindReplicaReplace, r, now, append(steps, Step{Kind: RemovePeer, Peer: downVoters[0]})...), false, nil
			}
			return newOperator(KindReplicaAdd, r, now, steps...), false, nil
		}
		if len(downVoters) > 0 && len(voters) > want {
			return newOperator(KindReplicaRemove, r, now, Step{Kind: RemovePeer, Peer: downVoters[0]}), false, nil
		}
		return nil, true, nil // nowhere to repair to: do not balance either
	}

	if len(voters) > want {
		victim := c.pickExtraVoter(r, v, downVoters, voters)
		return newOperator(KindReplicaRemove, r, now, Step{Kind: RemovePeer, Peer: victim}), false, nil
	}
	if len(downVoters) > 0 || len(r.PendingPeers) > 0 {
		return nil, true, nil
	}
	return nil, false, nil
}

// pickExtraVoter picks the voter to drop from a region with too many:
// a down one first, else a non-leader on the store with the most regions.
func (c *Coordinator) pickExtraVoter(r Region, v *storeView, down, voters []*metapb.Peer) *metapb.Peer {
	if len(down) > 0 {
		return down[0]
	}
	var victim *metapb.Peer
	for _, p := range voters {
		if p.Id == r.Leader.GetId() {
			continue
		}
		if victim == nil || v.stores[p.StoreId].RegionCount > v.stores[victim.StoreId].RegionCount {
			victim = p
		}
	}
	if victim == nil {
		victim = voters[0]
	}
	return victim
}

// balanceLeader moves this region's leadership to the follower store with
// the fewest leaders when the leader's store has more than one more.
func (c *Coordinator) balanceLeader(now time.Time, r Region, v *storeView) *Operator {
	src, ok := v.stores[r.Leader.GetStoreId()]
	if !ok || len(r.PendingPeers) > 0 {
		return nil
	}
	var best *metapb.Peer
	for _, p := range r.Meta.Peers {
		if p.Id == r.Leader.Id || p.Role != metapb.PeerRole_Voter || !v.usable(p.StoreId) {
			continue
		}
		if best == nil || v.stores[p.StoreId].LeaderCount < v.stores[best.StoreId].LeaderCount ||
			(v.stores[p.StoreId].LeaderCount == v.stores[best.StoreId].LeaderCount && p.StoreId < best.StoreId) {
			best = p
		}
	}
	if best == nil || src.LeaderCount-v.stores[best.StoreId].LeaderCount <= 1 {
		return nil
	}
	return newOperator(KindBalanceLeader, r, now, Step{Kind: TransferLeader, Peer: best})
}

// balanceRegion moves one replica of this region from the store with the
// most regions among its replicas to the usable store with the fewest,
// when the difference reaches RegionBalanceTolerance.
func (c *Coordinator) balanceRegion(now time.Time, r Region, v *storeView, allocID func() (uint64, error)) (*Operator, error) {
	if len(r.PendingPeers) > 0 || len(r.DownPeers) > 0 {
		return nil, nil
	}
	var src *metapb.Peer
	for _, p := range r.Meta.Peers {
		if src == nil || v.stores[p.StoreId].RegionCount > v.stores[src.StoreId].RegionCount ||
			(v.stores[p.StoreId].RegionCount == v.stores[src.StoreId].RegionCount && p.StoreId < src.StoreId) {
			src = p
		}
	}
	target, ok := v.pickReplicaTarget(r)
	if src == nil || !ok || v.stores[src.StoreId].RegionCount-v.stores[target].RegionCount < c.cfg.RegionBalanceTolerance {
		return nil, nil
	}
	id, err := allocID()
	if err != nil {
		return nil, err
	}
	np := &metapb.Peer{Id: id, StoreId: target, Role: metapb.PeerRole_Learner}
	return newOperator(KindBalanceRegion, r, now,
		Step{Kind: AddLearner, Peer: np},
		Step{Kind: PromoteLearner, Peer: np},
		Step{Kind: RemovePeer, Peer: src},
	), nil
}

func findPeer(r *metapb.Region, id uint64) *metapb.Peer {
	for _, p := range r.GetPeers() {
		if p.Id == id {
			return p
		}
	}
	return nil
}

func storeHasPeer(r *metapb.Region, storeID uint64) bool {
	for _, p := range r.GetPeers() {
		if p.StoreId == storeID {
			return true
		}
	}
	return false
}

func isPending(r Region, peerID uint64) bool {
	for _, p := range r.PendingPeers {
		if p.GetId() == peerID {
			return true
		}
	}
	return false
}

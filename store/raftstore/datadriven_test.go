package raftstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/shoaldb/shoal/proto/metapb"
	"github.com/shoaldb/shoal/store/mvcc/mvcckey"
	"google.golang.org/protobuf/proto"
)

// TestRaftstoreTranscripts drives a small in-process cluster (testCluster:
// stores on a MemNetwork, the fake PD) with the commands of the transcripts
// in testdata/, in the manner of etcd raft's interaction tests, and prints
// what each command leaves behind.
//
// The cluster runs on real time (raftstore ticks itself), so a transcript
// prints only settled facts: after every command that changes the cluster,
// the harness waits (at most waitFor) until every live store that should
// hold a region holds the same descriptor of it, no other live store holds
// it, and all of them agree on its leader. Leadership is pinned: each
// region has a wanted leader store (the first bootstrap store, the target
// of campaign or transfer-leader, a split parent's for its new region, the
// lowest live voter when the wanted one stops), and settling moves the
// leadership there with a leader transfer if an election went elsewhere.
// Ids come from the fake PD in command order, so they are stable too.
//
// Commands (one store or region per argument; store ids are 1..N):
//
//	cluster stores=N                      N fresh stores, no regions
//	bootstrap stores=S,.. [no-campaign]   region 1 over all keys, a voter on each;
//	                                      the first store campaigns unless no-campaign
//	put [store=S] [epoch=C.V]             one key=value a line, one raft proposal:
//	                                      through the leader of the first key's
//	                                      region, or through store S; epoch= sends it
//	                                      planned under conf_ver C and version V
//	get key=K [store=S] [version=V]       a linearizable read (RegionRead, then the
//	                                      engine), on the leader or on store S, with
//	                                      the epoch version V if given
//	split region=R key=K                  split through the leader (ids from PD)
//	transfer-leader region=R to=S
//	campaign region=R store=S             store S's peer starts an election (it wins
//	                                      only where no peer heard from a leader
//	                                      lately: pre-vote and check-quorum refuse
//	                                      it otherwise, and settling then moves the
//	                                      leadership with a transfer)
//	stop-store store=S / restart-store store=S
//	add-learner region=R store=S / promote region=R store=S / remove-peer region=R store=S
//	regions                               every region as the live stores agree on it
//	data                                  every region's keys, once its live replicas
//	                                      hold the same ones
func TestRaftstoreTranscripts(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		h := &ddHarness{t: t, wantLeader: map[uint64]uint64{}}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			return h.run(t, d)
		})
	})
}

type ddHarness struct {
	t *testing.T
	c *testCluster
	n int
	// wantLeader: region id -> the store that should lead it.
	wantLeader map[uint64]uint64
}

func ddConfig(cfg *Config) {
	// Long enough election timeouts that a loaded machine rarely sees a
	// spurious election (settling would undo it, but it costs time).
	cfg.TickInterval = 20 * time.Millisecond
	cfg.ElectionTicks = 10
	// Splits only on command: a size-triggered one would take ids from PD.
	cfg.RegionSplitSize = 1 << 40
}

func (h *ddHarness) run(t *testing.T, d *datadriven.TestData) string {
	h.t = t
	if d.Cmd != "cluster" && h.c == nil {
		d.Fatalf(t, "no cluster: start with `cluster stores=N`")
	}
	switch d.Cmd {
	case "cluster":
		h.n = ddInt(t, d, "stores")
		h.c = newTestCluster(t, h.n, ddConfig)
		var ids []string
		for id := 1; id <= h.n; id++ {
			ids = append(ids, fmt.Sprintf("s%d", id))
		}
		return "stores " + strings.Join(ids, " ") + "\n"

	case "bootstrap":
		stores := ddStores(t, d, "stores")
		if d.HasArg("no-campaign") {
			// Leave the region without a leader for a campaign command:
			// print the descriptor every store was given.
			region := &metapb.Region{Id: 1, RegionEpoch: &metapb.RegionEpoch{ConfVer: 1, Version: 1}}
			for _, sid := range stores {
				region.Peers = append(region.Peers, &metapb.Peer{Id: h.c.pd.allocID(), StoreId: sid})
			}
			for _, sid := range stores {
				if err := h.liveStore(d, sid).BootstrapRegion(region); err != nil {
					return ddError(err)
				}
			}
			return h.formatRegion(region) + " no leader\n"
		}
		h.c.bootstrap(stores...)
		h.wantLeader[1] = stores[0]
		return h.settledRegions(d)

	case "put":
		return h.put(t, d)

	case "get":
		return h.get(t, d)

	case "split":
		regionID := uint64(ddInt(t, d, "region"))
		key := ddArg(t, d, "key")
		leader := h.leaderStore(d, regionID)
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		if err := leader.SplitRegion(ctx, regionID, []byte(key)); err != nil {
			return ddError(err)
		}
		// SplitRegion returns when the parent is applied; the new region's
		// peer is created right after, in the same round's post-apply work.
		var right RegionInfo
		h.c.eventually(fmt.Sprintf("a region starting at %q on store %d", key, leader.StoreID()), func() bool {
			info, ok := leader.RegionByKey([]byte(key))
			right = info
			return ok && info.Region.GetId() != regionID
		})
		h.wantLeader[right.Region.GetId()] = h.wantLeader[regionID]
		return h.settledRegions(d)

	case "transfer-leader":
		regionID, to := uint64(ddInt(t, d, "region")), uint64(ddInt(t, d, "to"))
		leader := h.leaderStore(d, regionID)
		info, _ := leader.Region(regionID)
		target := findStorePeer(info.Region, to)
		if target == nil {
			d.Fatalf(t, "region %d has no peer on store %d", regionID, to)
		}
		if err := leader.TransferLeader(regionID, target.GetId()); err != nil {
			return ddError(err)
		}
		h.wantLeader[regionID] = to
		return h.settledRegions(d)

	case "campaign":
		regionID, storeID := uint64(ddInt(t, d, "region")), uint64(ddInt(t, d, "store"))
		if err := h.liveStore(d, storeID).Campaign(regionID); err != nil {
			return ddError(err)
		}
		h.wantLeader[regionID] = storeID
		return h.settledRegions(d)

	case "stop-store":
		storeID := uint64(ddInt(t, d, "store"))
		h.liveStore(d, storeID)
		h.c.stop(storeID)
		for regionID, want := range h.wantLeader {
			if want == storeID {
				h.wantLeader[regionID] = h.lowestLiveVoter(regionID)
			}
		}
		return h.settledRegions(d)

	case "restart-store":
		storeID := uint64(ddInt(t, d, "store"))
		if h.c.store(storeID) != nil {
			d.Fatalf(t, "store %d is running", storeID)
		}
		h.c.start(storeID)
		return h.settledRegions(d)

	case "add-learner", "promote", "remove-peer":
		regionID, storeID := uint64(ddInt(t, d, "region")), uint64(ddInt(t, d, "store"))
		leader := h.leaderStore(d, regionID)
		info, _ := leader.Region(regionID)
		target := findStorePeer(info.Region, storeID)
		change := map[string]ChangeType{"add-learner": AddLearner, "promote": PromoteLearner, "remove-peer": RemovePeer}[d.Cmd]
		if change == AddLearner {
			target = &metapb.Peer{Id: h.c.pd.allocID(), StoreId: storeID}
		} else if target == nil {
			d.Fatalf(t, "region %d has no peer on store %d", regionID, storeID)
		}
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		if err := leader.ChangePeer(ctx, regionID, change, target); err != nil {
			return ddError(err)
		}
		return h.settledRegions(d)

	case "regions":
		return h.settledRegions(d)

	case "data":
		return h.data(d)
	}
	d.Fatalf(t, "unknown command %q", d.Cmd)
	return ""
}

// put proposes one write batch and prints its outcome.
func (h *ddHarness) put(t *testing.T, d *datadriven.TestData) string {
	var keys, values []string
	for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			d.Fatalf(t, "put: want key=value lines, got %q", line)
		}
		keys, values = append(keys, k), append(values, v)
	}
	if len(keys) == 0 {
		d.Fatalf(t, "put: no keys")
	}
	h.settle(d)
	s := h.targetStore(d, keys[0])
	if d.HasArg("epoch") {
		// A request planned under a given epoch, as a client with a stale
		// region cache sends it.
		confVer, version := ddEpoch(t, d)
		var ops []byte
		for i := range keys {
			ops = appendOp(ops, opSet, dataKey(keys[i]), []byte(values[i]))
		}
		info, ok := s.RegionByKey([]byte(keys[0]))
		if !ok {
			d.Fatalf(t, "store %d has no region holding %q", s.StoreID(), keys[0])
		}
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		return ddResult(s.proposeWrite(ctx, info.Region.GetId(), confVer, version, ops, 0))
	}
	b := s.Engine().NewBatch()
	defer b.Close()
	for i := range keys {
		b.Set(dataKey(keys[i]), []byte(values[i]))
	}
	return ddResult(b.Commit(true))
}

// get reads one key linearizably and prints its value.
func (h *ddHarness) get(t *testing.T, d *datadriven.TestData) string {
	key := ddArg(t, d, "key")
	h.settle(d)
	s := h.targetStore(d, key)
	info, ok := s.RegionByKey([]byte(key))
	if !ok {
		d.Fatalf(t, "store %d has no region holding %q", s.StoreID(), key)
	}
	var epoch *metapb.RegionEpoch
	if d.HasArg("version") {
		epoch = &metapb.RegionEpoch{Version: uint64(ddInt(t, d, "version"))}
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	if _, err := s.RegionRead(ctx, info.Region.GetId(), epoch); err != nil {
		return ddError(err)
	}
	v, found := engineGet(s.Engine(), key)
	if !found {
		return "not found\n"
	}
	return v + "\n"
}

// targetStore is store= if given, else the leader of key's region.
func (h *ddHarness) targetStore(d *datadriven.TestData, key string) *Store {
	if d.HasArg("store") {
		return h.liveStore(d, uint64(ddInt(h.t, d, "store")))
	}
	return h.leaderStore(d, h.c.regionOfKey(key))
}

func (h *ddHarness) liveStore(d *datadriven.TestData, storeID uint64) *Store {
	s := h.c.store(storeID)
	if s == nil {
		d.Fatalf(h.t, "store %d is not running", storeID)
	}
	return s
}

// leaderStore settles the cluster and returns the region's leader.
func (h *ddHarness) leaderStore(d *datadriven.TestData, regionID uint64) *Store {
	h.settle(d)
	want := h.wantLeader[regionID]
	if want == 0 {
		d.Fatalf(h.t, "region %d has no wanted leader", regionID)
	}
	return h.liveStore(d, want)
}

func (h *ddHarness) liveStores() []*Store {
	var out []*Store
	for id := uint64(1); id <= uint64(h.n); id++ {
		if s := h.c.store(id); s != nil {
			out = append(out, s)
		}
	}
	return out
}

// lowestLiveVoter is the live store with the smallest id holding a voter
// of the region, 0 if none.
func (h *ddHarness) lowestLiveVoter(regionID uint64) uint64 {
	best := uint64(0)
	for _, s := range h.liveStores() {
		info, ok := s.Region(regionID)
		if !ok {
			continue
		}
		for _, m := range info.Region.GetPeers() {
			if m.GetRole() == metapb.PeerRole_Voter && h.c.store(m.GetStoreId()) != nil && (best == 0 || m.GetStoreId() < best) {
				best = m.GetStoreId()
			}
		}
	}
	return best
}

// clusterView is the regions as the live stores agree on them.
type clusterView struct {
	regions []*metapb.Region // sorted by start key
	leader  map[uint64]uint64
}

// settle waits until the live stores agree on every region and its wanted
// leader leads it (moving leadership there when an election went
// elsewhere), or fails the test after waitFor with what still differs.
func (h *ddHarness) settle(d *datadriven.TestData) clusterView {
	h.t.Helper()
	deadline := time.Now().Add(waitFor)
	// A command may just have started a transfer of its own: give it
	// about an election timeout before stepping in.
	lastTransfer := time.Now()
	for {
		view, problem, transfer := h.agreement()
		if problem == "" {
			return view
		}
		if time.Now().After(deadline) {
			d.Fatalf(h.t, "cluster did not settle in %v: %s", waitFor, problem)
		}
		if transfer != nil && time.Since(lastTransfer) > 300*time.Millisecond {
			lastTransfer = time.Now()
			_ = transfer()
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// agreement checks the live stores once. It returns their common view, or
// what still differs and, when another store leads a region, the leader
// transfer that would move it to the wanted store.
func (h *ddHarness) agreement() (clusterView, string, func() error) {
	views := map[uint64]map[uint64]RegionInfo{} // region -> store -> info
	live := map[uint64]bool{}
	for _, s := range h.liveStores() {
		live[s.StoreID()] = true
		for _, info := range s.Regions() {
			if views[info.Region.GetId()] == nil {
				views[info.Region.GetId()] = map[uint64]RegionInfo{}
			}
			views[info.Region.GetId()][s.StoreID()] = info
		}
	}
	view := clusterView{leader: map[uint64]uint64{}}
	for regionID, byStore := range views {
		// The newest descriptor any live store has is the one all should
		// reach.
		var newest *metapb.Region
		for _, info := range byStore {
			if isInitialized(info.Region) && (newest == nil || epochAfter(info.Region.GetRegionEpoch(), newest.GetRegionEpoch())) {
				newest = info.Region
			}
		}
		if newest == nil {
			return view, fmt.Sprintf("region %d is not initialized on any live store", regionID), nil
		}
		members := map[uint64]bool{}
		for _, m := range newest.GetPeers() {
			members[m.GetStoreId()] = true
			if !live[m.GetStoreId()] {
				continue
			}
			info, ok := byStore[m.GetStoreId()]
			if !ok || !proto.Equal(info.Region, newest) {
				return view, fmt.Sprintf("store %d has %v of region %d, store(s) have %v", m.GetStoreId(), info.Region, regionID, newest), nil
			}
		}
		for storeID := range byStore {
			if !members[storeID] {
				return view, fmt.Sprintf("store %d still has a peer of region %d, which is %v", storeID, regionID, newest), nil
			}
		}
		want := h.wantLeader[regionID]
		var leading uint64
		for storeID, info := range byStore {
			if info.IsLeader {
				leading = storeID
			}
		}
		if want != 0 && leading != 0 && leading != want && live[want] {
			target := findStorePeer(newest, want)
			from := h.c.store(leading)
			if target == nil || from == nil {
				return view, fmt.Sprintf("region %d: wanted leader store %d has no peer", regionID, want), nil
			}
			return view, fmt.Sprintf("region %d is led by store %d, not store %d", regionID, leading, want),
				func() error { return from.TransferLeader(regionID, target.GetId()) }
		}
		if leading == 0 || (want != 0 && leading != want) {
			return view, fmt.Sprintf("region %d has no leader (want store %d)", regionID, want), nil
		}
		for storeID, info := range byStore {
			if info.Leader.GetStoreId() != leading {
				return view, fmt.Sprintf("store %d thinks %v leads region %d, not store %d", storeID, info.Leader, regionID, leading), nil
			}
		}
		// A new leader refuses batches until it applied an entry of its
		// term (engine.go): a put right after settling must not see that.
		if !leaderReady(h.c.store(leading), regionID) {
			return view, fmt.Sprintf("region %d: the leader on store %d has not applied an entry of its term", regionID, leading), nil
		}
		view.regions = append(view.regions, newest)
		view.leader[regionID] = leading
	}
	sort.Slice(view.regions, func(i, j int) bool {
		return bytes.Compare(view.regions[i].GetStartKey(), view.regions[j].GetStartKey()) < 0
	})
	return view, "", nil
}

// leaderReady asks the raft goroutine (the owner of the flag) whether the
// store's peer of the region is a leader ready for batches.
func leaderReady(s *Store, regionID uint64) bool {
	if s == nil {
		return false
	}
	return s.call(func() error {
		if p := s.peers[regionID]; p == nil || !p.isLeader || !p.leaderReady {
			return errors.New("not ready")
		}
		return nil
	}) == nil
}

// epochAfter reports whether a is newer than b (splits first).
func epochAfter(a, b *metapb.RegionEpoch) bool {
	if a.GetVersion() != b.GetVersion() {
		return a.GetVersion() > b.GetVersion()
	}
	return a.GetConfVer() > b.GetConfVer()
}

func (h *ddHarness) settledRegions(d *datadriven.TestData) string {
	view := h.settle(d)
	var b strings.Builder
	for _, r := range view.regions {
		b.WriteString(h.formatRegion(r))
		fmt.Fprintf(&b, " leader=s%d\n", view.leader[r.GetId()])
	}
	return b.String()
}

func (h *ddHarness) formatRegion(r *metapb.Region) string {
	var b strings.Builder
	fmt.Fprintf(&b, "r%d [%s, %s) epoch=%d.%d peers=", r.GetId(), ddKey(r.GetStartKey(), "-inf"), ddKey(r.GetEndKey(), "+inf"),
		r.GetRegionEpoch().GetConfVer(), r.GetRegionEpoch().GetVersion())
	for i, m := range r.GetPeers() {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%d@s%d", m.GetId(), m.GetStoreId())
		if m.GetRole() == metapb.PeerRole_Learner {
			b.WriteString("(learner)")
		}
		if h.c.store(m.GetStoreId()) == nil {
			b.WriteString("(down)")
		}
	}
	return b.String()
}

func ddKey(k []byte, empty string) string {
	if len(k) == 0 {
		return empty
	}
	return string(k)
}

// data prints every region's keys once all its live replicas hold the
// same ones (followers apply a little after the leader).
func (h *ddHarness) data(d *datadriven.TestData) string {
	view := h.settle(d)
	var b strings.Builder
	for _, r := range view.regions {
		var agreed string
		h.c.eventually(fmt.Sprintf("the replicas of region %d hold the same data", r.GetId()), func() bool {
			var got []string
			for _, m := range r.GetPeers() {
				if s := h.c.store(m.GetStoreId()); s != nil {
					got = append(got, regionData(s, r))
				}
			}
			for _, g := range got[1:] {
				if g != got[0] {
					return false
				}
			}
			agreed = got[0]
			return true
		})
		fmt.Fprintf(&b, "r%d:%s\n", r.GetId(), agreed)
	}
	return b.String()
}

// regionData lists the user keys and values a store holds in region r.
func regionData(s *Store, r *metapb.Region) string {
	snap := s.Engine().NewSnapshot()
	defer snap.Close()
	var b strings.Builder
	for _, rg := range mvcckey.EngineRanges(r.GetStartKey(), r.GetEndKey()) {
		it := snap.NewIterator(rg.Start, rg.End)
		for ok := it.First(); ok; ok = it.Next() {
			uk, err := mvcckey.UserKey(it.Key())
			if err != nil {
				uk = it.Key()
			}
			fmt.Fprintf(&b, " %s=%s", uk, it.Value())
		}
		_ = it.Close()
	}
	return b.String()
}

// ddError prints a region error with what a client would act on.
func ddError(err error) string {
	var nl *NotLeaderError
	var enm *EpochNotMatchError
	var knr *KeyNotInRegionError
	var rnf *RegionNotFoundError
	switch {
	case errors.As(err, &nl):
		if l := nl.Msg.GetLeader(); l != nil {
			return fmt.Sprintf("error: not leader of r%d; leader is peer %d on s%d\n", nl.Msg.GetRegionId(), l.GetId(), l.GetStoreId())
		}
		return fmt.Sprintf("error: not leader of r%d; leader unknown\n", nl.Msg.GetRegionId())
	case errors.As(err, &enm):
		var b strings.Builder
		b.WriteString("error: epoch not match; current regions:\n")
		for _, r := range enm.Msg.GetCurrentRegions() {
			fmt.Fprintf(&b, "  r%d [%s, %s) epoch=%d.%d\n", r.GetId(), ddKey(r.GetStartKey(), "-inf"), ddKey(r.GetEndKey(), "+inf"),
				r.GetRegionEpoch().GetConfVer(), r.GetRegionEpoch().GetVersion())
		}
		return b.String()
	case errors.As(err, &knr):
		return fmt.Sprintf("error: key %s not in r%d [%s, %s)\n", knr.Msg.GetKey(), knr.Msg.GetRegionId(),
			ddKey(knr.Msg.GetStartKey(), "-inf"), ddKey(knr.Msg.GetEndKey(), "+inf"))
	case errors.As(err, &rnf):
		return fmt.Sprintf("error: r%d not found\n", rnf.Msg.GetRegionId())
	}
	return fmt.Sprintf("error: %v\n", err)
}

func ddResult(err error) string {
	if err != nil {
		return ddError(err)
	}
	return "ok\n"
}

func ddArg(t *testing.T, d *datadriven.TestData, key string) string {
	t.Helper()
	var s string
	d.ScanArgs(t, key, &s)
	return s
}

func ddInt(t *testing.T, d *datadriven.TestData, key string) int {
	t.Helper()
	n, err := strconv.Atoi(ddArg(t, d, key))
	if err != nil {
		d.Fatalf(t, "%s: %v", key, err)
	}
	return n
}

// ddStores parses a comma-separated list of store ids.
func ddStores(t *testing.T, d *datadriven.TestData, key string) []uint64 {
	t.Helper()
	var out []uint64
	for _, f := range strings.Split(ddArg(t, d, key), ",") {
		id, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			d.Fatalf(t, "%s: %v", key, err)
		}
		out = append(out, id)
	}
	if slices.Contains(out, 0) {
		d.Fatalf(t, "%s: store ids start at 1", key)
	}
	return out
}

// ddEpoch parses epoch=C.V (conf_ver C, version V).
func ddEpoch(t *testing.T, d *datadriven.TestData) (confVer, version uint64) {
	t.Helper()
	c, v, ok := strings.Cut(ddArg(t, d, "epoch"), ".")
	cv, err1 := strconv.ParseUint(c, 10, 64)
	vv, err2 := strconv.ParseUint(v, 10, 64)
	if !ok || err1 != nil || err2 != nil {
		d.Fatalf(t, "epoch: want C.V")
	}
	return cv, vv
}

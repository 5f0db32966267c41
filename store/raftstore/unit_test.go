package raftstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/shoaldb/shoal/proto/metapb"
	"github.com/shoaldb/shoal/store/kvrpc"
	"github.com/shoaldb/shoal/store/mvcc"
	"github.com/shoaldb/shoal/store/pebbleengine"
)

func TestCommandRoundTrip(t *testing.T) {
	var ops []byte
	ops = appendOp(ops, opSet, []byte("k1"), []byte("v1"))
	ops = appendOp(ops, opDelete, []byte("k2"), nil)
	ops = appendOp(ops, opSet, []byte(""), []byte(""))
	cmds := []*command{
		{kind: cmdWrite, proposalID: 1 << 60, regionID: 7, confVer: 3, version: 9, ops: ops},
		{kind: cmdSplit, proposalID: 2, regionID: 7, splitKey: []byte("m"), newRegionID: 8, newPeerIDs: []uint64{11, 12, 13}},
		{kind: cmdCompactLog, proposalID: 3, regionID: 7, compactIndex: 100, compactTerm: 6},
		{kind: cmdConfChange, proposalID: 4, regionID: 7, peer: &metapb.Peer{Id: 5, StoreId: 2, Role: metapb.PeerRole_Learner}},
	}
	for _, c := range cmds {
		b := c.encode()
		if id, ok := peekProposalID(b); !ok || id != c.proposalID {
			t.Fatalf("peek id: %d %v", id, ok)
		}
		d, err := decodeCommand(b)
		if err != nil {
			t.Fatal(err)
		}
		if d.kind != c.kind || d.regionID != c.regionID || d.confVer != c.confVer || d.version != c.version ||
			!bytes.Equal(d.ops, c.ops) || !bytes.Equal(d.splitKey, c.splitKey) || d.newRegionID != c.newRegionID ||
			fmt.Sprint(d.newPeerIDs) != fmt.Sprint(c.newPeerIDs) || d.compactIndex != c.compactIndex ||
			d.compactTerm != c.compactTerm || d.peer.GetId() != c.peer.GetId() || d.peer.GetRole() != c.peer.GetRole() {
			t.Fatalf("round trip: %+v -> %+v", c, d)
		}
	}
	var got []string
	if err := forEachOp(ops, func(kind opKind, k, v []byte) error {
		got = append(got, fmt.Sprintf("%d:%s=%s", kind, k, v))
		return nil
	}); err != nil || fmt.Sprint(got) != "[1:k1=v1 2:k2= 1:=]" {
		t.Fatalf("ops: %v %v", got, err)
	}
	if _, err := decodeCommand([]byte{cmdVersion, byte(cmdWrite)}); err == nil {
		t.Fatal("a truncated command decoded")
	}
}

func TestTermRuns(t *testing.T) {
	var tr termRuns
	for i := uint64(6); i <= 10; i++ {
		tr.add(i, 5)
	}
	for i := uint64(11); i <= 20; i++ {
		tr.add(i, 7)
	}
	check := func(i, want uint64) {
		t.Helper()
		if got, ok := tr.term(i); !ok || got != want {
			t.Fatalf("term(%d) = %d, %v; want %d", i, got, ok, want)
		}
	}
	check(6, 5)
	check(10, 5)
	check(11, 7)
	check(20, 7)
	tr.add(15, 8) // a new leader replaces the tail from 15
	check(14, 7)
	check(15, 8)
	tr.compact(12)
	check(13, 7)
	check(16, 8)
	if len(tr.runs) != 2 {
		t.Fatalf("runs after compact: %v", tr.runs)
	}
	tr.compact(16)
	check(17, 8)
	if len(tr.runs) != 1 {
		t.Fatalf("runs after compact: %v", tr.runs)
	}
}

// TestEngineRanges checks mvcc's range helpers against real MVCC records:
// every record of a user key maps back to it and lies in the ranges of a
// region holding it, and only of such regions.
func TestEngineRanges(t *testing.T) {
	e, err := pebbleengine.Open(t.TempDir(), pebbleengine.Options{Split: mvcc.SplitKey, SplitName: mvcc.SplitName, BlockCacheSize: 1 << 20, MemTableSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	st := mvcc.New(e, mvcc.Options{NoSync: true})
	ctx := context.Background()
	keys := []string{"", "a", "a\x00", "ab", "abcdefgh", "abcdefghi", "b", "zz"}
	ts := uint64(100)
	for _, k := range keys {
		long := string(bytes.Repeat([]byte("x"), 300)) // forces a default record
		for _, v := range []string{"short", long} {
			ts += 2
			req := kvrpcPrewrite(k, v, ts)
			// "" is one of the keys, and a lock needs a non-empty primary
			// (mvcc's invariants check it).
			req.PrimaryLock = []byte("primary")
			if _, err := st.Prewrite(ctx, req); err != nil {
				t.Fatal(err)
			}
			if err := kvrpcCommit(ctx, st, k, ts, ts+1); err != nil {
				t.Fatal(err)
			}
		}
		ts += 2
		if _, err := st.Prewrite(ctx, kvrpc.PrewriteRequest{Mutations: []kvrpc.Mutation{{Op: kvrpc.OpPut, Key: []byte(k), Value: []byte("locked")}},
			PrimaryLock: []byte("primary"), StartTS: ts, LockTTL: 3000}); err != nil {
			t.Fatal(err)
		}
	}
	regions := [][2]string{{"", ""}, {"", "a"}, {"a", "ab"}, {"a\x00", "abcdefghi"}, {"abcdefghi", ""}, {"b", "zz"}}
	snap := e.NewSnapshot()
	defer snap.Close()
	it := snap.NewIterator([]byte{mvcc.PrefixLock}, []byte{mvcc.PrefixDefault + 1})
	defer it.Close()
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		n++
		uk, err := mvcc.UserKey(it.Key())
		if err != nil {
			t.Fatalf("UserKey(%q): %v", it.Key(), err)
		}
		known := false
		for _, k := range keys {
			known = known || k == string(uk)
		}
		if !known {
			t.Fatalf("UserKey(%q) = %q", it.Key(), uk)
		}
		for _, rg := range regions {
			r := &metapb.Region{StartKey: []byte(rg[0]), EndKey: []byte(rg[1])}
			in := false
			for _, er := range mvcc.EngineRanges(r.StartKey, r.EndKey) {
				if bytes.Compare(it.Key(), er.Start) >= 0 && bytes.Compare(it.Key(), er.End) < 0 {
					in = true
				}
			}
			if in != keyInRegion(uk, r) {
				t.Fatalf("record %q of %q: in engine ranges of [%q,%q) = %v", it.Key(), uk, rg[0], rg[1], in)
			}
		}
	}
	if n < 3*len(keys) {
		t.Fatalf("only %d records", n)
	}
	if _, err := mvcc.UserKey([]byte{mvcc.PrefixLocal, 1}); !errors.Is(err, mvcc.ErrNotDataKey) {
		t.Fatalf("local key: %v", err)
	}
}

// TestBatchFromBeforeLeadershipRefused: a batch created before its peer
// became a ready leader may rest on a stale snapshot: it is refused.
func TestBatchFromBeforeLeadershipRefused(t *testing.T) {
	c := newTestCluster(t, 3, nil)
	c.bootstrap(1, 2, 3)
	c.mustPut("a", "1")
	leader := c.leaderOf(1)
	var next *Store
	for id := uint64(1); id <= 3; id++ {
		if id != leader.StoreID() {
			next = c.store(id)
			break
		}
	}
	stale := next.Engine().NewBatch()
	info, _ := next.Region(1)
	c.eventually("leader transfer", func() bool {
		if in, _ := next.Region(1); in.IsLeader {
			return true
		}
		_ = c.leaderOf(1).TransferLeader(1, info.PeerID)
		time.Sleep(20 * time.Millisecond)
		return false
	})
	stale.Set(dataKey("a"), []byte("stale"))
	var nl *NotLeaderError
	if err := stale.Commit(true); !errors.As(err, &nl) || nl.Msg.GetLeader().GetStoreId() != next.StoreID() {
		t.Fatalf("stale batch: %v", err)
	}
	c.mustPut("a", "2")
	c.waitValue(next.StoreID(), "a", "2")
}

// TestDownAndPendingPeersReported: a stopped store's peer shows up as
// down in the leader's heartbeats.
func TestDownPeerReported(t *testing.T) {
	c := newTestCluster(t, 3, func(cfg *Config) {
		cfg.PDHeartbeatTicks = 3
		cfg.MaxPeerDownDuration = 200 * time.Millisecond
	})
	c.bootstrap(1, 2, 3)
	leader := c.leaderOf(1)
	var victim uint64
	for id := uint64(1); id <= 3; id++ {
		if id != leader.StoreID() {
			victim = id
			break
		}
	}
	c.stop(victim)
	c.eventually("down peer in heartbeat", func() bool {
		c.pd.mu.Lock()
		defer c.pd.mu.Unlock()
		hb := c.pd.heartbeats[1]
		return hb != nil && len(hb.GetDownPeers()) == 1 && hb.GetDownPeers()[0].GetPeer().GetStoreId() == victim
	})
	if st := leader.Stats(); st.GetRegionCount() != 1 || st.GetLeaderCount() != 1 {
		t.Fatalf("stats: %v", st)
	}
}

package storenode

import (
	"bytes"
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/grpc"

	"github.com/shoaldb/shoal/proto/metapb"
	"github.com/shoaldb/shoal/proto/raftserverpb"
	"github.com/shoaldb/shoal/proto/tikvpb"
)

// recorder is both ends' store: it records delivered messages and the
// reports a sender gets.
type recorder struct {
	mu          sync.Mutex
	msgs        []*raftserverpb.RaftMessage
	snapReports map[uint64]bool // to peer -> delivered
	unreachable map[uint64]int  // to peer -> reports
}

func newRecorder() *recorder {
	return &recorder{snapReports: map[uint64]bool{}, unreachable: map[uint64]int{}}
}

func (r *recorder) HandleRaftMessage(m *raftserverpb.RaftMessage) {
	r.mu.Lock()
	r.msgs = append(r.msgs, m)
	r.mu.Unlock()
}
func (r *recorder) ReportSnapshot(_, to uint64, delivered bool) {
	r.mu.Lock()
	r.snapReports[to] = delivered
	r.mu.Unlock()
}
func (r *recorder) ReportUnreachable(_, to uint64) {
	r.mu.Lock()
	r.unreachable[to]++
	r.mu.Unlock()
}

type fixedResolver map[uint64]string

func (f fixedResolver) GetStore(_ context.Context, id uint64) (*metapb.Store, error) {
	return &metapb.Store{Id: id, Address: f[id]}, nil
}

type raftOnly struct {
	tikvpb.UnimplementedTikvServer
	rs *raftService
}

func (r raftOnly) Raft(st tikvpb.Tikv_RaftServer) error         { return r.rs.Raft(st) }
func (r raftOnly) Snapshot(st tikvpb.Tikv_SnapshotServer) error { return r.rs.Snapshot(st) }

func raftMsg(t *testing.T, to uint64, m raftpb.Message) *raftserverpb.RaftMessage {
	b, err := m.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return &raftserverpb.RaftMessage{RegionId: 7, FromPeer: &metapb.Peer{Id: 1, StoreId: 1},
		ToPeer: &metapb.Peer{Id: to, StoreId: 2}, RegionEpoch: &metapb.RegionEpoch{ConfVer: 1, Version: 1}, Message: b}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestTransport(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	receiver := newRecorder()
	stop := make(chan struct{})
	g := grpc.NewServer()
	tikvpb.RegisterTikvServer(g, raftOnly{rs: &raftService{store: receiver, maxSnapshot: 1 << 20, stop: stop}})
	go g.Serve(ln)
	stopped := false
	stopServer := func() {
		if !stopped {
			stopped = true
			close(stop)
			g.Stop()
		}
	}
	defer stopServer()

	sender := newRecorder()
	tr := NewTransport(1, fixedResolver{2: ln.Addr().String()}, TransportOptions{QueueSize: 16, SnapshotChunkSize: 7, Logger: quietLogger()})
	tr.SetHandler(sender)
	defer tr.Close()

	// Plain messages arrive in order.
	for i := range 5 {
		tr.Send([]*raftserverpb.RaftMessage{raftMsg(t, 2, raftpb.Message{Type: raftpb.MsgHeartbeat, To: 2, From: 1, Commit: uint64(i)})})
	}
	waitUntil(t, "heartbeats delivered", func() bool {
		receiver.mu.Lock()
		defer receiver.mu.Unlock()
		return len(receiver.msgs) == 5
	})

	// A snapshot goes in 7-byte chunks and is put back together.
	data := bytes.Repeat([]byte("snapshot-data-"), 20)
	snap := raftMsg(t, 3, raftpb.Message{Type: raftpb.MsgSnap, To: 3, From: 1, Term: 4,
		Snapshot: &raftpb.Snapshot{Data: data, Metadata: raftpb.SnapshotMetadata{Index: 9, Term: 4}}})
	tr.Send([]*raftserverpb.RaftMessage{snap})
	waitUntil(t, "snapshot reported", func() bool {
		sender.mu.Lock()
		defer sender.mu.Unlock()
		_, ok := sender.snapReports[3]
		return ok
	})
	if !sender.snapReports[3] {
		t.Fatal("snapshot reported as not delivered")
	}
	receiver.mu.Lock()
	got := receiver.msgs[len(receiver.msgs)-1]
	receiver.mu.Unlock()
	var m raftpb.Message
	if err := m.Unmarshal(got.Message); err != nil || m.Type != raftpb.MsgSnap || !bytes.Equal(m.Snapshot.Data, data) ||
		m.Snapshot.Metadata.Index != 9 || got.GetToPeer().GetId() != 3 || got.GetRegionId() != 7 {
		t.Fatalf("reassembled snapshot: %v %+v", err, got)
	}

	// The store goes away: messages are dropped and reported, snapshots
	// reported failed; Send never blocks.
	stopServer()
	start := time.Now()
	for i := range 200 {
		tr.Send([]*raftserverpb.RaftMessage{raftMsg(t, 2, raftpb.Message{Type: raftpb.MsgHeartbeat, To: 2, From: 1, Commit: uint64(i)})})
	}
	tr.Send([]*raftserverpb.RaftMessage{raftMsg(t, 4, raftpb.Message{Type: raftpb.MsgSnap, To: 4, From: 1,
		Snapshot: &raftpb.Snapshot{Data: data, Metadata: raftpb.SnapshotMetadata{Index: 9, Term: 4}}})})
	if d := time.Since(start); d > time.Second {
		t.Fatalf("Send blocked for %v", d)
	}
	waitUntil(t, "unreachable and failed snapshot reported", func() bool {
		sender.mu.Lock()
		defer sender.mu.Unlock()
		delivered, reported := sender.snapReports[4]
		return sender.unreachable[2] > 0 && reported && !delivered
	})
}

package raftstore

import (
	"github.com/shoaldb/shoal/proto/raftserverpb"
)

// Transport carries raft messages between stores. A store calls Send only
// from its raft goroutine, once per Ready round with every message of the
// round (all regions), so an implementation should not block: queue and
// return. Messages may be lost, duplicated or reordered across calls;
// raft tolerates that.
//
// A snapshot travels as a RaftMessage whose raft message is MsgSnap, with
// the snapshot data (a marshalled RegionSnapshot) inside raftpb.Snapshot.Data.
// A network transport may strip it off and stream it separately (the
// Snapshot gRPC stream), reassembling the message on the receiving side.
// For every MsgSnap it is handed, the transport must eventually call the
// sending store's ReportSnapshot with whether it was delivered: until then
// raft does not send that follower anything else.
//
// The receiving side hands each message to the target store's
// HandleRaftMessage.
type Transport interface {
	Send(msgs []*raftserverpb.RaftMessage)
}

// RaftMessageHandler is what a transport delivers into (a *Store).
type RaftMessageHandler interface {
	HandleRaftMessage(msg *raftserverpb.RaftMessage)
	ReportSnapshot(regionID, toPeerID uint64, delivered bool)
	ReportUnreachable(regionID, toPeerID uint64)
}

var _ RaftMessageHandler = (*Store)(nil)

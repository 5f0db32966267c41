package raftstore

import (
	"errors"
	"fmt"

	"github.com/shoaldb/shoal/proto/errorpb"
	"github.com/shoaldb/shoal/proto/metapb"
	"google.golang.org/protobuf/proto"
)

// RegionError is an error that tells a client its request reached the
// wrong place or the region changed; none of them means the command ran.
// Each carries the errorpb message the store service returns.
type RegionError interface {
	error
	RegionError() *errorpb.RegionError
}

// AsRegionError returns the errorpb form of err if it is (or wraps) a
// RegionError.
func AsRegionError(err error) (*errorpb.RegionError, bool) {
	var re RegionError
	if errors.As(err, &re) {
		return re.RegionError(), true
	}
	return nil, false
}

// NotLeaderError: this store's peer is not the region's leader. Leader is
// the leader it knows of, or nil.
type NotLeaderError struct{ Msg *errorpb.NotLeader }

func newNotLeader(regionID uint64, leader *metapb.Peer) *NotLeaderError {
	if leader != nil {
		leader = proto.Clone(leader).(*metapb.Peer)
	}
	return &NotLeaderError{Msg: &errorpb.NotLeader{RegionId: regionID, Leader: leader}}
}

func (e *NotLeaderError) Error() string {
	return fmt.Sprintf("raftstore: not leader of region %d (leader %v)", e.Msg.RegionId, e.Msg.Leader)
}
func (e *NotLeaderError) RegionError() *errorpb.RegionError {
	return &errorpb.RegionError{Message: e.Error(), NotLeader: e.Msg}
}

// RegionNotFoundError: this store has no (live) peer of the region.
type RegionNotFoundError struct{ Msg *errorpb.RegionNotFound }

func newRegionNotFound(regionID uint64) *RegionNotFoundError {
	return &RegionNotFoundError{Msg: &errorpb.RegionNotFound{RegionId: regionID}}
}

func (e *RegionNotFoundError) Error() string {
	return fmt.Sprintf("raftstore: region %d not found", e.Msg.RegionId)
}
func (e *RegionNotFoundError) RegionError() *errorpb.RegionError {
	return &errorpb.RegionError{Message: e.Error(), RegionNotFound: e.Msg}
}

// KeyNotInRegionError: a key lies outside the region's range.
type KeyNotInRegionError struct{ Msg *errorpb.KeyNotInRegion }

func newKeyNotInRegion(key []byte, r *metapb.Region) *KeyNotInRegionError {
	return &KeyNotInRegionError{Msg: &errorpb.KeyNotInRegion{
		Key: append([]byte(nil), key...), RegionId: r.GetId(),
		StartKey: append([]byte(nil), r.GetStartKey()...), EndKey: append([]byte(nil), r.GetEndKey()...),
	}}
}

func (e *KeyNotInRegionError) Error() string {
	return fmt.Sprintf("raftstore: key %q not in region %d [%q, %q)", e.Msg.Key, e.Msg.RegionId, e.Msg.StartKey, e.Msg.EndKey)
}
func (e *KeyNotInRegionError) RegionError() *errorpb.RegionError {
	return &errorpb.RegionError{Message: e.Error(), KeyNotInRegion: e.Msg}
}

// EpochNotMatchError: the request was planned under another region epoch;
// CurrentRegions are what the store knows now (after a split, the region
// and its new siblings).
type EpochNotMatchError struct{ Msg *errorpb.EpochNotMatch }

func newEpochNotMatch(regions ...*metapb.Region) *EpochNotMatchError {
	m := &errorpb.EpochNotMatch{}
	for _, r := range regions {
		if r != nil {
			m.CurrentRegions = append(m.CurrentRegions, proto.Clone(r).(*metapb.Region))
		}
	}
	return &EpochNotMatchError{Msg: m}
}

func (e *EpochNotMatchError) Error() string {
	return fmt.Sprintf("raftstore: epoch not match (current regions %v)", e.Msg.CurrentRegions)
}
func (e *EpochNotMatchError) RegionError() *errorpb.RegionError {
	return &errorpb.RegionError{Message: e.Error(), EpochNotMatch: e.Msg}
}

// ServerIsBusyError: the store's proposal or read queue is full; retry
// after a backoff.
type ServerIsBusyError struct{ Msg *errorpb.ServerIsBusy }

func newServerIsBusy(reason string) *ServerIsBusyError {
	return &ServerIsBusyError{Msg: &errorpb.ServerIsBusy{Reason: reason, BackoffMs: 10}}
}

func (e *ServerIsBusyError) Error() string { return "raftstore: server is busy: " + e.Msg.Reason }
func (e *ServerIsBusyError) RegionError() *errorpb.RegionError {
	return &errorpb.RegionError{Message: e.Error(), ServerIsBusy: e.Msg}
}

// ErrTimeout: a proposal or read did not finish in time. Unlike the region
// errors its outcome is unknown: the write may still be applied later.
var ErrTimeout = errors.New("raftstore: timed out waiting for raft (outcome unknown)")

// ErrStopped: the store is closed.
var ErrStopped = errors.New("raftstore: store stopped")

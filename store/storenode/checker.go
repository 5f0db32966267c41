package storenode

import (
	"bytes"
	"context"
	"errors"

	"github.com/shoaldb/shoal/proto/errorpb"
	"github.com/shoaldb/shoal/proto/metapb"
	"github.com/shoaldb/shoal/store/grpcserver"
	"github.com/shoaldb/shoal/store/raftstore"
)

// regionChecker admits a kv command only if this store's peer of the
// named region is its leader with the request's epoch version, the read
// is linearizable (raftstore.RegionRead, for writes too: their checks
// read), and every key (or the scanned range) lies inside the region.
type regionChecker struct {
	store   *raftstore.Store
	storeID uint64
}

var _ grpcserver.RegionChecker = (*regionChecker)(nil)

func (c *regionChecker) CheckRegion(ctx context.Context, req *grpcserver.Request) (context.Context, *errorpb.RegionError) {
	rc := req.Context
	if p := rc.GetPeer(); p != nil && p.GetStoreId() != 0 && p.GetStoreId() != c.storeID {
		return ctx, &errorpb.RegionError{Message: "request meant for another store",
			StoreNotMatch: &errorpb.StoreNotMatch{RequestStoreId: p.GetStoreId(), ActualStoreId: c.storeID}}
	}
	region, err := c.store.RegionRead(ctx, rc.GetRegionId(), rc.GetRegionEpoch())
	if err != nil {
		return ctx, toRegionError(err)
	}
	if re := checkRange(region, req); re != nil {
		return ctx, re
	}
	return ctx, nil
}

// toRegionError maps a RegionRead failure. Nothing ran, so every failure
// is a region error: a timeout (no quorum, or a leader that lost it) and
// a stopping store ask the client to back off and try elsewhere.
func toRegionError(err error) *errorpb.RegionError {
	if re, ok := raftstore.AsRegionError(err); ok {
		return re
	}
	reason := "read index failed: " + err.Error()
	switch {
	case errors.Is(err, raftstore.ErrTimeout):
		reason = "read index timed out (no quorum or leader changing)"
	case errors.Is(err, raftstore.ErrStopped):
		reason = "store is stopping"
	}
	return &errorpb.RegionError{Message: reason, ServerIsBusy: &errorpb.ServerIsBusy{Reason: reason, BackoffMs: 20}}
}

func inRegion(r *metapb.Region, k []byte) bool {
	return bytes.Compare(k, r.GetStartKey()) >= 0 && (len(r.GetEndKey()) == 0 || bytes.Compare(k, r.GetEndKey()) < 0)
}

func notInRegion(r *metapb.Region, k []byte) *errorpb.RegionError {
	return &errorpb.RegionError{Message: "key not in region", KeyNotInRegion: &errorpb.KeyNotInRegion{
		Key: append([]byte(nil), k...), RegionId: r.GetId(),
		StartKey: append([]byte(nil), r.GetStartKey()...), EndKey: append([]byte(nil), r.GetEndKey()...)}}
}

// checkRange: point keys inside r, a scan's [StartKey, EndKey) inside r
// (an unbounded end only in the last region).
func checkRange(r *metapb.Region, req *grpcserver.Request) *errorpb.RegionError {
	for _, k := range req.Keys {
		if !inRegion(r, k) {
			return notInRegion(r, k)
		}
	}
	if req.Scan {
		if bytes.Compare(req.StartKey, r.GetStartKey()) < 0 {
			return notInRegion(r, req.StartKey)
		}
		if len(r.GetEndKey()) > 0 && (len(req.EndKey) == 0 || bytes.Compare(req.EndKey, r.GetEndKey()) > 0) {
			return notInRegion(r, req.EndKey)
		}
	}
	return nil
}

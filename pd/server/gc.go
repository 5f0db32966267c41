package server

import (
	"context"
	"math"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/shoaldb/shoal/proto/pdpb"
)

// # GC safe points
//
// PD keeps two things for MVCC garbage collection:
//
//   - The GC safe point (gcSafePointKey): versions below it may be gone.
//     It never decreases; stores poll it and refuse reads below it.
//   - Service safe points (gcServicePrefix): each SQL node (a "service")
//     says, with a TTL, that it still needs the versions at and above its
//     smallest live start ts. The GC worker takes the minimum over the
//     unexpired entries as a ceiling for the next GC safe point, and
//     UpdateGCSafePoint enforces it too: the GC safe point never passes an
//     unexpired service safe point.
//
// Service safe points are persisted in etcd (guarded leader writes, like
// everything else) rather than kept in leader memory: a new leader must
// not forget a node's claim and let GC pass a long transaction in the gap
// before that node reports again. Expiry is wall-clock unix seconds of the
// leader that wrote the entry; a successor's clock decides afterwards
// (clock skew between PD members shifts an expiry by the skew, and the TTL
// is minutes against report intervals of seconds).
//
// A service reporting below the GC safe point is recorded at the GC safe
// point: the versions it wanted are already gone (its reads below it fail
// with "GC too early"), and a lower entry would only hold GC back.

// maxServiceTTL caps a TTL so that now+ttl cannot overflow.
const maxServiceTTL = int64(100 * 365 * 24 * 3600)

// minServiceSafePoint returns the unexpired service with the smallest safe
// point ("" if none). Callers hold metaMu.
func (l *leadership) minServiceSafePoint(now int64) (string, serviceSafePoint) {
	var id string
	var best serviceSafePoint
	for sid, sp := range l.services {
		if sp.expiresAt <= now {
			continue
		}
		if id == "" || sp.safePoint < best.safePoint || (sp.safePoint == best.safePoint && sid < id) {
			id, best = sid, sp
		}
	}
	return id, best
}

// UpdateServiceGCSafePoint records (or with ttl <= 0 removes) a service's
// safe point and answers the smallest unexpired one. Expired entries are
// deleted from etcd in the same write.
func (g *grpcService) UpdateServiceGCSafePoint(ctx context.Context, req *pdpb.UpdateServiceGCSafePointRequest) (*pdpb.UpdateServiceGCSafePointResponse, error) {
	if req.ServiceId == "" {
		return &pdpb.UpdateServiceGCSafePointResponse{Header: g.errHeader(pdpb.ErrorType_UNKNOWN, "service id must not be empty")}, nil
	}
	l := g.s.leader()
	if l == nil {
		return &pdpb.UpdateServiceGCSafePointResponse{Header: g.notLeader()}, nil
	}
	l.metaMu.Lock()
	defer l.metaMu.Unlock()
	now := time.Now().Unix()
	var ops []clientv3.Op
	var expired []string
	for sid, sp := range l.services {
		if sp.expiresAt <= now && sid != req.ServiceId {
			expired = append(expired, sid)
			ops = append(ops, clientv3.OpDelete(gcServicePrefix+sid))
		}
	}
	var entry serviceSafePoint
	if req.Ttl > 0 {
		entry = serviceSafePoint{safePoint: max(req.SafePoint, l.gcSafePoint), expiresAt: now + min(req.Ttl, maxServiceTTL)}
		ops = append(ops, clientv3.OpPut(gcServicePrefix+req.ServiceId, entry.encode()))
	} else {
		ops = append(ops, clientv3.OpDelete(gcServicePrefix+req.ServiceId))
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	if _, err := l.txn(ctx, nil, ops...); err != nil {
		return &pdpb.UpdateServiceGCSafePointResponse{Header: g.errorHeader(err)}, nil
	}
	for _, sid := range expired {
		delete(l.services, sid)
	}
	if req.Ttl > 0 {
		l.services[req.ServiceId] = entry
	} else {
		delete(l.services, req.ServiceId)
	}
	id, m := l.minServiceSafePoint(now)
	return &pdpb.UpdateServiceGCSafePointResponse{Header: g.header(), MinServiceId: id,
		MinSafePoint: m.safePoint, MinExpiresAt: m.expiresAt}, nil
}

// gcSafePointCeiling is the highest GC safe point the unexpired service
// safe points allow (math.MaxUint64 if none). Callers hold metaMu.
func (l *leadership) gcSafePointCeiling() uint64 {
	id, m := l.minServiceSafePoint(time.Now().Unix())
	if id == "" {
		return math.MaxUint64
	}
	return m.safePoint
}

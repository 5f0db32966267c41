package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/shoaldb/shoal/pd/server/schedule"
	"github.com/shoaldb/shoal/proto/metapb"
	"github.com/shoaldb/shoal/proto/pdpb"
)

// requestTimeout bounds the etcd work of one request.
const requestTimeout = 5 * time.Second

// maxScanRegions caps one ScanRegions answer.
const maxScanRegions = 10000

// grpcService implements pdpb.PD on top of a Server.
type grpcService struct {
	pdpb.UnimplementedPDServer
	s *Server
}

func (g *grpcService) header() *pdpb.ResponseHeader {
	return &pdpb.ResponseHeader{ClusterId: g.s.clusterID}
}

func (g *grpcService) errHeader(t pdpb.ErrorType, msg string) *pdpb.ResponseHeader {
	return &pdpb.ResponseHeader{ClusterId: g.s.clusterID, Error: &pdpb.Error{Type: t, Message: msg}}
}

func (g *grpcService) notLeader() *pdpb.ResponseHeader {
	return g.errHeader(pdpb.ErrorType_NOT_LEADER, g.s.notLeaderMessage())
}

// errorHeader turns an internal error into a response header.
func (g *grpcService) errorHeader(err error) *pdpb.ResponseHeader {
	if errors.Is(err, errNotLeader) || errors.Is(err, errAllocatorClosed) {
		return g.notLeader()
	}
	return g.errHeader(pdpb.ErrorType_UNKNOWN, err.Error())
}

func (g *grpcService) GetMembers(ctx context.Context, _ *pdpb.GetMembersRequest) (*pdpb.GetMembersResponse, error) {
	return &pdpb.GetMembersResponse{Header: g.header(), Members: g.s.Members(), Leader: g.s.Leader()}, nil
}

// streamRecv feeds a stream's requests into a channel, so that a handler
// can also watch for the server closing (etcd's graceful stop would wait
// for open streams otherwise).
func streamRecv[T any](stream grpc.ServerStream, recv func() (*T, error)) (<-chan *T, <-chan error) {
	reqs, errc := make(chan *T), make(chan error, 1)
	go func() {
		for {
			r, err := recv()
			if err != nil {
				errc <- err
				return
			}
			select {
			case reqs <- r:
			case <-stream.Context().Done():
				return
			}
		}
	}()
	return reqs, errc
}

func streamEnd(err error) error {
	if err == io.EOF {
		return nil
	}
	return err
}

func (g *grpcService) Tso(stream pdpb.PD_TsoServer) error {
	reqs, errc := streamRecv(stream, stream.Recv)
	for {
		select {
		case <-g.s.closing:
			return status.Error(codes.Unavailable, errClosing.Error())
		case err := <-errc:
			return streamEnd(err)
		case req := <-reqs:
			if err := stream.Send(g.tso(stream.Context(), req)); err != nil {
				return err
			}
		}
	}
}

func (g *grpcService) tso(ctx context.Context, req *pdpb.TsoRequest) *pdpb.TsoResponse {
	l := g.s.leader()
	if l == nil {
		return &pdpb.TsoResponse{Header: g.notLeader()}
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	physical, logical, err := l.tso.generate(ctx, req.Count)
	if err != nil {
		return &pdpb.TsoResponse{Header: g.errorHeader(err)}
	}
	tsoRequests.Inc()
	return &pdpb.TsoResponse{Header: g.header(), Count: req.Count, Timestamp: &pdpb.Timestamp{Physical: physical, Logical: logical}}
}

func (g *grpcService) AllocID(ctx context.Context, _ *pdpb.AllocIDRequest) (*pdpb.AllocIDResponse, error) {
	l := g.s.leader()
	if l == nil {
		return &pdpb.AllocIDResponse{Header: g.notLeader()}, nil
	}
	id, err := l.ids.alloc(ctx, 1)
	if err != nil {
		return &pdpb.AllocIDResponse{Header: g.errorHeader(err)}, nil
	}
	return &pdpb.AllocIDResponse{Header: g.header(), Id: id}, nil
}

func (g *grpcService) IsBootstrapped(ctx context.Context, _ *pdpb.IsBootstrappedRequest) (*pdpb.IsBootstrappedResponse, error) {
	l := g.s.leader()
	if l == nil {
		return &pdpb.IsBootstrappedResponse{Header: g.notLeader()}, nil
	}
	return &pdpb.IsBootstrappedResponse{Header: g.header(), Bootstrapped: l.bootstrapped.Load()}, nil
}

func (g *grpcService) Bootstrap(ctx context.Context, req *pdpb.BootstrapRequest) (*pdpb.BootstrapResponse, error) {
	l := g.s.leader()
	if l == nil {
		return &pdpb.BootstrapResponse{Header: g.notLeader()}, nil
	}
	st, r := req.GetStore(), req.GetRegion()
	if st.GetId() == 0 || st.GetAddress() == "" || r.GetId() == 0 || len(r.GetPeers()) == 0 {
		return &pdpb.BootstrapResponse{Header: g.errHeader(pdpb.ErrorType_UNKNOWN, "bootstrap needs a store (id, address) and a region (id, peers)")}, nil
	}
	for _, p := range r.Peers {
		if p.StoreId != st.Id {
			return &pdpb.BootstrapResponse{Header: g.errHeader(pdpb.ErrorType_UNKNOWN, "the first region's peers must be on the bootstrapping store")}, nil
		}
	}
	l.metaMu.Lock()
	defer l.metaMu.Unlock()
	if l.bootstrapped.Load() {
		return &pdpb.BootstrapResponse{Header: g.errHeader(pdpb.ErrorType_ALREADY_BOOTSTRAPPED, "cluster is already bootstrapped")}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	resp, err := l.txn(ctx,
		[]clientv3.Cmp{clientv3.Compare(clientv3.CreateRevision(bootstrapKey), "=", 0)},
		clientv3.OpPut(storeKey(st.Id), mustMarshal(st)),
		clientv3.OpPut(regionKey(r.Id), mustMarshal(r)),
		clientv3.OpPut(bootstrapKey, "1"),
	)
	if err != nil {
		return &pdpb.BootstrapResponse{Header: g.errorHeader(err)}, nil
	}
	if !resp.Succeeded {
		l.bootstrapped.Store(true)
		return &pdpb.BootstrapResponse{Header: g.errHeader(pdpb.ErrorType_ALREADY_BOOTSTRAPPED, "cluster is already bootstrapped")}, nil
	}
	l.cluster.putStore(&storeInfo{meta: st, lastHeartbeat: time.Now()})
	if _, _, err := l.cluster.putRegion(&regionInfo{meta: r, leader: r.Peers[0]}); err != nil {
		g.s.log.Warn("bootstrap region not applied", "err", err)
	}
	l.bootstrapped.Store(true)
	g.s.log.Info("cluster bootstrapped", "store", st.Id, "address", st.Address, "region", r.Id)
	return &pdpb.BootstrapResponse{Header: g.header()}, nil
}

func (g *grpcService) PutStore(ctx context.Context, req *pdpb.PutStoreRequest) (*pdpb.PutStoreResponse, error) {
	l := g.s.leader()
	if l == nil {
		return &pdpb.PutStoreResponse{Header: g.notLeader()}, nil
	}
	if !l.bootstrapped.Load() {
		return &pdpb.PutStoreResponse{Header: g.errHeader(pdpb.ErrorType_NOT_BOOTSTRAPPED, "cluster is not bootstrapped")}, nil
	}
	st := req.GetStore()
	if st.GetId() == 0 || st.GetAddress() == "" {
		return &pdpb.PutStoreResponse{Header: g.errHeader(pdpb.ErrorType_UNKNOWN, "store needs an id and an address")}, nil
	}
	if old := l.cluster.getStore(st.Id); old != nil && old.meta.State == metapb.StoreState_Tombstone {
		return &pdpb.PutStoreResponse{Header: g.errHeader(pdpb.ErrorType_STORE_TOMBSTONE, fmt.Sprintf("store %d is a tombstone", st.Id))}, nil
	}
	if other := l.cluster.storeByAddress(st.Address, st.Id); other != nil {
		return &pdpb.PutStoreResponse{Header: g.errHeader(pdpb.ErrorType_UNKNOWN,
			fmt.Sprintf("address %s is already used by store %d", st.Address, other.meta.Id))}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	if _, err := l.txn(ctx, nil, clientv3.OpPut(storeKey(st.Id), mustMarshal(st))); err != nil {
		return &pdpb.PutStoreResponse{Header: g.errorHeader(err)}, nil
	}
	var stats *pdpb.StoreStats
	if old := l.cluster.getStore(st.Id); old != nil {
		stats = old.stats
	}
	l.cluster.putStore(&storeInfo{meta: st, stats: stats, lastHeartbeat: time.Now()})
	return &pdpb.PutStoreResponse{Header: g.header()}, nil
}

// GetStore answers a missing store with an OK header and no store.
func (g *grpcService) GetStore(ctx context.Context, req *pdpb.GetStoreRequest) (*pdpb.GetStoreResponse, error) {
	l := g.s.leader()
	if l == nil {
		return &pdpb.GetStoreResponse{Header: g.notLeader()}, nil
	}
	s := l.cluster.getStore(req.StoreId)
	if s == nil {
		return &pdpb.GetStoreResponse{Header: g.header()}, nil
	}
	return &pdpb.GetStoreResponse{Header: g.header(), Store: s.meta, Stats: s.stats}, nil
}

func (g *grpcService) GetAllStores(ctx context.Context, req *pdpb.GetAllStoresRequest) (*pdpb.GetAllStoresResponse, error) {
	l := g.s.leader()
	if l == nil {
		return &pdpb.GetAllStoresResponse{Header: g.notLeader()}, nil
	}
	resp := &pdpb.GetAllStoresResponse{Header: g.header()}
	for _, s := range l.cluster.allStores() {
		if req.ExcludeTombstoneStores && s.meta.State == metapb.StoreState_Tombstone {
			continue
		}
		resp.Stores = append(resp.Stores, s.meta)
	}
	return resp, nil
}

func (g *grpcService) StoreHeartbeat(ctx context.Context, req *pdpb.StoreHeartbeatRequest) (*pdpb.StoreHeartbeatResponse, error) {
	l := g.s.leader()
	if l == nil {
		return &pdpb.StoreHeartbeatResponse{Header: g.notLeader()}, nil
	}
	stats := req.GetStats()
	if s := l.cluster.getStore(stats.GetStoreId()); s != nil && s.meta.State == metapb.StoreState_Tombstone {
		return &pdpb.StoreHeartbeatResponse{Header: g.errHeader(pdpb.ErrorType_STORE_TOMBSTONE, fmt.Sprintf("store %d is a tombstone", s.meta.Id))}, nil
	}
	if stats == nil || !l.cluster.storeHeartbeat(stats, time.Now()) {
		return &pdpb.StoreHeartbeatResponse{Header: g.errHeader(pdpb.ErrorType_UNKNOWN, fmt.Sprintf("store %d not found", stats.GetStoreId()))}, nil
	}
	return &pdpb.StoreHeartbeatResponse{Header: g.header()}, nil
}

func (g *grpcService) RegionHeartbeat(stream pdpb.PD_RegionHeartbeatServer) error {
	reqs, errc := streamRecv(stream, stream.Recv)
	for {
		select {
		case <-g.s.closing:
			return status.Error(codes.Unavailable, errClosing.Error())
		case err := <-errc:
			return streamEnd(err)
		case req := <-reqs:
			resp := g.regionHeartbeat(stream.Context(), req)
			if resp == nil {
				continue
			}
			if err := stream.Send(resp); err != nil {
				return err
			}
		}
	}
}

// regionHeartbeat applies one report and returns the scheduling step for
// the region, if any (nil: nothing to send).
func (g *grpcService) regionHeartbeat(ctx context.Context, req *pdpb.RegionHeartbeatRequest) *pdpb.RegionHeartbeatResponse {
	l := g.s.leader()
	if l == nil {
		return &pdpb.RegionHeartbeatResponse{Header: g.notLeader(), RegionId: req.GetRegion().GetId()}
	}
	if req.GetRegion().GetId() == 0 || req.GetLeader() == nil {
		return nil
	}
	regionHeartbeats.Inc()
	ri := &regionInfo{
		meta:       req.Region,
		leader:     req.Leader,
		pending:    req.PendingPeers,
		down:       req.DownPeers,
		approxSize: req.ApproximateSize,
		approxKeys: req.ApproximateKeys,
		term:       req.Term,
	}
	if err := l.putAndPersistRegion(ctx, ri); err != nil {
		if errors.Is(err, errNotLeader) {
			return &pdpb.RegionHeartbeatResponse{Header: g.notLeader(), RegionId: req.Region.Id}
		}
		return nil // stale report: ignore it
	}
	step, events, err := l.coord.OnHeartbeat(time.Now(), schedule.Region{
		Meta: req.Region, Leader: req.Leader, PendingPeers: req.PendingPeers, DownPeers: req.DownPeers,
	}, l.cluster.scheduleStores(), func() (uint64, error) { return l.ids.alloc(ctx, 1) })
	for _, ev := range events {
		operatorEvents.WithLabelValues(ev.Op.Kind, ev.What).Inc()
		g.s.log.Info("operator "+ev.What, "op", ev.Op.String())
	}
	if err != nil {
		g.s.log.Warn("scheduling failed", "region", req.Region.Id, "err", err)
		return nil
	}
	if step == nil {
		return nil
	}
	resp := step.Response(req.Region, req.Leader)
	resp.Header = g.header()
	return resp
}

// putAndPersistRegion applies a region report and, if the persisted part
// changed, saves it (and deletes the regions it evicted) in etcd. Apply
// and save happen under regionMu, so etcd sees the updates in order.
func (l *leadership) putAndPersistRegion(ctx context.Context, ri *regionInfo) error {
	l.regionMu.Lock()
	defer l.regionMu.Unlock()
	changed, removed, err := l.cluster.putRegion(ri)
	if err != nil {
		return err
	}
	for _, r := range removed {
		l.coord.Forget(r.meta.Id)
	}
	if !changed {
		return nil
	}
	ops := []clientv3.Op{clientv3.OpPut(regionKey(ri.meta.Id), mustMarshal(ri.meta))}
	for _, r := range removed {
		ops = append(ops, clientv3.OpDelete(regionKey(r.meta.Id)))
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	if _, err := l.txn(ctx, nil, ops...); err != nil {
		if errors.Is(err, errNotLeader) {
			return err
		}
		// Memory is ahead of etcd; the next change of this region saves it
		// again, and heartbeats tell a new leader what etcd missed.
		l.s.log.Warn("could not persist region", "region", ri.meta.Id, "err", err)
	}
	return nil
}

func (g *grpcService) regionResponse(l *leadership, r *regionInfo) *pdpb.GetRegionResponse {
	if r == nil {
		return &pdpb.GetRegionResponse{Header: g.errHeader(pdpb.ErrorType_REGION_NOT_FOUND, "region not found")}
	}
	return &pdpb.GetRegionResponse{Header: g.header(), Region: r.meta, Leader: r.leader}
}

func (g *grpcService) GetRegion(ctx context.Context, req *pdpb.GetRegionRequest) (*pdpb.GetRegionResponse, error) {
	l := g.s.leader()
	if l == nil {
		return &pdpb.GetRegionResponse{Header: g.notLeader()}, nil
	}
	return g.regionResponse(l, l.cluster.getRegion(req.RegionKey)), nil
}

func (g *grpcService) GetPrevRegion(ctx context.Context, req *pdpb.GetRegionRequest) (*pdpb.GetRegionResponse, error) {
	l := g.s.leader()
	if l == nil {
		return &pdpb.GetRegionResponse{Header: g.notLeader()}, nil
	}
	return g.regionResponse(l, l.cluster.getPrevRegion(req.RegionKey)), nil
}

func (g *grpcService) GetRegionByID(ctx context.Context, req *pdpb.GetRegionByIDRequest) (*pdpb.GetRegionResponse, error) {
	l := g.s.leader()
	if l == nil {
		return &pdpb.GetRegionResponse{Header: g.notLeader()}, nil
	}
	return g.regionResponse(l, l.cluster.getRegionByID(req.RegionId)), nil
}

func (g *grpcService) ScanRegions(ctx context.Context, req *pdpb.ScanRegionsRequest) (*pdpb.ScanRegionsResponse, error) {
	l := g.s.leader()
	if l == nil {
		return &pdpb.ScanRegionsResponse{Header: g.notLeader()}, nil
	}
	limit := int(req.Limit)
	if limit <= 0 || limit > maxScanRegions {
		limit = maxScanRegions
	}
	resp := &pdpb.ScanRegionsResponse{Header: g.header()}
	for _, r := range l.cluster.scanRegions(req.StartKey, req.EndKey, limit) {
		resp.Regions = append(resp.Regions, &pdpb.RegionWithLeader{Region: r.meta, Leader: r.leader})
	}
	return resp, nil
}

func (g *grpcService) AskBatchSplit(ctx context.Context, req *pdpb.AskBatchSplitRequest) (*pdpb.AskBatchSplitResponse, error) {
	l := g.s.leader()
	if l == nil {
		return &pdpb.AskBatchSplitResponse{Header: g.notLeader()}, nil
	}
	peers := uint64(len(req.GetRegion().GetPeers()))
	if req.GetRegion().GetId() == 0 || peers == 0 || req.SplitCount == 0 || req.SplitCount > 1000 {
		return &pdpb.AskBatchSplitResponse{Header: g.errHeader(pdpb.ErrorType_UNKNOWN, "ask split needs a region with peers and 1..1000 splits")}, nil
	}
	n := uint64(req.SplitCount) * (1 + peers)
	first, err := l.ids.alloc(ctx, n)
	if err != nil {
		return &pdpb.AskBatchSplitResponse{Header: g.errorHeader(err)}, nil
	}
	resp := &pdpb.AskBatchSplitResponse{Header: g.header()}
	next := first
	for range req.SplitCount {
		sid := &pdpb.SplitID{NewRegionId: next}
		next++
		for range peers {
			sid.NewPeerIds = append(sid.NewPeerIds, next)
			next++
		}
		resp.Ids = append(resp.Ids, sid)
	}
	return resp, nil
}

// ReportBatchSplit records the regions a split produced. Their leaders are
// not in the report: until their first heartbeat, PD assumes each is led
// from the store that led the region it came from (a split happens there).
func (g *grpcService) ReportBatchSplit(ctx context.Context, req *pdpb.ReportBatchSplitRequest) (*pdpb.ReportBatchSplitResponse, error) {
	l := g.s.leader()
	if l == nil {
		return &pdpb.ReportBatchSplitResponse{Header: g.notLeader()}, nil
	}
	var leaderStore uint64
	for _, r := range req.Regions {
		if old := l.cluster.getRegion(r.GetStartKey()); old != nil && old.leader != nil {
			leaderStore = old.leader.StoreId
			break
		}
	}
	for _, r := range req.Regions {
		if r.GetId() == 0 {
			continue
		}
		ri := &regionInfo{meta: r}
		if old := l.cluster.getRegionByID(r.Id); old != nil {
			ri.leader, ri.term = old.leader, old.term
		}
		if ri.leader == nil {
			for _, p := range r.Peers {
				if p.StoreId == leaderStore {
					ri.leader = p
				}
			}
		}
		if err := l.putAndPersistRegion(ctx, ri); errors.Is(err, errNotLeader) {
			return &pdpb.ReportBatchSplitResponse{Header: g.notLeader()}, nil
		}
	}
	return &pdpb.ReportBatchSplitResponse{Header: g.header()}, nil
}

func (g *grpcService) GetGCSafePoint(ctx context.Context, _ *pdpb.GetGCSafePointRequest) (*pdpb.GetGCSafePointResponse, error) {
	l := g.s.leader()
	if l == nil {
		return &pdpb.GetGCSafePointResponse{Header: g.notLeader()}, nil
	}
	l.metaMu.Lock()
	defer l.metaMu.Unlock()
	return &pdpb.GetGCSafePointResponse{Header: g.header(), SafePoint: l.gcSafePoint}, nil
}

// UpdateGCSafePoint raises the safe point, but not past an unexpired
// service safe point (gc.go); a lower value leaves it as is. The answer is
// the safe point in force afterwards.
func (g *grpcService) UpdateGCSafePoint(ctx context.Context, req *pdpb.UpdateGCSafePointRequest) (*pdpb.UpdateGCSafePointResponse, error) {
	l := g.s.leader()
	if l == nil {
		return &pdpb.UpdateGCSafePointResponse{Header: g.notLeader()}, nil
	}
	l.metaMu.Lock()
	defer l.metaMu.Unlock()
	if sp := min(req.SafePoint, l.gcSafePointCeiling()); sp > l.gcSafePoint {
		ctx, cancel := context.WithTimeout(ctx, requestTimeout)
		defer cancel()
		if _, err := l.txn(ctx, nil, clientv3.OpPut(gcSafePointKey, encodeUint64(sp))); err != nil {
			return &pdpb.UpdateGCSafePointResponse{Header: g.errorHeader(err)}, nil
		}
		l.gcSafePoint = sp
	}
	return &pdpb.UpdateGCSafePointResponse{Header: g.header(), NewSafePoint: l.gcSafePoint}, nil
}

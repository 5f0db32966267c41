package server

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/shoaldb/shoal/pd/server/schedule"
)

// leadership is one term of this member as PD leader. Everything a leader
// owns (allocators, cluster view, operators) lives here and dies with it,
// so a member that leads again starts from etcd, never from stale memory.
type leadership struct {
	s       *Server
	rev     int64 // create revision of the leader key: the write guard
	lease   clientv3.LeaseID
	ttl     time.Duration
	ctx     context.Context // cancelled when the term ends
	cancel  context.CancelFunc
	expires atomic.Int64 // unix nanos: serve only before this

	tso     *tsoAllocator
	ids     *idAllocator
	cluster *cluster
	coord   *schedule.Coordinator

	// bootstrapped, gcSafePoint and services change under metaMu
	// (Bootstrap and the safe points are read-modify-write against etcd).
	metaMu       sync.Mutex
	bootstrapped atomic.Bool
	gcSafePoint  uint64
	services     map[string]serviceSafePoint // service id -> claim (gc.go)
	// regionMu orders region persistence: apply and save happen under it,
	// so etcd sees region updates in the order memory did.
	regionMu sync.Mutex
}

// valid: the term has not ended and the lease has not run out by our clock.
func (l *leadership) valid() bool {
	return l.ctx.Err() == nil && time.Now().UnixNano() < l.expires.Load()
}

// guard is the comparison every leader write carries.
func (l *leadership) guard() clientv3.Cmp {
	return clientv3.Compare(clientv3.CreateRevision(leaderKey), "=", l.rev)
}

// txn commits ops if this member still holds the leader key. A failed
// comparison ends the term.
func (l *leadership) txn(ctx context.Context, extra []clientv3.Cmp, ops ...clientv3.Op) (*clientv3.TxnResponse, error) {
	if !l.valid() {
		return nil, errNotLeader
	}
	cmps := append([]clientv3.Cmp{l.guard()}, extra...)
	resp, err := l.s.cli.Txn(ctx).If(cmps...).Then(ops...).Else(clientv3.OpGet(leaderKey)).Commit()
	if err != nil {
		return nil, err
	}
	if !resp.Succeeded {
		// Either we lost the key or an extra comparison failed: tell which.
		kvs := resp.Responses[0].GetResponseRange().Kvs
		if len(kvs) == 0 || kvs[0].CreateRevision != l.rev {
			l.s.log.Warn("lost pd leadership (leader key changed)")
			l.cancel()
			return nil, errNotLeader
		}
	}
	return resp, nil
}

// electionLoop alternates between following the current leader and
// campaigning when there is none, until Close.
func (s *Server) electionLoop() {
	for s.ctx.Err() == nil {
		ctx, cancel := context.WithTimeout(s.ctx, 3*time.Second)
		resp, err := s.cli.Get(ctx, leaderKey)
		cancel()
		if err != nil {
			s.sleep(200 * time.Millisecond)
			continue
		}
		if len(resp.Kvs) > 0 {
			kv := resp.Kvs[0]
			m, err := decodeMember(kv.Value)
			if err != nil {
				s.log.Error("undecodable pd leader key", "err", err)
				s.sleep(time.Second)
				continue
			}
			if m.MemberId == s.self.MemberId {
				// Our previous life's key (we are not leading now): remove it
				// rather than wait for its lease to run out.
				ctx, cancel := context.WithTimeout(s.ctx, 3*time.Second)
				_, _ = s.cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(leaderKey), "=", kv.CreateRevision)).
					Then(clientv3.OpDelete(leaderKey)).Commit()
				cancel()
				continue
			}
			s.knownLeader.Store(m)
			s.watchLeader(resp.Header.Revision)
			continue
		}
		s.knownLeader.Store(nil)
		s.campaign()
	}
}

// watchLeader returns when the leader key is deleted (or the watch breaks,
// or the server closes), keeping knownLeader current meanwhile.
func (s *Server) watchLeader(rev int64) {
	ctx, cancel := context.WithCancel(s.ctx)
	defer cancel()
	for wr := range s.cli.Watch(ctx, leaderKey, clientv3.WithRev(rev+1)) {
		if wr.Err() != nil {
			return
		}
		for _, ev := range wr.Events {
			if ev.Type == clientv3.EventTypeDelete {
				s.knownLeader.Store(nil)
				return
			}
			if m, err := decodeMember(ev.Kv.Value); err == nil {
				s.knownLeader.Store(m)
			}
		}
	}
}

func (s *Server) sleep(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-s.ctx.Done():
	}
}

// campaign tries to create the leader key; on success it serves as leader
// until the term ends, then steps down.
func (s *Server) campaign() {
	ttlSec := int64((s.cfg.LeaderLease + time.Second - 1) / time.Second)
	ctx, cancel := context.WithTimeout(s.ctx, 3*time.Second)
	defer cancel()
	start := time.Now()
	lease, err := s.cli.Grant(ctx, ttlSec)
	if err != nil {
		s.sleep(200 * time.Millisecond)
		return
	}
	resp, err := s.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(leaderKey), "=", 0)).
		Then(clientv3.OpPut(leaderKey, mustMarshal(s.self), clientv3.WithLease(lease.ID))).
		Commit()
	if err != nil || !resp.Succeeded {
		s.revoke(lease.ID)
		return
	}
	l := &leadership{s: s, rev: resp.Header.Revision, lease: lease.ID, ttl: time.Duration(lease.TTL) * time.Second}
	l.ctx, l.cancel = context.WithCancel(s.ctx)
	l.expires.Store(start.Add(l.ttl).UnixNano())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); l.keepAlive() }()

	if err := l.takeOver(); err != nil {
		s.log.Warn("pd leader could not take over", "err", err)
	} else {
		s.lead.Store(l)
		isLeaderGauge.WithLabelValues(s.cfg.Name).Set(1)
		s.log.Info("became pd leader", "regions", l.cluster.regionCount(), "tso-limit", l.tso.limit)
		l.serve()
		s.lead.Store(nil)
		isLeaderGauge.WithLabelValues(s.cfg.Name).Set(0)
		s.log.Info("pd leadership ended")
	}
	l.cancel()
	wg.Wait()
	if l.tso != nil {
		l.tso.close()
	}
	s.revoke(lease.ID)
}

// revoke gives the lease (and the leader key on it) back at once, so
// another member can lead without waiting for the TTL.
func (s *Server) revoke(id clientv3.LeaseID) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, _ = s.cli.Revoke(ctx, id)
}

// keepAlive renews the lease every third of its TTL until the term ends or
// a renewal finds the lease gone. The local deadline is counted from before
// each renewal was sent, so it runs out no later than etcd's.
func (l *leadership) keepAlive() {
	defer l.cancel()
	tick := time.NewTicker(l.ttl / 3)
	defer tick.Stop()
	for {
		select {
		case <-l.ctx.Done():
			return
		case <-tick.C:
		}
		sent := time.Now()
		if sent.UnixNano() >= l.expires.Load() {
			l.s.log.Warn("pd leader lease ran out")
			return
		}
		ctx, cancel := context.WithTimeout(l.ctx, l.ttl/3)
		resp, err := l.s.cli.KeepAliveOnce(ctx, l.lease)
		cancel()
		if err != nil {
			if l.ctx.Err() == nil {
				l.s.log.Warn("pd leader lease renewal failed", "err", err)
			}
			if rpctypes.ErrorDesc(err) == rpctypes.ErrLeaseNotFound.Error() {
				return
			}
			continue // try again until the deadline
		}
		if resp.TTL <= 0 {
			return
		}
		l.expires.Store(sent.Add(time.Duration(resp.TTL) * time.Second).UnixNano())
	}
}

// takeOver loads PD's state from etcd and makes the first TSO window
// durable.
func (l *leadership) takeOver() error {
	ctx, cancel := context.WithTimeout(l.ctx, 5*time.Second)
	defer cancel()
	st, err := loadState(ctx, l.s.cli)
	if err != nil {
		return err
	}
	l.tso = newTSOAllocator(st.tsoLimit, l.s.cfg.TSOWindow, time.Now, func(ctx context.Context, limit int64) error {
		_, err := l.txn(ctx, nil, clientv3.OpPut(tsoLimitKey, encodeUint64(uint64(limit))))
		return err
	})
	l.ids = newIDAllocator(st.idLimit, l.s.cfg.IDBatch, func(ctx context.Context, limit uint64) error {
		_, err := l.txn(ctx, nil, clientv3.OpPut(idLimitKey, encodeUint64(limit)))
		return err
	})
	l.bootstrapped.Store(st.bootstrapped)
	l.gcSafePoint = st.gcSafePoint
	l.services = st.services
	l.cluster = newCluster()
	// Stores have not heartbeated this term yet: count from now, so a new
	// leader does not take every store for down.
	now := time.Now()
	for _, m := range st.stores {
		l.cluster.putStore(&storeInfo{meta: m, lastHeartbeat: now})
	}
	for _, r := range st.regions {
		if _, _, err := l.cluster.putRegion(&regionInfo{meta: r}); err != nil {
			l.s.log.Warn("skipping overlapping persisted region", "region", r.Id, "err", err)
		}
	}
	l.coord = schedule.NewCoordinator(l.s.cfg.Schedule)
	if err := l.tso.prepare(ctx); err != nil {
		return fmt.Errorf("pd: first tso window: %w", err)
	}
	return nil
}

// serve blocks while the term lasts.
func (l *leadership) serve() {
	metricsTick := time.NewTicker(5 * time.Second)
	defer metricsTick.Stop()
	for {
		regionsGauge.Set(float64(l.cluster.regionCount()))
		storesGauge.Set(float64(len(l.cluster.allStores())))
		select {
		case <-l.ctx.Done():
			return
		case <-metricsTick.C:
		}
	}
}

package storenode

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"google.golang.org/grpc/credentials"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"

	"github.com/shoaldb/shoal/pd/pdclient"
	"github.com/shoaldb/shoal/proto/deadlockpb"
	"github.com/shoaldb/shoal/proto/metapb"
	"github.com/shoaldb/shoal/proto/pdpb"
	"github.com/shoaldb/shoal/store/grpcserver"
	"github.com/shoaldb/shoal/store/mvcc"
	"github.com/shoaldb/shoal/store/raftstore"
	"github.com/shoaldb/shoal/store/service"
)

// Config configures a Node.
type Config struct {
	// PD lists PD members' client addresses (host:port).
	PD []string
	// Addr is the store's gRPC address as other stores and SQL nodes
	// reach it (registered in PD). Start serves on the listener it is
	// given, which must be bound to it or be where a proxy at Addr
	// forwards to.
	Addr string
	// StatusAddr is the status HTTP address registered in PD (may be "").
	StatusAddr string
	// DataDir holds the identity file and the store's Pebble (db/).
	DataDir string
	// Version is registered in PD.
	Version string

	// Raft configures the raftstore (StoreID and ClusterID are filled in).
	Raft raftstore.Config
	// StoreHeartbeatInterval: how often the store reports its figures to
	// PD (10s).
	StoreHeartbeatInterval time.Duration
	// GRPCConcurrency: worker goroutines serving gRPC streams (0: one
	// goroutine per stream, gRPC's default).
	GRPCConcurrency int
	// GRPCMaxMessageSize bounds a gRPC message either way
	// (grpcserver.MaxMessageSize, 64 MiB, if 0).
	GRPCMaxMessageSize int
	// RaftQueueSize bounds the raft messages queued per target store (4096).
	RaftQueueSize int
	// PDOptions tune the PD client (its logger defaults to Logger).
	PDOptions pdclient.Options
	// ServerTLS and ClientTLS, when set, make the store's gRPC service
	// and its calls to PD and other stores mutual TLS
	// (security.ClusterTLS).
	ServerTLS *tls.Config
	ClientTLS *tls.Config
	Logger    *slog.Logger
}

// Node is a running storage node.
type Node struct {
	cfg   Config
	log   *slog.Logger
	pd    *pdclient.Client
	id    ident
	trans *Transport
	rs    *raftstore.Store
	guard *maxTSGuard
	mvcc  *mvcc.Store
	svc   *service.Service
	grpc  *grpc.Server

	serveErr chan error
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup

	registered atomic.Bool
	lastBeatOK atomic.Int64 // unix nanos of the last accepted store heartbeat
	closeOnce  sync.Once
	closeErr   error
}

// Start opens the store in cfg.DataDir (creating its identity with PD on
// first start), serves gRPC on ln, registers the store with PD,
// bootstraps the cluster if nobody has, and starts heartbeats. ctx bounds
// the start-up's PD calls.
func Start(ctx context.Context, cfg Config, ln net.Listener) (n *Node, err error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.StoreHeartbeatInterval <= 0 {
		cfg.StoreHeartbeatInterval = 10 * time.Second
	}
	if cfg.GRPCMaxMessageSize <= 0 {
		cfg.GRPCMaxMessageSize = grpcserver.MaxMessageSize
	}
	if cfg.Addr == "" {
		cfg.Addr = ln.Addr().String()
	}
	if cfg.PDOptions.Logger == nil {
		cfg.PDOptions.Logger = cfg.Logger
	}
	if cfg.PDOptions.TLS == nil {
		cfg.PDOptions.TLS = cfg.ClientTLS
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	n = &Node{cfg: cfg, log: cfg.Logger, serveErr: make(chan error, 1)}
	n.ctx, n.cancel = context.WithCancel(context.Background())
	defer func() {
		if err != nil {
			n.Close()
		}
	}()

	n.pd, err = pdclient.New(ctx, cfg.PD, cfg.PDOptions)
	if err != nil {
		return n, fmt.Errorf("cannot reach PD at %v: %w", cfg.PD, err)
	}
	if n.id, err = n.loadOrCreateIdent(ctx); err != nil {
		return n, err
	}
	n.log = n.log.With("store", n.id.StoreID)

	n.trans = NewTransport(n.id.StoreID, n.pd, TransportOptions{QueueSize: cfg.RaftQueueSize,
		MaxMessageSize: cfg.GRPCMaxMessageSize, TLS: cfg.ClientTLS, Logger: n.log})
	rcfg := cfg.Raft
	rcfg.StoreID, rcfg.ClusterID = n.id.StoreID, n.id.ClusterID
	n.rs, err = raftstore.Open(filepath.Join(cfg.DataDir, "db"), rcfg, n.trans, n.pd)
	if err != nil {
		return n, fmt.Errorf("cannot open the raft store: %w", err)
	}
	n.trans.SetHandler(n.rs)
	n.pd.SetRegionHeartbeatHandler(n.rs.HandleRegionHeartbeatResponse)

	n.guard = newMaxTSGuard(n.rs.LeaderGeneration, n.pd.GetTS, n.log)
	// Lock waits are checked for deadlocks across stores (deadlock.go).
	deadlocks := newClusterDetector(n.ctx, n.id.StoreID, n.rs, n.pd, n.log)
	deadlocks.dialTLS = cfg.ClientTLS
	n.mvcc = mvcc.New(outcomeEngine{n.rs.Engine()}, mvcc.Options{NoLockCount: true, MaxTSSynced: n.guard.allowed,
		DeadlockDetector: deadlocks})
	n.guard.start(n.mvcc)
	n.svc = service.New(n.mvcc)

	gs := grpcserver.New(n.svc, &regionChecker{store: n.rs, storeID: n.id.StoreID},
		grpcserver.Options{
			Raft: &raftService{store: n.rs, maxSnapshot: 4 << 30, stop: n.ctx.Done()},
			GC:   grpcserver.MVCCGC{Store: n.mvcc},
			// Batched answers are cut to what this server may send.
			MaxMessageSize: cfg.GRPCMaxMessageSize,
		})
	opts := append(grpcserver.ServerOptions(),
		grpc.MaxRecvMsgSize(cfg.GRPCMaxMessageSize), grpc.MaxSendMsgSize(cfg.GRPCMaxMessageSize),
		// Clients (stores, SQL nodes) ping every 10s.
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 5 * time.Second, PermitWithoutStream: true}),
	)
	if cfg.GRPCConcurrency > 0 {
		opts = append(opts, grpc.NumStreamWorkers(uint32(cfg.GRPCConcurrency)))
	}
	if cfg.ServerTLS != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(cfg.ServerTLS)))
	}
	n.grpc = grpc.NewServer(opts...)
	gs.Register(n.grpc)
	deadlockpb.RegisterDeadlockServer(n.grpc, deadlocks.service)
	go func() { n.serveErr <- n.grpc.Serve(ln) }()

	// Bootstrap first (it registers the bootstrapping store; PD refuses
	// PutStore before), then (re-)register with the current address.
	meta := n.storeMeta()
	if err := n.bootstrap(ctx, meta); err != nil {
		return n, err
	}
	if err := n.pd.PutStore(ctx, meta); err != nil {
		return n, fmt.Errorf("cannot register store %d with PD: %w", n.id.StoreID, err)
	}
	n.registered.Store(true)
	n.wg.Add(1)
	go n.heartbeatLoop()
	n.log.Info("store started", "addr", cfg.Addr, "cluster", n.id.ClusterID, "data-dir", cfg.DataDir)
	return n, nil
}

func (n *Node) storeMeta() *metapb.Store {
	return &metapb.Store{Id: n.id.StoreID, Address: n.cfg.Addr, StatusAddress: n.cfg.StatusAddr,
		Version: n.cfg.Version, State: metapb.StoreState_Up}
}

// loadOrCreateIdent reads the data dir's identity, or allocates a store
// id from PD and persists it (first start).
func (n *Node) loadOrCreateIdent(ctx context.Context) (ident, error) {
	cluster := n.pd.ClusterID()
	id, ok, err := loadIdent(n.cfg.DataDir)
	if err != nil {
		return id, err
	}
	if ok {
		if id.ClusterID != cluster {
			return id, fmt.Errorf("data dir %s belongs to cluster %d, PD serves cluster %d", n.cfg.DataDir, id.ClusterID, cluster)
		}
		return id, nil
	}
	if _, err := os.Stat(filepath.Join(n.cfg.DataDir, "db")); err == nil {
		return id, fmt.Errorf("data dir %s holds a store database but no %s", n.cfg.DataDir, identFile)
	}
	sid, err := n.pd.AllocID(ctx)
	if err != nil {
		return id, fmt.Errorf("cannot allocate a store id: %w", err)
	}
	id = ident{ClusterID: cluster, StoreID: sid}
	if err := saveIdent(n.cfg.DataDir, id); err != nil {
		return id, fmt.Errorf("cannot save the store identity: %w", err)
	}
	return id, nil
}

// bootstrap bootstraps the cluster with a first region (everything, one
// peer here) if PD says nobody has, and creates that region locally if
// PD's first region is it and this store lacks it (this store won the
// race, possibly in a previous run that crashed before creating it).
func (n *Node) bootstrap(ctx context.Context, meta *metapb.Store) error {
	done, err := n.pd.IsBootstrapped(ctx)
	if err != nil {
		return fmt.Errorf("cannot ask PD whether the cluster is bootstrapped: %w", err)
	}
	if !done {
		regionID, err := n.pd.AllocID(ctx)
		if err != nil {
			return err
		}
		peerID, err := n.pd.AllocID(ctx)
		if err != nil {
			return err
		}
		region := &metapb.Region{Id: regionID, RegionEpoch: &metapb.RegionEpoch{ConfVer: 1, Version: 1},
			Peers: []*metapb.Peer{{Id: peerID, StoreId: n.id.StoreID}}}
		err = n.pd.Bootstrap(ctx, meta, region)
		switch {
		case err == nil:
			n.log.Info("bootstrapped the cluster", "region", regionID)
		case errors.Is(err, pdclient.ErrAlreadyBootstrapped):
		default:
			return fmt.Errorf("cannot bootstrap the cluster: %w", err)
		}
	}
	first, err := n.pd.GetRegion(ctx, nil)
	if err != nil {
		return fmt.Errorf("cannot read the first region from PD: %w", err)
	}
	r := first.Meta
	ep := r.GetRegionEpoch()
	if ep.GetConfVer() != 1 || ep.GetVersion() != 1 || len(r.GetPeers()) != 1 || r.GetPeers()[0].GetStoreId() != n.id.StoreID {
		return nil
	}
	if _, ok := n.rs.Region(r.GetId()); ok {
		return nil
	}
	if err := n.rs.BootstrapRegion(r); err != nil {
		n.log.Warn("cannot create the first region", "region", r.GetId(), "err", err)
		return nil
	}
	_ = n.rs.Campaign(r.GetId())
	return nil
}

// heartbeatLoop sends store heartbeats (region heartbeats are the
// raftstore's) and follows PD's GC safe point (gc.go).
func (n *Node) heartbeatLoop() {
	defer n.wg.Done()
	t := time.NewTicker(n.cfg.StoreHeartbeatInterval)
	defer t.Stop()
	for {
		n.storeHeartbeat()
		n.followGCSafePoint()
		select {
		case <-n.ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (n *Node) storeHeartbeat() {
	st := n.Stats()
	ctx, cancel := context.WithTimeout(n.ctx, 5*time.Second)
	defer cancel()
	if err := n.pd.StoreHeartbeat(ctx, st); err != nil {
		if n.ctx.Err() == nil {
			n.log.Warn("store heartbeat failed", "err", err)
		}
		return
	}
	n.lastBeatOK.Store(time.Now().UnixNano())
}

// Stats returns the store's figures as sent in heartbeats.
func (n *Node) Stats() *pdpb.StoreStats {
	st := n.rs.Stats()
	var fs syscall.Statfs_t
	if err := syscall.Statfs(n.cfg.DataDir, &fs); err == nil {
		st.Capacity = fs.Blocks * uint64(fs.Bsize)
		st.Available = fs.Bavail * uint64(fs.Bsize)
	}
	return st
}

// StoreID returns the store's id.
func (n *Node) StoreID() uint64 { return n.id.StoreID }

// ClusterID returns the cluster's id.
func (n *Node) ClusterID() uint64 { return n.id.ClusterID }

// Raft returns the node's raftstore (tests, diagnostics).
func (n *Node) Raft() *raftstore.Store { return n.rs }

// Healthy: registered with PD and the last store heartbeat was accepted
// within three intervals.
func (n *Node) Healthy() bool {
	last := n.lastBeatOK.Load()
	return n.registered.Load() && last != 0 && time.Since(time.Unix(0, last)) < 3*n.cfg.StoreHeartbeatInterval+5*time.Second
}

// Err reports a fatal gRPC serving error (nil after Close).
func (n *Node) Err() <-chan error { return n.serveErr }

// Close stops serving (kv calls in flight finish, up to a few seconds),
// then the heartbeats, MVCC, the raftstore (everything acknowledged is
// durable), the transport and the PD client.
func (n *Node) Close() error {
	n.closeOnce.Do(func() {
		n.cancel()
		if n.grpc != nil {
			done := make(chan struct{})
			go func() { n.grpc.GracefulStop(); close(done) }()
			select {
			case <-done:
			case <-time.After(3 * time.Second):
				n.grpc.Stop() // raft streams of other stores never end by themselves
				<-done
			}
		}
		n.wg.Wait()
		if n.svc != nil {
			n.svc.Close()
		}
		if n.guard != nil {
			n.guard.stop()
		}
		if n.rs != nil {
			n.closeErr = n.rs.Close()
		}
		if n.trans != nil {
			n.trans.Close()
		}
		if n.pd != nil {
			n.pd.Close()
		}
	})
	return n.closeErr
}

// Package server is one member of the placement driver (PD) cluster: an
// embedded etcd member plus the pdpb.PD gRPC service, served on the same
// client port (the PD service is registered on etcd's gRPC server).
//
// The members elect a leader through etcd: a leader key bound to a lease.
// Only the leader serves; the others answer NOT_LEADER naming it, except
// GetMembers, which every member answers. The leader loads its state from
// etcd when it takes over and keeps it there:
//
//   - TSO: the persisted limit is a physical time no timestamp handed out
//     has reached. A new leader starts at max(limit, now) and persists
//     limit+window before serving, so timestamps never go backwards across
//     leaders. Every save is a transaction that compares the leader key's
//     create revision, so a deposed leader can never extend its window.
//   - IDs: reserved in etcd in batches before they are handed out.
//   - Stores and regions: stores are persisted on PutStore, region
//     metadata (range, epoch, peers) whenever a heartbeat changes it, so a
//     new leader knows every region before the first heartbeat arrives.
//     Heartbeat times, stats and leaders live in memory only.
//   - GC safe point: persisted, never decreases.
//
// A leader serves only while its lease is valid by its own clock (the
// deadline is counted from before each renewal was sent), so it stops
// serving before etcd can expire the key and let another member lead.
// Scheduling decisions are made by the pure package schedule; this
// package feeds it heartbeats and sends its steps back to stores.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.etcd.io/etcd/server/v3/etcdserver/api/v3client"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/shoaldb/shoal/proto/pdpb"
)

// Server is one running PD member.
type Server struct {
	cfg       Config
	log       *slog.Logger
	clientURL *url.URL // advertised (what clients dial)
	etcd      *embed.Etcd
	clusterID uint64
	self      *pdpb.Member

	etcdLogLevel zap.AtomicLevel

	cli   *clientv3.Client // in-process client of the embedded etcd (set once ready)
	ready chan struct{}    // closed when cli is set and the election loop runs

	// lead is non-nil while this member is the leader.
	lead atomic.Pointer[leadership]
	// knownLeader is the leader as last seen in etcd (nil: none known).
	knownLeader atomic.Pointer[pdpb.Member]

	ctx     context.Context // cancelled by Close
	cancel  context.CancelFunc
	closing chan struct{} // closed by Close: ends the gRPC streams
	wg      sync.WaitGroup
	errc    chan error
	closed  sync.Once
}

// New starts a PD member: the embedded etcd (its listeners are bound before
// New returns, so unusable ports fail here) and, in the background, the
// leader election. The member serves once etcd has a quorum; it does not
// wait for that, because the other members start alongside.
func New(cfg Config) (*Server, error) {
	cfg.fill()
	clientURL, peerURL, err := cfg.validate()
	if err != nil {
		return nil, fmt.Errorf("pd: %w", err)
	}
	advClientURL, advPeerURL, err := cfg.advertised(clientURL, peerURL)
	if err != nil {
		return nil, fmt.Errorf("pd: %w", err)
	}
	etcdDir := filepath.Join(cfg.DataDir, "etcd")
	if err := os.MkdirAll(etcdDir, 0o700); err != nil {
		return nil, fmt.Errorf("pd: data dir: %w", err)
	}
	s := &Server{
		cfg:       cfg,
		log:       cfg.Logger.With("pd", cfg.Name),
		clientURL: advClientURL,
		ready:     make(chan struct{}),
		closing:   make(chan struct{}),
		errc:      make(chan error, 1),
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())

	ec := embed.NewConfig()
	ec.Name = cfg.Name
	ec.Dir = etcdDir
	ec.ListenClientUrls = []url.URL{*clientURL}
	ec.AdvertiseClientUrls = []url.URL{*advClientURL}
	ec.ListenPeerUrls = []url.URL{*peerURL}
	ec.AdvertisePeerUrls = []url.URL{*advPeerURL}
	if cfg.InitialCluster != "" {
		ec.InitialCluster = normalizeInitialCluster(cfg.InitialCluster)
	} else {
		ec.InitialCluster = cfg.Name + "=" + advPeerURL.String()
	}
	ec.InitialClusterToken = "shoal-pd"
	ec.TickMs = uint(cfg.EtcdTick.Milliseconds())
	ec.ElectionMs = uint(cfg.EtcdElection.Milliseconds())
	// PD's state is small: compact old revisions so the db stays small.
	ec.AutoCompactionMode = embed.CompactorModePeriodic
	ec.AutoCompactionRetention = "1h"
	ec.EnableGRPCGateway = false
	lg, lvl := newZapLogger(cfg.EtcdLogLevel)
	s.etcdLogLevel = lvl
	ec.ZapLoggerBuilder = embed.NewZapLoggerBuilder(lg)
	ec.ServiceRegister = func(gs *grpc.Server) { pdpb.RegisterPDServer(gs, &grpcService{s: s}) }
	if err := applyTLS(ec, cfg.Security); err != nil {
		return nil, fmt.Errorf("pd: %w", err)
	}

	e, err := embed.StartEtcd(ec)
	if err != nil {
		return nil, fmt.Errorf("pd: start etcd: %w", err)
	}
	s.etcd = e
	s.clusterID = uint64(e.Server.Cluster().ID())
	s.self = &pdpb.Member{
		Name:       cfg.Name,
		MemberId:   uint64(e.Server.MemberID()),
		ClientUrls: []string{advClientURL.Host},
		PeerUrls:   []string{ec.AdvertisePeerUrls[0].String()},
	}
	isLeaderGauge.WithLabelValues(cfg.Name).Set(0)
	s.wg.Add(2)
	go s.watchEtcd()
	go s.run()
	return s, nil
}

// newZapLogger builds the embedded etcd's logger. Its level is atomic so
// that Close can silence the errors etcd logs about its own listeners
// closing; a few warnings etcd prints on every start of a loopback,
// plain-HTTP member are dropped.
func newZapLogger(level string) (*zap.Logger, zap.AtomicLevel) {
	lvl, err := zapcore.ParseLevel(level)
	if err != nil {
		lvl = zapcore.WarnLevel
	}
	atom := zap.NewAtomicLevelAt(lvl)
	zc := zap.NewProductionConfig()
	zc.Level = atom
	zc.Encoding = "console"
	zc.EncoderConfig.EncodeTime = zapcore.ISO8601TimeEncoder
	zc.Sampling = nil
	zc.OutputPaths = []string{"stderr"}
	zc.ErrorOutputPaths = []string{"stderr"}
	lg, err := zc.Build(zap.WrapCore(func(c zapcore.Core) zapcore.Core { return benignFilter{c} }))
	if err != nil {
		return zap.NewNop(), atom
	}
	return lg, atom
}

// benignMessages are etcd warnings that say nothing about a PD member:
// the shared client port and the unused auth token are by design.
var benignMessages = map[string]bool{
	"Running http and grpc server on single port. This is not recommended for production.": true,
	"simple token is not cryptographically signed":                                         true,
}

type benignFilter struct{ zapcore.Core }

func (f benignFilter) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if benignMessages[e.Message] {
		return ce
	}
	return f.Core.Check(e, ce)
}

func (f benignFilter) With(fields []zapcore.Field) zapcore.Core {
	return benignFilter{f.Core.With(fields)}
}

// watchEtcd reports a fatal etcd error on Err.
func (s *Server) watchEtcd() {
	defer s.wg.Done()
	select {
	case err, ok := <-s.etcd.Err():
		if ok && err != nil {
			select {
			case s.errc <- fmt.Errorf("pd: etcd: %w", err):
			default:
			}
		}
	case <-s.ctx.Done():
	}
}

// run waits for etcd to be ready, then campaigns for leadership until
// Close.
func (s *Server) run() {
	defer s.wg.Done()
	select {
	case <-s.etcd.Server.ReadyNotify():
	case <-s.etcd.Server.StopNotify():
		return
	case <-s.ctx.Done():
		return
	}
	s.cli = v3client.New(s.etcd.Server)
	close(s.ready)
	s.log.Info("pd member ready", "client", s.clientURL.Host, "member-id", s.self.MemberId)
	s.electionLoop()
}

// Err reports a fatal error of the embedded etcd.
func (s *Server) Err() <-chan error { return s.errc }

// Name returns the member's name.
func (s *Server) Name() string { return s.cfg.Name }

// ClientAddr returns the advertised host:port of the PD gRPC service.
func (s *Server) ClientAddr() string { return s.clientURL.Host }

// ClusterID returns the etcd cluster's ID, which PD uses as its own.
func (s *Server) ClusterID() uint64 { return s.clusterID }

// IsLeader reports whether this member serves as the PD leader now.
func (s *Server) IsLeader() bool {
	l := s.lead.Load()
	return l != nil && l.valid()
}

// Leader returns the leader as this member knows it (nil: none known).
func (s *Server) Leader() *pdpb.Member {
	if s.IsLeader() {
		return s.self
	}
	return s.knownLeader.Load()
}

// Ready reports whether the embedded etcd has joined its cluster.
func (s *Server) Ready() bool {
	select {
	case <-s.ready:
		return true
	default:
		return false
	}
}

// Members returns the members of the cluster as etcd knows them.
func (s *Server) Members() []*pdpb.Member {
	var out []*pdpb.Member
	for _, m := range s.etcd.Server.Cluster().Members() {
		pm := &pdpb.Member{Name: m.Name, MemberId: uint64(m.ID), PeerUrls: m.PeerURLs}
		for _, cu := range m.ClientURLs {
			if u, err := ParseURL(cu); err == nil {
				pm.ClientUrls = append(pm.ClientUrls, u.Host)
			}
		}
		out = append(out, pm)
	}
	return out
}

// Close steps down if leading (revoking the lease, so another member takes
// over at once), ends the PD streams and stops etcd.
func (s *Server) Close() {
	s.closed.Do(func() {
		close(s.closing)
		s.cancel()
		s.wg.Wait()
		if s.cli != nil {
			s.cli.Close()
		}
		// etcd logs its listeners closing as errors: not news on shutdown.
		s.etcdLogLevel.SetLevel(zapcore.FatalLevel)
		s.etcd.Close()
		s.log.Info("pd member stopped")
	})
}

// leader returns the current leadership if this member may serve.
func (s *Server) leader() *leadership {
	l := s.lead.Load()
	if l == nil || !l.valid() {
		return nil
	}
	return l
}

func (s *Server) notLeaderMessage() string {
	if m := s.knownLeader.Load(); m != nil && len(m.ClientUrls) > 0 {
		return fmt.Sprintf("pd member %s is not the leader; the leader is %s at %s", s.cfg.Name, m.Name, m.ClientUrls[0])
	}
	return fmt.Sprintf("pd member %s is not the leader; no leader is known", s.cfg.Name)
}

func decodeMember(b []byte) (*pdpb.Member, error) {
	m := &pdpb.Member{}
	if err := proto.Unmarshal(b, m); err != nil {
		return nil, err
	}
	return m, nil
}

var errClosing = errors.New("pd: server closing")

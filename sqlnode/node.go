// Package sqlnode is a SQL node of a cluster (`shoal sql`): it wires the
// PD client, the region-aware kv client (kv/tikvclient), transactional
// storage (kv/txnkv), the SQL layer (session), the cluster's GC worker
// (kv/gcworker) and the MySQL protocol server, and serves MySQL clients
// and the status endpoints. cmd/shoal parses flags into config.SQL and
// runs a Node until a signal; tests open one in-process.
//
// Invariants:
//   - Open refuses an exposed root without a password and binds both
//     ports before it contacts PD, so a taken port fails at once.
//   - The node reaches stores only through kv/tikvclient, i.e. the kvrpc
//     contract (tests/layering checks it), and PD only through
//     pd/pdclient.
//   - Close stops in dependency order: status endpoints, then the MySQL
//     server (listener, then sessions, rolling their transactions back),
//     the SQL layer's background refresh, the GC worker (whose claim at
//     PD protects the refresh's transactions until then), and last the
//     clients.
package sqlnode

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/shoaldb/shoal/config"
	"github.com/shoaldb/shoal/kv/gcworker"
	"github.com/shoaldb/shoal/kv/tikvclient"
	"github.com/shoaldb/shoal/kv/txnkv"
	"github.com/shoaldb/shoal/pd/pdclient"
	"github.com/shoaldb/shoal/security"
	"github.com/shoaldb/shoal/server"
	"github.com/shoaldb/shoal/session"
	"github.com/shoaldb/shoal/status"
)

// Config configures a Node.
type Config struct {
	// SQL is the node's configuration as `shoal sql` takes it; it must
	// have passed config.SQL.Validate.
	SQL config.SQL
	// Version is shoal's version: MySQL clients see
	// "8.0.11-shoal-<Version>", /status shows it with GitHash.
	Version string
	GitHash string
}

// Node is a running SQL node.
type Node struct {
	pd       *pdclient.Client
	kvc      *tikvclient.Client
	storage  *txnkv.Storage
	backend  *session.Backend
	gc       *gcworker.Worker
	srv      *server.Server
	status   *status.Server // nil when the status port is off
	addr     net.Addr
	statusLn net.Listener
	// certDir holds the generated TLS certificates, removed at Close
	// ("" with configured ones).
	certDir string

	serving  sync.WaitGroup
	serveErr chan error
}

// Open starts a SQL node: it binds the MySQL and status ports, connects
// to PD, opens the SQL layer on the cluster (reading the catalog) and
// starts serving. ctx bounds the start-up only; Open fails if PD cannot
// be reached or the catalog cannot be read before it ends.
func Open(ctx context.Context, cfg Config, log *slog.Logger) (*Node, error) {
	start := time.Now()
	sc := cfg.SQL
	if err := config.CheckRootExposure(sc.Host, sc.RootPassword, sc.InsecureAllowEmptyRootPassword); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", sc.Addr())
	if err != nil {
		return nil, fmt.Errorf("cannot listen for MySQL clients on %s: %w", sc.Addr(), err)
	}
	var statusLn net.Listener
	if sc.StatusPort != 0 {
		statusLn, err = net.Listen("tcp", sc.StatusAddr())
		if err != nil {
			ln.Close()
			return nil, fmt.Errorf("cannot listen for status HTTP on %s: %w", sc.StatusAddr(), err)
		}
	}
	n, err := open(ctx, cfg, log)
	if err != nil {
		ln.Close()
		if statusLn != nil {
			statusLn.Close()
		}
		return nil, err
	}
	n.addr = ln.Addr()
	n.serveErr = make(chan error, 1)
	n.serving.Add(1)
	go func() {
		defer n.serving.Done()
		err := n.srv.Serve(ln)
		if errors.Is(err, server.ErrServerClosed) {
			err = nil
		}
		n.serveErr <- err
	}()
	if statusLn != nil {
		info := status.Info{Role: "sql", Version: cfg.Version, GitHash: cfg.GitHash, Addr: sc.Addr(), StartTime: start, EnablePprof: sc.EnablePprof}
		n.statusLn = statusLn
		n.status = status.ServeHandler(statusLn, n.statusHandler(info))
	}
	return n, nil
}

// open connects the clients and the SQL layer; nothing is served yet.
func open(ctx context.Context, cfg Config, log *slog.Logger) (*Node, error) {
	sc := cfg.SQL
	// With a CA too, the [security] files also make the links to PD and
	// the stores mutual TLS; a certificate alone serves MySQL clients only.
	var dialTLS *tls.Config
	var kvDial []grpc.DialOption
	if sc.Security.ClusterTLS() {
		var err error
		if _, dialTLS, err = security.ClusterTLS(sc.Security.Paths()); err != nil {
			return nil, err
		}
		kvDial = append(kvDial, grpc.WithTransportCredentials(credentials.NewTLS(dialTLS)))
	}
	var certDir string
	if sc.Security.SSLCert == "" {
		var err error
		if certDir, err = os.MkdirTemp("", "shoal-sql-tls-"); err != nil {
			return nil, err
		}
	}
	removeCerts := func() {
		if certDir != "" {
			os.RemoveAll(certDir)
		}
	}
	mysqlTLS, ssl, err := mysqlTLS(sc.Security, certDir, log)
	if err != nil {
		removeCerts()
		return nil, err
	}
	pdc, err := pdclient.New(ctx, sc.PDAddrs(), pdclient.Options{Logger: log, TLS: dialTLS})
	if err != nil {
		removeCerts()
		return nil, fmt.Errorf("cannot reach PD at %s: %w", sc.PD, err)
	}
	kvc := tikvclient.New(pdRegions{pdc}, tikvclient.Options{MaxBackoff: sc.MaxBackoff(), ConnsPerStore: sc.KVConnsPerStore,
		DisableBatch: !sc.KVBatchCommands, MaxBatchWaitTime: sc.MaxBatchWaitTime(), DialOptions: kvDial})
	storage := txnkv.New(pdc, kvc, txnkv.Options{})
	gcLife, gcRun := sc.GC()
	backend, err := session.NewBackend(clusterStorage{storage, kvc}, session.Config{
		SSL:                ssl,
		Password:           sc.RootPassword,
		SchemaSyncInterval: sc.SyncInterval(),
		DisablePlanCache:   !sc.PreparedPlanCache.Enabled,
		Logger:             log,
		GC:                 session.GCSettings{LifeTime: gcLife, RunInterval: gcRun},
		BackupDirs:         sc.Security.BackupDirs,
	})
	if err != nil {
		storage.Close()
		kvc.Close()
		pdc.Close()
		removeCerts()
		return nil, fmt.Errorf("cannot start SQL layer: %w", err)
	}
	gcw := gcworker.New(gcworker.Config{
		ServiceID: gcServiceID(sc),
		Settings: func() gcworker.Settings {
			gc := backend.GCSettings()
			return gcworker.Settings{Disabled: gc.Disabled, LifeTime: gc.LifeTime, RunInterval: gc.RunInterval}
		},
		Logger: log,
	}, pdc, kvc, storage)
	gcw.Start()
	srv := server.New(server.Config{
		Addr:          sc.Addr(),
		ServerVersion: "8.0.11-shoal-" + cfg.Version,
		Logger:        log,
		TLS:           mysqlTLS,
	}, backend)
	return &Node{pd: pdc, kvc: kvc, storage: storage, backend: backend, gc: gcw, srv: srv, certDir: certDir}, nil
}

// mysqlTLS returns the MySQL protocol's TLS from the [security] files or,
// without a certificate, from a CA and server certificate generated into
// autoDir (a SQL node keeps no data directory: a fresh temporary one per
// start, as TiDB's auto-tls).
func mysqlTLS(sec config.Security, autoDir string, log *slog.Logger) (*tls.Config, session.SSLConfig, error) {
	cfg, p, generated, err := security.MySQLServerIdentity(sec.Paths(), autoDir)
	if err != nil || cfg == nil {
		return nil, session.SSLConfig{}, err
	}
	if generated {
		log.Info("generated a self-signed CA and server certificate for TLS", "ca", p.CA, "cert", p.Cert)
	}
	return cfg, session.SSLConfig{Enabled: true, CA: p.CA, Cert: p.Cert, Key: p.Key}, nil
}

// gcServiceID names this SQL node's GC claim at PD: its host and MySQL
// address, so a restarted node takes its old claim over.
func gcServiceID(cfg config.SQL) string {
	host, _ := os.Hostname()
	return "sql-" + host + "-" + cfg.Addr()
}

// Addr is the address the node serves MySQL clients on.
func (n *Node) Addr() net.Addr { return n.addr }

// StatusAddr is the address of the status endpoints, nil when they are
// off.
func (n *Node) StatusAddr() net.Addr {
	if n.statusLn == nil {
		return nil
	}
	return n.statusLn.Addr()
}

// Err delivers the MySQL server's end: an error if it stopped on its own,
// nil once Close stopped it.
func (n *Node) Err() <-chan error { return n.serveErr }

// Close stops the node in the package's order (see the package doc).
func (n *Node) Close() error {
	var err error
	if n.status != nil {
		err = n.status.Close()
	}
	err = errors.Join(err, n.srv.Close())
	n.serving.Wait()
	n.backend.Close()
	n.gc.Close()
	n.storage.Close()
	err = errors.Join(err, n.kvc.Close())
	n.pd.Close()
	if n.certDir != "" {
		err = errors.Join(err, os.RemoveAll(n.certDir))
	}
	return err
}

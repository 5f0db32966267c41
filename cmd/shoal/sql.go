package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/shoaldb/shoal/config"
	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/kv/gcworker"
	"github.com/shoaldb/shoal/kv/tikvclient"
	"github.com/shoaldb/shoal/kv/txnkv"
	"github.com/shoaldb/shoal/pd/pdclient"
	"github.com/shoaldb/shoal/proto/metapb"
	"github.com/shoaldb/shoal/server"
	"github.com/shoaldb/shoal/session"
	"github.com/shoaldb/shoal/status"
)

// sqlFlags parses the flags of `shoal sql`: defaults, then the --config
// file, then every flag given explicitly.
func sqlFlags(args []string, stderr io.Writer) (config.SQL, error) {
	cfg := config.DefaultSQL()
	fs := flag.NewFlagSet("shoal sql", flag.ContinueOnError)
	fs.StringVar(&cfg.PD, "pd", cfg.PD, "PD client addresses, host:port[,host:port...]")
	fs.StringVar(&cfg.Host, "host", cfg.Host, "MySQL protocol listen host")
	fs.IntVar(&cfg.Port, "port", cfg.Port, "MySQL protocol listen port")
	fs.StringVar(&cfg.StatusHost, "status-host", cfg.StatusHost, "status HTTP listen host (default: 127.0.0.1)")
	fs.IntVar(&cfg.StatusPort, "status-port", cfg.StatusPort, "status HTTP port (/status, /metrics, /debug/pprof if enabled); 0 disables")
	fs.BoolVar(&cfg.EnablePprof, "enable-pprof", cfg.EnablePprof, "serve /debug/pprof on the status port")
	fs.StringVar(&cfg.LogLevel, "log-level", cfg.LogLevel, "log level: debug, info, warn, error")
	fs.BoolVar(&cfg.InsecureAllowEmptyRootPassword, insecureFlag, cfg.InsecureAllowEmptyRootPassword, "allow a non-loopback --host while root has no password")
	securityFlags(fs, &cfg.Security)
	fs.StringVar(&cfg.SchemaSyncInterval, "schema-sync-interval", cfg.SchemaSyncInterval, "how often to re-read the schema and global variables other SQL nodes may change")
	fs.StringVar(&cfg.KVMaxBackoff, "kv-max-backoff", cfg.KVMaxBackoff, "how long one kv command retries region errors before failing (9005)")
	fs.BoolVar(&cfg.KVBatchCommands, "kv-batch-commands", cfg.KVBatchCommands, "send kv commands to the stores on batch streams (false: one unary gRPC call each)")
	fs.StringVar(&cfg.KVMaxBatchWaitTime, "kv-max-batch-wait-time", cfg.KVMaxBatchWaitTime, "how long a batch stream's sender waits for more requests when few are pending (0s: never)")
	fs.StringVar(&cfg.GCLifeTime, "gc-life-time", cfg.GCLifeTime, "how long old row versions stay readable before MVCC GC (default of tidb_gc_life_time)")
	fs.StringVar(&cfg.GCRunInterval, "gc-run-interval", cfg.GCRunInterval, "how far the GC safe point must move before a GC round runs (default of tidb_gc_run_interval)")
	fs.Var(dirListFlag{&cfg.Security.BackupDirs}, "backup-dirs", backupDirsUsage)
	if err := parseFlags(fs, args, stderr, "usage: shoal sql [flags]\n\nA stateless SQL node of a cluster (PD + stores).", func(path string) error {
		cfg = config.DefaultSQL()
		return cfg.LoadFile(path)
	}); err != nil {
		return cfg, err
	}
	cfg.RootPassword = config.RootPasswordFromEnv(cfg.RootPassword)
	return cfg, cfg.Validate()
}

func runSQL(args []string, stdout, stderr io.Writer) int {
	cfg, err := sqlFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "shoal sql: %v\n", err)
		return 2
	}
	log := newLogger(cfg.LogLevel, stderr)
	slog.SetDefault(log)
	if err := serveSQL(cfg, log); err != nil {
		fmt.Fprintf(stderr, "shoal sql: %v\n", err)
		return 1
	}
	return 0
}

// pdRegions adapts PD's client to the kv client's RegionSource. A region
// PD does not know (yet) is "not known", which the kv client retries.
type pdRegions struct{ c *pdclient.Client }

func (p pdRegions) GetRegion(ctx context.Context, key []byte) (*metapb.Region, *metapb.Peer, error) {
	return regionOrUnknown(p.c.GetRegion(ctx, key))
}

func (p pdRegions) GetPrevRegion(ctx context.Context, key []byte) (*metapb.Region, *metapb.Peer, error) {
	return regionOrUnknown(p.c.GetPrevRegion(ctx, key))
}

func (p pdRegions) GetStore(ctx context.Context, id uint64) (*metapb.Store, error) {
	return p.c.GetStore(ctx, id)
}

func regionOrUnknown(r *pdclient.Region, err error) (*metapb.Region, *metapb.Peer, error) {
	if errors.Is(err, pdclient.ErrRegionNotFound) || (err == nil && r == nil) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	return r.Meta, r.Leader, nil
}

// sqlNode is a SQL node's wiring: PD client -> region-aware kv client ->
// transactional storage -> SQL backend -> MySQL protocol server.
type sqlNode struct {
	pd      *pdclient.Client
	kvc     *tikvclient.Client
	storage *txnkv.Storage
	backend *session.Backend
	gc      *gcworker.Worker
	srv     *server.Server
}

// clusterStorage is the SQL layer's kv.Storage in a cluster: transactions
// from txnkv, and region boundaries from the kv client's region cache
// (kv.RangeSplitter: backups read region by region).
type clusterStorage struct {
	*txnkv.Storage
	regions *tikvclient.Client
}

func (s clusterStorage) SplitRange(ctx context.Context, start, end kv.Key) ([]kv.KeyRange, error) {
	return s.regions.SplitRange(ctx, start, end)
}

var _ kv.RangeSplitter = clusterStorage{}

// openSQLNode connects to PD and opens the SQL layer on the cluster. It
// fails if PD cannot be reached or the catalog cannot be read within the
// startup timeout.
func openSQLNode(ctx context.Context, cfg config.SQL, log *slog.Logger) (*sqlNode, error) {
	// With a CA too, the [security] files also make the links to PD and
	// the stores mutual TLS; a certificate alone serves MySQL clients only.
	var dialTLS *tls.Config
	var kvDial []grpc.DialOption
	if cfg.Security.ClusterTLS() {
		var err error
		if _, dialTLS, err = clusterTLS(cfg.Security); err != nil {
			return nil, err
		}
		kvDial = append(kvDial, grpc.WithTransportCredentials(credentials.NewTLS(dialTLS)))
	}
	pdc, err := pdclient.New(ctx, cfg.PDAddrs(), pdclient.Options{Logger: log, TLS: dialTLS})
	if err != nil {
		return nil, fmt.Errorf("cannot reach PD at %s: %w", cfg.PD, err)
	}
	kvc := tikvclient.New(pdRegions{pdc}, tikvclient.Options{MaxBackoff: cfg.MaxBackoff(), ConnsPerStore: cfg.KVConnsPerStore,
		DisableBatch: !cfg.KVBatchCommands, MaxBatchWaitTime: cfg.MaxBatchWaitTime(), DialOptions: kvDial})
	storage := txnkv.New(pdc, kvc, txnkv.Options{})
	gcLife, gcRun := cfg.GC()
	tlsCfg, ssl, err := mysqlTLS(cfg.Security, "", log)
	if err != nil {
		kvc.Close()
		pdc.Close()
		return nil, err
	}
	backend, err := session.NewBackend(clusterStorage{storage, kvc}, session.Config{
		SSL:                ssl,
		Password:           cfg.RootPassword,
		SchemaSyncInterval: cfg.SyncInterval(),
		DisablePlanCache:   !cfg.PreparedPlanCache.Enabled,
		Logger:             log,
		GC:                 session.GCSettings{LifeTime: gcLife, RunInterval: gcRun},
		BackupDirs:         cfg.Security.BackupDirs,
	})
	if err != nil {
		kvc.Close()
		pdc.Close()
		return nil, fmt.Errorf("cannot start SQL layer: %w", err)
	}
	gcw := gcworker.New(gcworker.Config{
		ServiceID: gcServiceID(cfg),
		Settings: func() gcworker.Settings {
			gc := backend.GCSettings()
			return gcworker.Settings{Disabled: gc.Disabled, LifeTime: gc.LifeTime, RunInterval: gc.RunInterval}
		},
		Logger: log,
	}, pdc, kvc, storage)
	gcw.Start()
	srv := server.New(server.Config{
		Addr:          cfg.Addr(),
		ServerVersion: "8.0.11-shoal-" + version,
		Logger:        log,
		TLS:           tlsCfg,
	}, backend)
	return &sqlNode{pd: pdc, kvc: kvc, storage: storage, backend: backend, gc: gcw, srv: srv}, nil
}

// gcServiceID names this SQL node's GC claim at PD: its host and MySQL
// address, so a restarted node takes its old claim over.
func gcServiceID(cfg config.SQL) string {
	host, _ := os.Hostname()
	return "sql-" + host + "-" + cfg.Addr()
}

// Close stops accepting, closes the sessions, then the background refresh,
// the GC worker (its claim protects the refresh's transactions till then)
// and the clients.
func (n *sqlNode) Close() error {
	err := n.srv.Close()
	n.backend.Close()
	n.gc.Close()
	n.storage.Close()
	err = errors.Join(err, n.kvc.Close())
	n.pd.Close()
	return err
}

// sqlStartTimeout bounds reaching PD and reading the catalog at startup.
const sqlStartTimeout = 60 * time.Second

// serveSQL runs a SQL node until SIGINT/SIGTERM or a fatal error. Ports
// are bound before anything else, so a taken port fails at once.
func serveSQL(cfg config.SQL, log *slog.Logger) error {
	start := time.Now()
	if err := config.CheckRootExposure(cfg.Host, cfg.RootPassword, cfg.InsecureAllowEmptyRootPassword); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Addr())
	if err != nil {
		return fmt.Errorf("cannot listen for MySQL clients on %s: %w", cfg.Addr(), err)
	}
	defer ln.Close()
	var statusLn net.Listener
	if cfg.StatusPort != 0 {
		statusLn, err = net.Listen("tcp", cfg.StatusAddr())
		if err != nil {
			return fmt.Errorf("cannot listen for status HTTP on %s: %w", cfg.StatusAddr(), err)
		}
		defer statusLn.Close()
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	octx, cancel := context.WithTimeout(ctx, sqlStartTimeout)
	node, err := openSQLNode(octx, cfg, log)
	cancel()
	if err != nil {
		return err
	}

	serveErr := make(chan error, 1)
	go func() {
		err := node.srv.Serve(ln)
		if errors.Is(err, server.ErrServerClosed) {
			err = nil
		}
		serveErr <- err
	}()
	var httpSrv *http.Server
	if statusLn != nil {
		info := status.Info{Role: "sql", Version: version, GitHash: gitHash, Addr: cfg.Addr(), StartTime: start, EnablePprof: cfg.EnablePprof}
		httpSrv = &http.Server{Handler: sqlStatusHandler(info, node), ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = httpSrv.Serve(statusLn) }()
	}
	log.Info("shoal sql ready", "version", version, "addr", cfg.Addr(), "status", sqlStatusOrOff(cfg), "pd", cfg.PD,
		"connect", fmt.Sprintf("mysql -h %s -P %d -u root", cfg.Host, cfg.Port))

	var runErr error
	select {
	case <-ctx.Done():
		log.Info("shutting down", "reason", "signal")
	case err := <-serveErr:
		if err != nil && !errors.Is(err, net.ErrClosed) {
			runErr = fmt.Errorf("MySQL server stopped: %w", err)
		}
		log.Error("MySQL protocol server stopped", "err", err)
	}
	stop() // a second signal kills the process the default way

	done := make(chan error, 1)
	go func() {
		if httpSrv != nil {
			sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			if httpSrv.Shutdown(sctx) != nil {
				httpSrv.Close()
			}
			cancel()
		}
		done <- node.Close()
	}()
	select {
	case err := <-done:
		if err != nil {
			log.Warn("shutdown", "err", err)
		}
	case <-time.After(30 * time.Second):
		return errors.New("shutdown did not finish within 30s")
	}
	log.Info("shoal sql stopped")
	return runErr
}

func sqlStatusOrOff(cfg config.SQL) string {
	if cfg.StatusPort == 0 {
		return "off"
	}
	return cfg.StatusAddr()
}

// sqlStatus is the /status document of a SQL node.
type sqlStatus struct {
	status.Status
	// Health: PD answered a timestamp request just now.
	Health        bool            `json:"health"`
	SchemaVersion int64           `json:"schema_version"`
	GC            gcworker.Status `json:"gc"`
	Error         string          `json:"error,omitempty"`
}

func sqlStatusHandler(info status.Info, n *sqlNode) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", status.Handler(info))
	mux.HandleFunc("/status", func(w http.ResponseWriter, r *http.Request) {
		st := sqlStatus{Status: info.Now()}
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		_, err := n.pd.GetTS(ctx)
		cancel()
		st.Health = err == nil
		if err != nil {
			st.Error = err.Error()
		}
		st.SchemaVersion = n.backend.SchemaVersion()
		st.GC = n.gc.Status()
		status.WriteJSON(w, st)
	})
	return mux
}

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/shoaldb/shoal/config"
	"github.com/shoaldb/shoal/status"
	"github.com/shoaldb/shoal/store/raftstore"
	"github.com/shoaldb/shoal/store/storenode"
)

// storeFlags parses the flags of `shoal store`: defaults, then the
// --config file, then every flag given explicitly.
func storeFlags(args []string, stderr io.Writer) (config.Store, error) {
	cfg := config.DefaultStore()
	fs := flag.NewFlagSet("shoal store", flag.ContinueOnError)
	fs.StringVar(&cfg.PD, "pd", cfg.PD, "PD client addresses, host:port[,host:port...]")
	fs.StringVar(&cfg.Addr, "addr", cfg.Addr, "host:port serving gRPC (kv for SQL nodes, raft between stores); registered in PD")
	fs.StringVar(&cfg.AdvertiseAddr, "advertise-addr", cfg.AdvertiseAddr, "host:port registered in PD if not --addr (e.g. behind a proxy)")
	fs.StringVar(&cfg.StatusAddr, "status-addr", cfg.StatusAddr, "status HTTP address (/status, /metrics, /debug/pprof if enabled); empty disables it")
	fs.BoolVar(&cfg.EnablePprof, "enable-pprof", cfg.EnablePprof, "serve /debug/pprof on the status address")
	securityFlags(fs, &cfg.Security)
	fs.StringVar(&cfg.DataDir, "data-dir", cfg.DataDir, "data directory (store identity and Pebble)")
	fs.StringVar(&cfg.LogLevel, "log-level", cfg.LogLevel, "log level: debug, info, warn, error")
	fs.StringVar(&cfg.RaftBaseTickInterval, "raft-base-tick-interval", cfg.RaftBaseTickInterval, "raft clock tick (election after 10 ticks, heartbeat every 2)")
	fs.StringVar(&cfg.RaftStoreMaxLeaderLease, "raft-store-max-leader-lease", cfg.RaftStoreMaxLeaderLease, "serve reads on a leader lease this long after a commit (empty: election timeout less 3 ticks; 0s: always ReadIndex)")
	fs.StringVar(&cfg.RegionSplitSize, "region-split-size", cfg.RegionSplitSize, "split a region once its data passes this size (e.g. 96MiB)")
	fs.Uint64Var(&cfg.RaftLogGCCountLimit, "raft-log-gc-count-limit", cfg.RaftLogGCCountLimit, "compact a region's raft log once it holds more applied entries than this")
	fs.StringVar(&cfg.RegionHeartbeatInterval, "region-heartbeat-interval", cfg.RegionHeartbeatInterval, "how often region leaders report to PD")
	fs.StringVar(&cfg.StoreHeartbeatInterval, "store-heartbeat-interval", cfg.StoreHeartbeatInterval, "how often the store reports its figures to PD")
	fs.IntVar(&cfg.GRPCConcurrency, "grpc-concurrency", cfg.GRPCConcurrency, "goroutines serving gRPC streams (0: one per stream)")
	fs.StringVar(&cfg.GRPCMaxMessageSize, "grpc-max-message-size", cfg.GRPCMaxMessageSize, "largest gRPC message either way (e.g. 64MiB)")
	if err := parseFlags(fs, args, stderr, "usage: shoal store [flags]", func(path string) error {
		cfg = config.DefaultStore()
		return cfg.LoadFile(path)
	}); err != nil {
		return cfg, err
	}
	return cfg, cfg.Validate()
}

func runStore(args []string, _, stderr io.Writer) int {
	return runCommand("store", args, stderr, storeFlags, func(cfg config.Store) error {
		return serveStore(cfg, roleLogger(cfg.LogLevel, stderr))
	})
}

// storeNodeConfig turns the command's configuration into the node's.
func storeNodeConfig(cfg config.Store, log *slog.Logger) storenode.Config {
	tick := cfg.TickInterval()
	hbTicks := int(cfg.RegionHeartbeat() / tick)
	return storenode.Config{
		PD:         cfg.PDAddrs(),
		Addr:       cfg.AdvertisedAddr(),
		StatusAddr: cfg.StatusAddr,
		DataDir:    cfg.DataDir,
		Version:    version,
		Raft: raftstore.Config{
			TickInterval:        tick,
			LeaderLease:         cfg.LeaderLease(),
			RegionSplitSize:     cfg.SplitSize(),
			RaftLogGCCountLimit: cfg.RaftLogGCCountLimit,
			PDHeartbeatTicks:    max(hbTicks, 1),
		},
		StoreHeartbeatInterval: cfg.StoreHeartbeat(),
		GRPCConcurrency:        cfg.GRPCConcurrency,
		GRPCMaxMessageSize:     cfg.MaxMessageSize(),
		Logger:                 log,
	}
}

// serveStore runs a storage node until SIGINT/SIGTERM or a fatal serving
// error. The data dir and both ports are checked before anything starts.
func serveStore(cfg config.Store, log *slog.Logger) error {
	start := time.Now()
	if err := checkDataDir(cfg.DataDir); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("cannot listen for gRPC on %s: %w", cfg.Addr, err)
	}
	defer ln.Close()
	statusLn, err := listenStatus(cfg.StatusAddr)
	if err != nil {
		return err
	}
	if statusLn != nil {
		defer statusLn.Close()
	}

	ctx, stop := catchSignals()
	defer stop()

	// Start-up waits for PD (bounded); a signal interrupts it.
	ncfg := storeNodeConfig(cfg, log)
	if ncfg.ServerTLS, ncfg.ClientTLS, err = clusterTLS(cfg.Security); err != nil {
		return err
	}
	startCtx, cancel := context.WithTimeout(ctx, 60*time.Second)
	node, err := storenode.Start(startCtx, ncfg, ln)
	cancel()
	if err != nil {
		return err
	}

	info := status.Info{Role: "store", Version: version, GitHash: gitHash, Addr: cfg.AdvertisedAddr(), StartTime: start, EnablePprof: cfg.EnablePprof}
	st := serveStatus(statusLn, storeStatusHandler(info, node))
	log.Info("shoal store started", "version", version, "store", node.StoreID(), "addr", cfg.Addr,
		"status", orOff(cfg.StatusAddr), "pd", cfg.PD, "data-dir", cfg.DataDir)
	return runRole(ctx, stop, role{name: "store", log: log, status: st, failed: node.Err(), stoppedMsg: "gRPC server stopped",
		close: node.Close, closeErrFails: true})
}

// storeStatus is the /status document of a storage node.
type storeStatus struct {
	status.Status
	StoreID     uint64 `json:"store_id"`
	ClusterID   uint64 `json:"cluster_id"`
	Health      bool   `json:"health"` // registered and heartbeating to PD
	RegionCount uint32 `json:"region_count"`
	LeaderCount uint32 `json:"leader_count"`
}

// storeStatusHandler serves /status for a store and everything else
// (/metrics, /debug/pprof) from the status package.
func storeStatusHandler(info status.Info, node *storenode.Node) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", status.Handler(info))
	mux.Handle("/admin/", node.AdminHandler())
	mux.HandleFunc("/status", func(w http.ResponseWriter, r *http.Request) {
		stats := node.Stats()
		st := storeStatus{
			Status:      info.Now(),
			StoreID:     node.StoreID(),
			ClusterID:   node.ClusterID(),
			Health:      node.Healthy(),
			RegionCount: stats.GetRegionCount(),
			LeaderCount: stats.GetLeaderCount(),
		}
		status.WriteJSON(w, st)
	})
	return mux
}

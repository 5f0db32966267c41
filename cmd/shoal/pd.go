package main

import (
	"flag"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/shoaldb/shoal/config"
	"github.com/shoaldb/shoal/pd/server"
	"github.com/shoaldb/shoal/status"
)

// pdFlags parses the flags of `shoal pd`: defaults, then the --config
// file, then every flag given explicitly.
func pdFlags(args []string, stderr io.Writer) (config.PD, error) {
	cfg := config.DefaultPD()
	fs := flag.NewFlagSet("shoal pd", flag.ContinueOnError)
	fs.StringVar(&cfg.Name, "name", cfg.Name, "member name, unique in the cluster")
	fs.StringVar(&cfg.DataDir, "data-dir", cfg.DataDir, "data directory (embedded etcd)")
	fs.StringVar(&cfg.ClientURLs, "client-urls", cfg.ClientURLs, "host:port serving PD's gRPC service")
	fs.StringVar(&cfg.PeerURLs, "peer-urls", cfg.PeerURLs, "host:port for the members' own traffic (etcd peers)")
	fs.StringVar(&cfg.AdvertiseClientURLs, "advertise-client-urls", cfg.AdvertiseClientURLs, "host:port clients reach the PD service at, if not --client-urls (e.g. behind a proxy)")
	fs.StringVar(&cfg.AdvertisePeerURLs, "advertise-peer-urls", cfg.AdvertisePeerURLs, "host:port the other members reach this one at, if not --peer-urls")
	fs.StringVar(&cfg.InitialCluster, "initial-cluster", cfg.InitialCluster, "members of a new cluster: name=peer-url,... (empty: this member alone)")
	fs.StringVar(&cfg.StatusAddr, "status-addr", cfg.StatusAddr, "status HTTP address (/status, /metrics, /debug/pprof if enabled); empty disables it")
	fs.BoolVar(&cfg.EnablePprof, "enable-pprof", cfg.EnablePprof, "serve /debug/pprof on the status address")
	securityFlags(fs, &cfg.Security)
	fs.StringVar(&cfg.LogLevel, "log-level", cfg.LogLevel, "log level: debug, info, warn, error")
	fs.IntVar(&cfg.MaxReplicas, "max-replicas", cfg.MaxReplicas, "voters per region")
	fs.StringVar(&cfg.MaxStoreDownTime, "max-store-down-time", cfg.MaxStoreDownTime, "how long a store may be silent before its replicas are replaced")
	if err := parseFlags(fs, args, stderr, "usage: shoal pd [flags]", func(path string) error {
		cfg = config.DefaultPD()
		return cfg.LoadFile(path)
	}); err != nil {
		return cfg, err
	}
	return cfg, cfg.Validate()
}

func runPD(args []string, _, stderr io.Writer) int {
	return runCommand("pd", args, stderr, pdFlags, func(cfg config.PD) error {
		return servePD(cfg, roleLogger(cfg.LogLevel, stderr))
	})
}

// etcdLogLevel keeps the embedded etcd quieter than PD itself: warnings
// and errors only, unless PD logs at error.
func etcdLogLevel(pdLevel string) string {
	if strings.ToLower(pdLevel) == "error" {
		return "error"
	}
	return "warn"
}

// servePD runs one PD member until SIGINT/SIGTERM or a fatal etcd error.
// The data dir and every port are checked before anything is served.
func servePD(cfg config.PD, log *slog.Logger) error {
	start := time.Now()
	if err := checkDataDir(cfg.DataDir); err != nil {
		return err
	}
	statusLn, err := listenStatus(cfg.StatusAddr)
	if err != nil {
		return err
	}
	if statusLn != nil {
		defer statusLn.Close()
	}
	sc := server.Config{
		Name:               cfg.Name,
		DataDir:            cfg.DataDir,
		ClientURL:          cfg.ClientURLs,
		PeerURL:            cfg.PeerURLs,
		AdvertiseClientURL: cfg.AdvertiseClientURLs,
		AdvertisePeerURL:   cfg.AdvertisePeerURLs,
		InitialCluster:     cfg.InitialCluster,
		EtcdLogLevel:       etcdLogLevel(cfg.LogLevel),
		Logger:             log,
		Security:           cfg.Security.Paths(),
	}
	sc.Schedule.MaxReplicas = cfg.MaxReplicas
	sc.Schedule.MaxStoreDownTime = cfg.StoreDownTime()
	srv, err := server.New(sc) // binds the client and peer ports
	if err != nil {
		return err
	}

	ctx, stop := catchSignals()
	defer stop()
	info := status.Info{Role: "pd", Version: version, GitHash: gitHash, Addr: srv.ClientAddr(), StartTime: start, EnablePprof: cfg.EnablePprof}
	st := serveStatus(statusLn, pdStatusHandler(info, srv))
	log.Info("shoal pd started", "version", version, "name", cfg.Name, "client", cfg.ClientURLs, "peer", cfg.PeerURLs,
		"status", orOff(cfg.StatusAddr), "data-dir", cfg.DataDir, "max-replicas", cfg.MaxReplicas,
		"max-store-down-time", cfg.MaxStoreDownTime)
	return runRole(ctx, stop, role{name: "pd", log: log, status: st, failed: srv.Err(), stoppedMsg: "pd stopped",
		close: func() error {
			srv.Close() // steps down (revoking the leader lease), then stops etcd
			return nil
		}})
}

// pdStatus is the /status document of a PD member: the common fields plus
// its health and the leader it knows.
type pdStatus struct {
	status.Status
	Name       string `json:"name"`
	ClusterID  uint64 `json:"cluster_id"`
	Health     bool   `json:"health"` // joined its etcd cluster and a leader is known
	IsLeader   bool   `json:"is_leader"`
	Leader     string `json:"leader,omitempty"`
	LeaderAddr string `json:"leader_addr,omitempty"`
}

// pdStatusHandler serves /status for PD and everything else (/metrics,
// /debug/pprof) from the status package.
func pdStatusHandler(info status.Info, srv *server.Server) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", status.Handler(info))
	mux.HandleFunc("/status", func(w http.ResponseWriter, r *http.Request) {
		st := pdStatus{
			Status:    info.Now(),
			Name:      srv.Name(),
			ClusterID: srv.ClusterID(),
			IsLeader:  srv.IsLeader(),
		}
		if l := srv.Leader(); l != nil {
			st.Leader = l.Name
			if len(l.ClientUrls) > 0 {
				st.LeaderAddr = l.ClientUrls[0]
			}
		}
		st.Health = srv.Ready() && st.Leader != ""
		status.WriteJSON(w, st)
	})
	return mux
}

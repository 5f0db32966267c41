package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Store is the configuration of `shoal store`, one storage node. The
// tuning keys are the counterparts of TiKV's where shoal has the
// mechanism (TiKV's name in brackets).
type Store struct {
	// PD lists PD members' client addresses, comma-separated
	// (host:port,...).
	PD string `toml:"pd"`
	// Addr is the gRPC address (kv service for SQL nodes and raft traffic
	// between stores), registered in PD. [server.addr]
	Addr string `toml:"addr"`
	// AdvertiseAddr is the gRPC address registered in PD, where SQL nodes
	// and other stores reach this one; empty means Addr. It differs when a
	// proxy sits in between. [server.advertise-addr]
	AdvertiseAddr string `toml:"advertise-addr"`
	// StatusAddr is the status HTTP address (/status, /metrics,
	// /debug/pprof); empty disables it. [server.status-addr]
	StatusAddr string `toml:"status-addr"`
	// EnablePprof serves /debug/pprof on the status address.
	EnablePprof bool `toml:"enable-pprof"`
	// Security: with all three files, every gRPC link is mutual TLS.
	// [security]
	Security Security `toml:"security"`
	// DataDir holds the store's identity and its Pebble database.
	DataDir string `toml:"data-dir"`
	// LogLevel is one of debug, info, warn, error.
	LogLevel string `toml:"log-level"`

	// RaftBaseTickInterval is the raft clock; elections take 10 ticks,
	// heartbeats 2. [raftstore.raft-base-tick-interval]
	RaftBaseTickInterval string `toml:"raft-base-tick-interval"`
	// RaftStoreMaxLeaderLease: how long a region leader serves reads
	// without a ReadIndex round after an entry of its term commits; empty
	// takes the election timeout less 3 ticks (700ms by default), "0s"
	// makes every read use ReadIndex; longer than the election timeout
	// less 2 ticks is cut to that. [raftstore.raft-store-max-leader-lease]
	RaftStoreMaxLeaderLease string `toml:"raft-store-max-leader-lease"`
	// RegionSplitSize: a region whose data grows past it is split, e.g.
	// "96MiB". [coprocessor.region-split-size]
	RegionSplitSize string `toml:"region-split-size"`
	// RaftLogGCCountLimit: a region's raft log is compacted once it holds
	// more applied entries than this. [raftstore.raft-log-gc-count-limit]
	RaftLogGCCountLimit uint64 `toml:"raft-log-gc-count-limit"`
	// RegionHeartbeatInterval: how often region leaders report to PD
	// (rounded to raft ticks). [raftstore.pd-heartbeat-tick-interval]
	RegionHeartbeatInterval string `toml:"region-heartbeat-interval"`
	// StoreHeartbeatInterval: how often the store reports its figures to
	// PD. [raftstore.pd-store-heartbeat-tick-interval]
	StoreHeartbeatInterval string `toml:"store-heartbeat-interval"`
	// GRPCConcurrency: long-lived goroutines serving gRPC streams (16); 0
	// starts one per stream, whose stack then grows anew on every call
	// (11% of a store's CPU under sysbench point selects). Streams beyond
	// them get goroutines of their own. [server.grpc-concurrency]
	GRPCConcurrency int `toml:"grpc-concurrency"`
	// GRPCMaxMessageSize bounds one gRPC message, e.g. "64MiB".
	// [server.max-grpc-send-msg-len]
	GRPCMaxMessageSize string `toml:"grpc-max-message-size"`
}

// DefaultStore returns the default storage node configuration.
func DefaultStore() Store {
	return Store{
		PD:                      "127.0.0.1:2379",
		Addr:                    "127.0.0.1:20160",
		StatusAddr:              "127.0.0.1:20180",
		DataDir:                 "./shoal-store",
		LogLevel:                "info",
		RaftBaseTickInterval:    "100ms",
		RegionSplitSize:         "96MiB",
		RaftLogGCCountLimit:     10000,
		RegionHeartbeatInterval: "10s",
		StoreHeartbeatInterval:  "10s",
		GRPCMaxMessageSize:      "64MiB",
		GRPCConcurrency:         16,
	}
}

// LoadFile decodes a TOML file on top of s; unknown keys are an error.
func (s *Store) LoadFile(path string) error { return loadTOML(path, s) }

// AdvertisedAddr is the gRPC address registered in PD: AdvertiseAddr, or
// Addr when that is empty.
func (s *Store) AdvertisedAddr() string {
	if s.AdvertiseAddr != "" {
		return s.AdvertiseAddr
	}
	return s.Addr
}

// PDAddrs returns the PD addresses (valid after Validate).
func (s *Store) PDAddrs() []string {
	var out []string
	for _, a := range strings.Split(s.PD, ",") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, strings.TrimPrefix(a, "http://"))
		}
	}
	return out
}

// The parsed forms of the duration and size keys (valid after Validate).

func (s *Store) TickInterval() time.Duration {
	d, _ := time.ParseDuration(s.RaftBaseTickInterval)
	return d
}
func (s *Store) RegionHeartbeat() time.Duration {
	d, _ := time.ParseDuration(s.RegionHeartbeatInterval)
	return d
}
func (s *Store) StoreHeartbeat() time.Duration {
	d, _ := time.ParseDuration(s.StoreHeartbeatInterval)
	return d
}

// LeaderLease is the raftstore lease: 0 for the default, negative when
// leases are off.
func (s *Store) LeaderLease() time.Duration {
	if s.RaftStoreMaxLeaderLease == "" {
		return 0
	}
	d, _ := time.ParseDuration(s.RaftStoreMaxLeaderLease)
	if d == 0 {
		return -1
	}
	return d
}
func (s *Store) SplitSize() uint64 { n, _ := ParseSize(s.RegionSplitSize); return n }
func (s *Store) MaxMessageSize() int {
	n, _ := ParseSize(s.GRPCMaxMessageSize)
	return int(n)
}

// Validate checks values that can be checked without touching the system.
func (s *Store) Validate() error {
	var errs []error
	if len(s.PDAddrs()) == 0 {
		errs = append(errs, errors.New("pd must list at least one PD address"))
	}
	for _, a := range s.PDAddrs() {
		if err := checkHostPort(a); err != nil {
			errs = append(errs, fmt.Errorf("pd: %w", err))
		}
	}
	if err := checkHostPort(s.Addr); err != nil {
		errs = append(errs, fmt.Errorf("addr: %w", err))
	}
	if s.AdvertiseAddr != "" {
		if err := checkHostPort(s.AdvertiseAddr); err != nil {
			errs = append(errs, fmt.Errorf("advertise-addr: %w", err))
		}
	}
	if s.StatusAddr != "" {
		if err := checkHostPort(s.StatusAddr); err != nil {
			errs = append(errs, fmt.Errorf("status-addr: %w", err))
		} else if s.StatusAddr == s.Addr {
			errs = append(errs, fmt.Errorf("status-addr and addr are both %s", s.Addr))
		}
	}
	if s.DataDir == "" {
		errs = append(errs, errors.New("data-dir must not be empty"))
	}
	switch strings.ToLower(s.LogLevel) {
	case "debug", "info", "warn", "warning", "error":
	default:
		errs = append(errs, fmt.Errorf("log-level %q is not one of debug, info, warn, error", s.LogLevel))
	}
	durs := []struct {
		key, v string
		min    time.Duration
	}{
		{"raft-base-tick-interval", s.RaftBaseTickInterval, time.Millisecond},
		{"region-heartbeat-interval", s.RegionHeartbeatInterval, 10 * time.Millisecond},
		{"store-heartbeat-interval", s.StoreHeartbeatInterval, 10 * time.Millisecond},
	}
	for _, d := range durs {
		if v, err := time.ParseDuration(d.v); err != nil || v < d.min {
			errs = append(errs, fmt.Errorf("%s %q must be a duration of at least %v", d.key, d.v, d.min))
		}
	}
	if s.RaftStoreMaxLeaderLease != "" {
		if d, err := time.ParseDuration(s.RaftStoreMaxLeaderLease); err != nil || d < 0 {
			errs = append(errs, fmt.Errorf("raft-store-max-leader-lease %q must be a duration (0s: no leases)", s.RaftStoreMaxLeaderLease))
		}
	}
	if n, err := ParseSize(s.RegionSplitSize); err != nil || n < 1024 {
		errs = append(errs, fmt.Errorf("region-split-size %q must be a size of at least 1KiB", s.RegionSplitSize))
	}
	if n, err := ParseSize(s.GRPCMaxMessageSize); err != nil || n < 4<<20 || n > 1<<30 {
		errs = append(errs, fmt.Errorf("grpc-max-message-size %q must be a size between 4MiB and 1GiB", s.GRPCMaxMessageSize))
	}
	if s.RaftLogGCCountLimit < 1 {
		errs = append(errs, errors.New("raft-log-gc-count-limit must be at least 1"))
	}
	if s.GRPCConcurrency < 0 {
		errs = append(errs, fmt.Errorf("grpc-concurrency %d must not be negative", s.GRPCConcurrency))
	}
	if err := s.Security.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// ParseSize parses a byte size: a number with an optional unit B, KB/KiB,
// MB/MiB, GB/GiB (all powers of 1024, as TiKV reads them).
func ParseSize(s string) (uint64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9') {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("size %q: no number", s)
	}
	n, err := strconv.ParseUint(t[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q: %w", s, err)
	}
	var mult uint64
	switch strings.ToUpper(strings.TrimSpace(t[i:])) {
	case "", "B":
		mult = 1
	case "K", "KB", "KIB":
		mult = 1 << 10
	case "M", "MB", "MIB":
		mult = 1 << 20
	case "G", "GB", "GIB":
		mult = 1 << 30
	default:
		return 0, fmt.Errorf("size %q: unknown unit", s)
	}
	if n > (1<<64-1)/mult {
		return 0, fmt.Errorf("size %q overflows", s)
	}
	return n * mult, nil
}

package config

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// SQL is the configuration of `shoal sql`, a stateless SQL node of a
// cluster. Several SQL nodes share one cluster; TiDB's names of the
// counterpart keys are in brackets.
type SQL struct {
	// PD lists PD members' client addresses, comma-separated. [path]
	PD string `toml:"pd"`
	// Host and Port: the MySQL protocol listener. [host, port]
	Host string `toml:"host"`
	Port int    `toml:"port"`
	// StatusHost (empty: 127.0.0.1) and StatusPort (0 disables): /status,
	// /metrics, /debug/pprof. [status.status-host, status.status-port]
	StatusHost string `toml:"status-host"`
	StatusPort int    `toml:"status-port"`
	// EnablePprof serves /debug/pprof on the status port.
	// [status.enable-pprof]
	EnablePprof bool `toml:"enable-pprof"`
	// LogLevel is one of debug, info, warn, error. [log.level]
	LogLevel string `toml:"log-level"`
	// RootPassword is the password of the root user; empty by default;
	// SHOAL_ROOT_PASSWORD overrides it.
	RootPassword string `toml:"root-password"`
	// InsecureAllowEmptyRootPassword lets the node listen on a
	// non-loopback address while root has no password.
	InsecureAllowEmptyRootPassword bool `toml:"insecure-allow-empty-root-password"`
	// Security: the MySQL protocol's TLS files, and with ssl-ca mutual
	// TLS on the gRPC links to PD and stores. [security]
	Security Security `toml:"security"`
	// SchemaSyncInterval: how often the node re-reads the schema version
	// (and global variables) other SQL nodes may have changed, a Go
	// duration. Commits that wrote tables check it regardless. [lease]
	SchemaSyncInterval string `toml:"schema-sync-interval"`
	// KVMaxBackoff bounds how long one kv command retries region errors and
	// unreachable stores before failing with 9005. [tikv-client.max-backoff]
	KVMaxBackoff string `toml:"kv-max-backoff"`
	// KVConnsPerStore is the number of gRPC connections to each store.
	// [tikv-client.grpc-connection-count]
	KVConnsPerStore int `toml:"kv-conns-per-store"`
	// KVBatchCommands: kv commands to a store share one BatchCommands
	// stream per connection, many per message, instead of a unary call
	// each. [tikv-client.max-batch-size > 0]
	KVBatchCommands bool `toml:"kv-batch-commands"`
	// KVMaxBatchWaitTime: with batch commands, how long a connection's
	// sender waits for more requests when it found fewer than a full
	// message, a Go duration ("0s": never waits).
	// [tikv-client.max-batch-wait-time]
	KVMaxBatchWaitTime string `toml:"kv-max-batch-wait-time"`
	// GCLifeTime: how long old row versions stay readable before MVCC
	// GC removes them, the default of the tidb_gc_life_time variable.
	// [tikv_gc_life_time]
	GCLifeTime string `toml:"gc-life-time"`
	// GCRunInterval: a GC round runs when it would move the safe point at
	// least this far, the default of tidb_gc_run_interval.
	// [tikv_gc_run_interval]
	GCRunInterval string `toml:"gc-run-interval"`

	PreparedPlanCache PreparedPlanCache `toml:"prepared-plan-cache"`
}

// PreparedPlanCache is TiDB's [prepared-plan-cache] section.
type PreparedPlanCache struct {
	// Enabled: prepared statements keep their plans (bounded by the
	// tidb_prepared_plan_cache_size variable). [prepared-plan-cache.enabled]
	Enabled bool `toml:"enabled"`
}

// DefaultSQL returns the default SQL node configuration.
func DefaultSQL() SQL {
	return SQL{
		PD:                 "127.0.0.1:2379",
		Host:               "127.0.0.1",
		Port:               4000,
		StatusPort:         10080,
		LogLevel:           "info",
		SchemaSyncInterval: "200ms",
		KVMaxBackoff:       "20s",
		KVConnsPerStore:    2,
		KVBatchCommands:    true,
		KVMaxBatchWaitTime: "0s",
		GCLifeTime:         "10m",
		GCRunInterval:      "10m",
		PreparedPlanCache:  PreparedPlanCache{Enabled: true},
	}
}

// LoadFile decodes a TOML file on top of s; unknown keys are an error.
func (s *SQL) LoadFile(path string) error { return loadTOML(path, s) }

// PDAddrs returns the PD addresses (valid after Validate).
func (s *SQL) PDAddrs() []string {
	var out []string
	for _, a := range strings.Split(s.PD, ",") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, strings.TrimPrefix(a, "http://"))
		}
	}
	return out
}

// SyncInterval returns SchemaSyncInterval parsed (valid after Validate).
func (s *SQL) SyncInterval() time.Duration {
	d, _ := time.ParseDuration(s.SchemaSyncInterval)
	return d
}

// MaxBackoff returns KVMaxBackoff parsed (valid after Validate).
func (s *SQL) MaxBackoff() time.Duration {
	d, _ := time.ParseDuration(s.KVMaxBackoff)
	return d
}

// MaxBatchWaitTime returns KVMaxBatchWaitTime parsed (valid after
// Validate).
func (s *SQL) MaxBatchWaitTime() time.Duration {
	d, _ := time.ParseDuration(s.KVMaxBatchWaitTime)
	return d
}

// GC returns GCLifeTime and GCRunInterval parsed (valid after Validate).
func (s *SQL) GC() (lifeTime, runInterval time.Duration) {
	lifeTime, _ = time.ParseDuration(s.GCLifeTime)
	runInterval, _ = time.ParseDuration(s.GCRunInterval)
	return lifeTime, runInterval
}

// Addr is the MySQL listen address, host:port.
func (s *SQL) Addr() string { return net.JoinHostPort(s.Host, strconv.Itoa(s.Port)) }

// StatusAddr is the status HTTP listen address, host:port.
func (s *SQL) StatusAddr() string {
	h := s.StatusHost
	if h == "" {
		h = "127.0.0.1"
	}
	return net.JoinHostPort(h, strconv.Itoa(s.StatusPort))
}

// Validate checks values that can be checked without touching the system.
func (s *SQL) Validate() error {
	var errs []error
	addrs := s.PDAddrs()
	if len(addrs) == 0 {
		errs = append(errs, errors.New("pd must list at least one address"))
	}
	for _, a := range addrs {
		if err := checkHostPort(a); err != nil {
			errs = append(errs, fmt.Errorf("pd: %w", err))
		}
	}
	if s.Host == "" {
		errs = append(errs, errors.New("host must not be empty"))
	}
	if s.Port < 0 || s.Port > 65535 {
		errs = append(errs, fmt.Errorf("port %d out of range 0..65535", s.Port))
	}
	if s.StatusPort < 0 || s.StatusPort > 65535 {
		errs = append(errs, fmt.Errorf("status-port %d out of range 0..65535", s.StatusPort))
	}
	if s.StatusPort != 0 && s.StatusAddr() == s.Addr() {
		errs = append(errs, fmt.Errorf("status-port and port are both %d", s.Port))
	}
	if d, err := time.ParseDuration(s.SchemaSyncInterval); err != nil || d < 10*time.Millisecond || d > time.Minute {
		errs = append(errs, fmt.Errorf("schema-sync-interval %q must be a duration between 10ms and 1m", s.SchemaSyncInterval))
	}
	if d, err := time.ParseDuration(s.KVMaxBackoff); err != nil || d < 100*time.Millisecond {
		errs = append(errs, fmt.Errorf("kv-max-backoff %q must be a duration of at least 100ms", s.KVMaxBackoff))
	}
	if d, err := time.ParseDuration(s.KVMaxBatchWaitTime); err != nil || d < 0 || d > time.Second {
		errs = append(errs, fmt.Errorf("kv-max-batch-wait-time %q must be a duration between 0s and 1s", s.KVMaxBatchWaitTime))
	}
	if d, err := time.ParseDuration(s.GCLifeTime); err != nil || d < time.Second {
		errs = append(errs, fmt.Errorf("gc-life-time %q must be a duration of at least 1s", s.GCLifeTime))
	}
	if d, err := time.ParseDuration(s.GCRunInterval); err != nil || d < time.Second {
		errs = append(errs, fmt.Errorf("gc-run-interval %q must be a duration of at least 1s", s.GCRunInterval))
	}
	if s.KVConnsPerStore < 1 || s.KVConnsPerStore > 64 {
		errs = append(errs, fmt.Errorf("kv-conns-per-store %d out of range 1..64", s.KVConnsPerStore))
	}
	if err := s.Security.Validate(); err != nil {
		errs = append(errs, err)
	}
	switch strings.ToLower(s.LogLevel) {
	case "debug", "info", "warn", "warning", "error":
	default:
		errs = append(errs, fmt.Errorf("log-level %q is not one of debug, info, warn, error", s.LogLevel))
	}
	if err := s.Security.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

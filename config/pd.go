package config

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"time"
)

// PD is the configuration of `shoal pd`, one placement driver member.
type PD struct {
	// Name identifies the member in InitialCluster.
	Name string `toml:"name"`
	// DataDir holds the member's embedded etcd data.
	DataDir string `toml:"data-dir"`
	// ClientURLs is the host:port serving PD's gRPC service (and etcd's
	// client API on the same port).
	ClientURLs string `toml:"client-urls"`
	// PeerURLs is the host:port where the etcd members talk to each other.
	PeerURLs string `toml:"peer-urls"`
	// AdvertiseClientURLs and AdvertisePeerURLs are the addresses other
	// processes reach this member at (empty: the listen addresses); they
	// differ when a proxy sits in between.
	AdvertiseClientURLs string `toml:"advertise-client-urls"`
	AdvertisePeerURLs   string `toml:"advertise-peer-urls"`
	// InitialCluster lists the members of a new cluster: name=peer-url,...
	// Empty means a cluster of this member alone.
	InitialCluster string `toml:"initial-cluster"`
	// StatusAddr is the status HTTP address (/status, /metrics,
	// /debug/pprof); empty disables it.
	StatusAddr string `toml:"status-addr"`
	// EnablePprof serves /debug/pprof on the status address.
	EnablePprof bool `toml:"enable-pprof"`
	// Security: with all three files, gRPC and etcd's client and peer
	// links are mutual TLS. [security]
	Security Security `toml:"security"`
	// LogLevel is one of debug, info, warn, error.
	LogLevel string `toml:"log-level"`
	// MaxReplicas is the number of voters PD keeps for every region.
	MaxReplicas int `toml:"max-replicas"`
	// MaxStoreDownTime is how long a store may stay silent before PD
	// replaces its replicas elsewhere (a Go duration, e.g. "30m").
	MaxStoreDownTime string `toml:"max-store-down-time"`
}

// DefaultPD returns the default PD member configuration.
func DefaultPD() PD {
	return PD{
		Name:             "pd",
		DataDir:          "./shoal-pd",
		ClientURLs:       "127.0.0.1:2379",
		PeerURLs:         "127.0.0.1:2380",
		StatusAddr:       "127.0.0.1:2381",
		LogLevel:         "info",
		MaxReplicas:      3,
		MaxStoreDownTime: "30m",
	}
}

// LoadFile decodes a TOML file on top of p; unknown keys are an error.
func (p *PD) LoadFile(path string) error { return loadTOML(path, p) }

// StoreDownTime returns MaxStoreDownTime parsed (valid after Validate).
func (p *PD) StoreDownTime() time.Duration {
	d, _ := time.ParseDuration(p.MaxStoreDownTime)
	return d
}

// Validate checks values that can be checked without touching the system.
func (p *PD) Validate() error {
	var errs []error
	if p.Name == "" {
		errs = append(errs, errors.New("name must not be empty"))
	}
	if p.DataDir == "" {
		errs = append(errs, errors.New("data-dir must not be empty"))
	}
	for flag, v := range map[string]string{"client-urls": p.ClientURLs, "peer-urls": p.PeerURLs} {
		if err := checkHostPort(v); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", flag, err))
		}
	}
	for flag, v := range map[string]string{"advertise-client-urls": p.AdvertiseClientURLs, "advertise-peer-urls": p.AdvertisePeerURLs} {
		if v == "" {
			continue
		}
		if err := checkHostPort(v); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", flag, err))
		}
	}
	if p.StatusAddr != "" {
		if err := checkHostPort(p.StatusAddr); err != nil {
			errs = append(errs, fmt.Errorf("status-addr: %w", err))
		}
	}
	if p.InitialCluster != "" {
		named := false
		for _, part := range strings.Split(p.InitialCluster, ",") {
			name, u, ok := strings.Cut(part, "=")
			if !ok || name == "" {
				errs = append(errs, fmt.Errorf("initial-cluster entry %q is not name=peer-url", part))
				continue
			}
			if err := checkHostPort(u); err != nil {
				errs = append(errs, fmt.Errorf("initial-cluster entry %q: %w", part, err))
			}
			named = named || name == p.Name
		}
		if !named {
			errs = append(errs, fmt.Errorf("initial-cluster does not list this member's name %q", p.Name))
		}
	}
	if p.MaxReplicas < 1 {
		errs = append(errs, fmt.Errorf("max-replicas %d must be at least 1", p.MaxReplicas))
	}
	if d, err := time.ParseDuration(p.MaxStoreDownTime); err != nil || d < time.Second {
		errs = append(errs, fmt.Errorf("max-store-down-time %q must be a duration of at least 1s", p.MaxStoreDownTime))
	}
	switch strings.ToLower(p.LogLevel) {
	case "debug", "info", "warn", "warning", "error":
	default:
		errs = append(errs, fmt.Errorf("log-level %q is not one of debug, info, warn, error", p.LogLevel))
	}
	if err := p.Security.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// checkHostPort accepts host:port, optionally prefixed with http://.
func checkHostPort(s string) error {
	hp := strings.TrimPrefix(s, "http://")
	if strings.Contains(hp, "://") {
		return fmt.Errorf("%q: only plain http is supported", s)
	}
	if _, _, err := net.SplitHostPort(hp); err != nil {
		return fmt.Errorf("%q is not host:port: %w", s, err)
	}
	return nil
}

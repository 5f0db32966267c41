package server

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/shoaldb/shoal/pd/server/schedule"
	"github.com/shoaldb/shoal/security"
)

// Config configures one PD member.
type Config struct {
	// Name identifies the member in InitialCluster; unique per cluster.
	Name string
	// DataDir holds the member's embedded etcd data (in DataDir/etcd).
	DataDir string
	// ClientURL is where the member serves the PD gRPC service (and etcd's
	// client API, on the same port), e.g. "127.0.0.1:2379".
	ClientURL string
	// PeerURL is where etcd members talk to each other, e.g.
	// "127.0.0.1:2380".
	PeerURL string
	// AdvertiseClientURL and AdvertisePeerURL are the addresses other
	// processes reach this member at, published through etcd (GetMembers,
	// the peers' view); empty means ClientURL and PeerURL. They differ
	// when something sits in between, e.g. the chaos harness's fault
	// proxies.
	AdvertiseClientURL string
	AdvertisePeerURL   string
	// InitialCluster lists every member of a new cluster as
	// name=peerURL,...; empty means this member alone. Ignored when the
	// data dir already holds a member.
	InitialCluster string
	// LeaderLease is the TTL of the leader key; a leader that cannot renew
	// it stops serving when it runs out, and another member takes over.
	LeaderLease time.Duration
	// TSOWindow is how far ahead of the handed-out timestamps the leader
	// persists its limit.
	TSOWindow time.Duration
	// IDBatch is how many IDs the leader reserves in etcd at a time.
	IDBatch uint64
	// Schedule tunes the schedulers (MaxReplicas, MaxStoreDownTime, ...).
	Schedule schedule.Config
	// EtcdLogLevel is the embedded etcd's log level (default "warn").
	EtcdLogLevel string
	// EtcdTick and EtcdElection are etcd's heartbeat interval and election
	// timeout (defaults 100ms and 1s).
	EtcdTick     time.Duration
	EtcdElection time.Duration
	// Logger receives PD's own logs (slog.Default if nil).
	Logger *slog.Logger
	// Security, when it names a CA, certificate and key, makes the client
	// port (PD's gRPC and etcd's client API) and the peer port mutual TLS
	// (tls.go).
	Security security.Paths
}

func (c *Config) fill() {
	if c.LeaderLease <= 0 {
		c.LeaderLease = 3 * time.Second
	}
	if c.TSOWindow <= 0 {
		c.TSOWindow = 3 * time.Second
	}
	if c.IDBatch == 0 {
		c.IDBatch = 1000
	}
	if c.EtcdLogLevel == "" {
		c.EtcdLogLevel = "warn"
	}
	if c.EtcdTick <= 0 {
		c.EtcdTick = 100 * time.Millisecond
	}
	if c.EtcdElection <= 0 {
		c.EtcdElection = time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// advertised returns the parsed advertise URLs (the listen URLs when
// unset); call after validate succeeded.
func (c *Config) advertised(client, peer *url.URL) (advClient, advPeer *url.URL, err error) {
	advClient, advPeer = client, peer
	if c.AdvertiseClientURL != "" {
		if advClient, err = ParseURL(c.AdvertiseClientURL); err != nil {
			return nil, nil, fmt.Errorf("advertise client url: %w", err)
		}
	}
	if c.AdvertisePeerURL != "" {
		if advPeer, err = ParseURL(c.AdvertisePeerURL); err != nil {
			return nil, nil, fmt.Errorf("advertise peer url: %w", err)
		}
	}
	return advClient, advPeer, nil
}

// validate checks the config and returns the parsed URLs.
func (c *Config) validate() (client, peer *url.URL, err error) {
	var errs []error
	if c.Name == "" {
		errs = append(errs, errors.New("name must not be empty"))
	}
	if c.DataDir == "" {
		errs = append(errs, errors.New("data dir must not be empty"))
	}
	if client, err = ParseURL(c.ClientURL); err != nil {
		errs = append(errs, fmt.Errorf("client url: %w", err))
	}
	if peer, err = ParseURL(c.PeerURL); err != nil {
		errs = append(errs, fmt.Errorf("peer url: %w", err))
	}
	if c.InitialCluster != "" {
		found := false
		for _, part := range strings.Split(c.InitialCluster, ",") {
			name, u, ok := strings.Cut(part, "=")
			if !ok || name == "" {
				errs = append(errs, fmt.Errorf("initial cluster entry %q is not name=url", part))
				continue
			}
			if _, err := ParseURL(u); err != nil {
				errs = append(errs, fmt.Errorf("initial cluster entry %q: %w", part, err))
			}
			found = found || name == c.Name
		}
		if !found {
			errs = append(errs, fmt.Errorf("initial cluster does not name this member %q", c.Name))
		}
	}
	if c.LeaderLease < 2*time.Second {
		errs = append(errs, fmt.Errorf("leader lease %s is below etcd's 2s minimum", c.LeaderLease))
	}
	return client, peer, errors.Join(errs...)
}

// ParseURL accepts "host:port" or "http://host:port" and returns an http
// URL with an explicit port.
func ParseURL(s string) (*url.URL, error) {
	if s == "" {
		return nil, errors.New("empty url")
	}
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "http" {
		return nil, fmt.Errorf("%s: only http (plain) urls are supported", s)
	}
	if _, _, err := net.SplitHostPort(u.Host); err != nil {
		return nil, fmt.Errorf("%s: %w", s, err)
	}
	return &url.URL{Scheme: "http", Host: u.Host}, nil
}

// normalizeInitialCluster puts every URL of a name=url,... list in
// http://host:port form, as etcd wants it.
func normalizeInitialCluster(s string) string {
	parts := strings.Split(s, ",")
	for i, part := range parts {
		name, u, _ := strings.Cut(part, "=")
		if pu, err := ParseURL(u); err == nil {
			parts[i] = name + "=" + pu.String()
		}
	}
	return strings.Join(parts, ",")
}

package config

import (
	"errors"
	"fmt"
	"strings"
)

// Playground is the configuration of `shoal playground`: a local cluster
// on 127.0.0.1 behind HAProxy.
type Playground struct {
	// PD, Store and SQL are the numbers of processes of each role.
	PD    int `toml:"pd"`
	Store int `toml:"store"`
	SQL   int `toml:"sql"`
	// BasePort is HAProxy's port; SQL nodes listen on the next ports, the
	// other processes above them (see playground.Layout).
	BasePort int `toml:"base-port"`
	// DataDir holds a data directory and log file per process.
	DataDir string `toml:"data-dir"`
	// Clean removes DataDir when the playground stops.
	Clean bool `toml:"clean"`
	// HAProxy is the haproxy binary; empty finds it in PATH or /usr/sbin.
	HAProxy string `toml:"haproxy"`
	// RegionSplitSize is the stores' split size (e.g. "96MiB"; small in
	// tests).
	RegionSplitSize string `toml:"region-split-size"`
	// LogLevel of every process.
	LogLevel string `toml:"log-level"`
	// Security.BackupDirs is given to every SQL node.
	Security Security `toml:"security"`
	// TLS: generate a CA and certificate into DataDir; every process
	// then talks mutual TLS and SQL nodes offer TLS to clients.
	TLS bool `toml:"tls"`
}

// DefaultPlayground returns the default playground: 3 PD, 3 stores, 2 SQL
// nodes, HAProxy on 4000.
func DefaultPlayground() Playground {
	return Playground{
		PD:              3,
		Store:           3,
		SQL:             2,
		BasePort:        4000,
		DataDir:         "./shoal-playground",
		RegionSplitSize: "96MiB",
		LogLevel:        "info",
	}
}

// LoadFile decodes a TOML file on top of p; unknown keys are an error.
func (p *Playground) LoadFile(path string) error { return loadTOML(path, p) }

// Validate checks what can be checked without touching the system (the
// playground package checks counts against its port layout).
func (p *Playground) Validate() error {
	var errs []error
	if p.PD < 1 || p.Store < 1 || p.SQL < 1 {
		errs = append(errs, fmt.Errorf("pd, store and sql must each be at least 1 (got %d, %d, %d)", p.PD, p.Store, p.SQL))
	}
	if err := p.Security.Validate(); err != nil {
		errs = append(errs, err)
	}
	if p.DataDir == "" {
		errs = append(errs, errors.New("data-dir must not be empty"))
	}
	if _, err := ParseSize(p.RegionSplitSize); err != nil {
		errs = append(errs, fmt.Errorf("region-split-size: %w", err))
	}
	switch strings.ToLower(p.LogLevel) {
	case "debug", "info", "warn", "warning", "error":
	default:
		errs = append(errs, fmt.Errorf("log-level %q is not one of debug, info, warn, error", p.LogLevel))
	}
	return errors.Join(errs...)
}

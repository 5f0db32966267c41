// Package config holds the configuration of a shoal process: defaults, a
// TOML file, and validation. Command-line flags are applied on top by
// cmd/shoal (flags override the file, the file overrides defaults).
package config

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// Config is the configuration of `shoal server`.
type Config struct {
	// Host is the address the MySQL protocol listener binds to.
	Host string `toml:"host"`
	// Port is the MySQL protocol port.
	Port int `toml:"port"`
	// StatusHost is the address of the status HTTP server; empty means
	// 127.0.0.1 (it stays local unless configured otherwise).
	StatusHost string `toml:"status-host"`
	// StatusPort is the port of the status HTTP server (/status, /metrics,
	// /debug/pprof when enabled). 0 disables it.
	StatusPort int `toml:"status-port"`
	// EnablePprof serves /debug/pprof on the status port (off: profiles
	// and the command line are not for anyone who can reach the port).
	// [status.enable-pprof]
	EnablePprof bool `toml:"enable-pprof"`
	// DataDir holds all data of the embedded store.
	DataDir string `toml:"data-dir"`
	// LogLevel is one of debug, info, warn, error.
	LogLevel string `toml:"log-level"`
	// RootPassword is the password of the root user; empty by default.
	// SHOAL_ROOT_PASSWORD overrides it; there is no flag (a command line
	// is visible to every user of the machine).
	RootPassword string `toml:"root-password"`
	// InsecureAllowEmptyRootPassword lets the server listen on a
	// non-loopback address while root has no password.
	InsecureAllowEmptyRootPassword bool `toml:"insecure-allow-empty-root-password"`
	// InitFile is a file of SQL statements run as root once at every start,
	// before clients are served (MySQL's --init-file).
	InitFile string `toml:"init-file"`
	// Security: the MySQL protocol's TLS files; without them a CA and
	// server certificate are generated into DataDir at first start.
	Security Security `toml:"security"`
	// GCLifeTime is how long old row versions are kept before MVCC garbage
	// collection may remove them (a Go duration, e.g. "10m"); reads older
	// than this fail with error 9006.
	GCLifeTime string `toml:"gc-life-time"`
}

// Default returns the default configuration.
func Default() Config {
	return Config{
		Host:       "127.0.0.1",
		Port:       4000,
		StatusPort: 10080,
		DataDir:    "./shoal-data",
		LogLevel:   "info",
		GCLifeTime: "10m",
	}
}

// LoadFile decodes a TOML file on top of c. Unknown keys are an error, so a
// typo in a config file does not go unnoticed.
func (c *Config) LoadFile(path string) error { return loadTOML(path, c) }

// loadTOML decodes the TOML file at path into into (on top of what it
// holds); unknown keys are an error. Every command's config loads so.
func loadTOML(path string, into any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(into)
	if err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		keys := make([]string, len(und))
		for i, k := range und {
			keys[i] = k.String()
		}
		return fmt.Errorf("config %s: unknown keys: %s", path, strings.Join(keys, ", "))
	}
	return nil
}

// Validate checks values that can be checked without touching the system.
func (c *Config) Validate() error {
	var errs []error
	if c.Host == "" {
		errs = append(errs, errors.New("host must not be empty"))
	}
	if c.Port < 0 || c.Port > 65535 {
		errs = append(errs, fmt.Errorf("port %d out of range 0..65535", c.Port))
	}
	if d, err := time.ParseDuration(c.GCLifeTime); err != nil || d < time.Minute {
		errs = append(errs, fmt.Errorf("gc-life-time %q must be a duration of at least 1m", c.GCLifeTime))
	}
	if c.StatusPort < 0 || c.StatusPort > 65535 {
		errs = append(errs, fmt.Errorf("status-port %d out of range 0..65535", c.StatusPort))
	}
	if c.StatusPort != 0 && c.StatusPort == c.Port && c.StatusAddr() == c.Addr() {
		errs = append(errs, fmt.Errorf("status-port and port are both %d", c.Port))
	}
	if c.DataDir == "" {
		errs = append(errs, errors.New("data-dir must not be empty"))
	}
	if err := c.Security.Validate(); err != nil {
		errs = append(errs, err)
	}
	switch strings.ToLower(c.LogLevel) {
	case "debug", "info", "warn", "warning", "error":
	default:
		errs = append(errs, fmt.Errorf("log-level %q is not one of debug, info, warn, error", c.LogLevel))
	}
	return errors.Join(errs...)
}

// Addr is the MySQL listen address, host:port.
func (c *Config) Addr() string { return net.JoinHostPort(c.Host, strconv.Itoa(c.Port)) }

// StatusAddr is the status HTTP listen address, host:port.
func (c *Config) StatusAddr() string {
	h := c.StatusHost
	if h == "" {
		h = "127.0.0.1"
	}
	return net.JoinHostPort(h, strconv.Itoa(c.StatusPort))
}

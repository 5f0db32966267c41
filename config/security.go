package config

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/shoaldb/shoal/security"
)

// Security is the [security] section every role takes (TiDB's names). For
// `shoal server` and `shoal sql` the files are the MySQL protocol's TLS
// identity (without them `shoal server` generates its own into the data
// directory); for a cluster, all three make every gRPC link (PD, stores,
// SQL nodes) mutual TLS.
type Security struct {
	// SSLCA is the PEM file of the CA that signs the certificates of
	// peers (and of clients that present one). [security.ssl-ca]
	SSLCA string `toml:"ssl-ca"`
	// SSLCert and SSLKey are this process's certificate and private key.
	// [security.ssl-cert, security.ssl-key]
	SSLCert string `toml:"ssl-cert"`
	SSLKey  string `toml:"ssl-key"`
	// BackupDirs are the directories BACKUP DATABASE ... TO 'local://...'
	// and RESTORE DATABASE ... FROM may use, at or below (absolute paths;
	// symlinks resolved). Empty by default: every BACKUP and RESTORE is
	// refused until the operator allows a directory, since the statement
	// names a path the server process reads or writes with its own rights.
	// [security.backup-dirs]
	BackupDirs []string `toml:"backup-dirs"`
}

// Paths returns the files as security.Paths.
func (s Security) Paths() security.Paths {
	return security.Paths{CA: s.SSLCA, Cert: s.SSLCert, Key: s.SSLKey}
}

// ClusterTLS reports whether the section names everything mutual TLS
// between cluster processes needs.
func (s Security) ClusterTLS() bool { return s.SSLCA != "" && s.SSLCert != "" && s.SSLKey != "" }

// Validate checks that certificate and key come together and the files
// exist.
func (s Security) Validate() error {
	if err := s.Paths().Validate(); err != nil {
		return err
	}
	var errs []error
	for _, f := range []struct{ key, path string }{{"ssl-ca", s.SSLCA}, {"ssl-cert", s.SSLCert}, {"ssl-key", s.SSLKey}} {
		if f.path == "" {
			continue
		}
		if _, err := os.Stat(f.path); err != nil {
			errs = append(errs, fmt.Errorf("security.%s: %w", f.key, err))
		}
	}
	for _, d := range s.BackupDirs {
		if d == "" || !filepath.IsAbs(d) {
			errs = append(errs, fmt.Errorf("security.backup-dirs: %q is not an absolute path", d))
		}
	}
	return errors.Join(errs...)
}

// RootPasswordEnv is the environment variable that sets the root password
// (overriding the config file's root-password), so that it never appears
// on a command line (ps, /proc/<pid>/cmdline).
const RootPasswordEnv = "SHOAL_ROOT_PASSWORD"

// RootPasswordFromEnv returns the root password from SHOAL_ROOT_PASSWORD,
// or fallback when it is not set.
func RootPasswordFromEnv(fallback string) string {
	if v, ok := os.LookupEnv(RootPasswordEnv); ok {
		return v
	}
	return fallback
}

// IsLoopbackHost reports whether host (a listen address without port) can
// be reached only from this machine: 127.0.0.0/8, ::1 or localhost.
func IsLoopbackHost(host string) bool {
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// CheckRootExposure refuses a listener reachable from other machines while
// root has no password, unless the operator allowed it explicitly.
func CheckRootExposure(host, rootPassword string, allowEmpty bool) error {
	if rootPassword != "" || allowEmpty || IsLoopbackHost(host) {
		return nil
	}
	return fmt.Errorf("refusing to listen on %s with an empty root password: anyone who can reach the port gets full access. "+
		"Set one (%s, or root-password in the config file, or an init-file with ALTER USER), "+
		"or pass --insecure-allow-empty-root-password if this is really wanted", host, RootPasswordEnv)
}

package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"syscall"

	"github.com/shoaldb/shoal/config"
	"github.com/shoaldb/shoal/security"
	"github.com/shoaldb/shoal/session"
	"github.com/shoaldb/shoal/types"
)

// privateUmask makes every file and directory the process creates (Pebble's
// files, etcd's, logs) readable by its owner only.
const privateUmask = 0o077

func setPrivateUmask() { syscall.Umask(privateUmask) }

// securityFlags binds --ssl-ca, --ssl-cert and --ssl-key to the [security]
// section.
func securityFlags(fs *flag.FlagSet, s *config.Security) {
	fs.StringVar(&s.SSLCA, "ssl-ca", s.SSLCA, "PEM file of the CA certificate (security.ssl-ca)")
	fs.StringVar(&s.SSLCert, "ssl-cert", s.SSLCert, "PEM file of this process's certificate (security.ssl-cert)")
	fs.StringVar(&s.SSLKey, "ssl-key", s.SSLKey, "PEM file of this process's private key (security.ssl-key)")
}

// insecureFlag is the explicit opt-in to serving root without a password
// on a non-loopback address.
const insecureFlag = "insecure-allow-empty-root-password"

// ensurePrivateDir creates dir with mode 0700, and narrows an existing
// directory that others can read.
func ensurePrivateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("cannot create data dir: %w", err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if mode := fi.Mode().Perm(); mode&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("cannot restrict data dir %s to its owner: %w", dir, err)
		}
		slog.Warn("data dir was readable by others; restricted it to its owner", "dir", dir, "was", fmt.Sprintf("%04o", mode), "now", "0700")
	}
	return nil
}

// mysqlTLS returns the MySQL protocol's TLS: the [security] files if given,
// else (when autoDir is not empty) a CA and server certificate generated
// into autoDir at first start and reused after. Without either it returns
// nil (no TLS).
func mysqlTLS(sec config.Security, autoDir string, log *slog.Logger) (*tls.Config, session.SSLConfig, error) {
	cfg, p, generated, err := security.MySQLServerIdentity(sec.Paths(), autoDir)
	if err != nil || cfg == nil {
		return nil, session.SSLConfig{}, err
	}
	if generated {
		log.Info("generated a self-signed CA and server certificate for TLS", "ca", p.CA, "cert", p.Cert)
	}
	return cfg, session.SSLConfig{Enabled: true, CA: p.CA, Cert: p.Cert, Key: p.Key}, nil
}

// runInitFile runs the SQL statements of path as root through a normal
// session (MySQL's --init-file), before clients are served. The first
// failing statement stops the start.
func runInitFile(ctx context.Context, b *session.Backend, path string) error {
	sql, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("init-file: %w", err)
	}
	// The file runs inside the process, which is as secure as a transport
	// gets (require_secure_transport does not apply, as to MySQL's socket).
	ctx = session.WithTransport(ctx, session.Transport{Secure: true})
	s, err := b.NewSession(ctx, "root", "localhost", "")
	if err != nil {
		return fmt.Errorf("init-file: %w", err)
	}
	defer s.Close()
	rss, err := s.Execute(ctx, string(sql))
	for _, rs := range rss {
		if rs == nil {
			continue
		}
		var rows []types.Row
		for {
			rows = rows[:0]
			if nerr := rs.Next(ctx, &rows); nerr != nil {
				err = errors.Join(err, nerr)
				break
			}
			if len(rows) == 0 {
				break
			}
		}
		rs.Close()
	}
	if err != nil {
		return fmt.Errorf("init-file %s: %w", path, err)
	}
	return nil
}

// clusterTLS returns the mutual-TLS configurations of a cluster process's
// gRPC links from its [security] section: nil, nil when the section is
// empty; an error when it names some files but not all three.
func clusterTLS(sec config.Security) (server, client *tls.Config, err error) {
	if sec.Paths().IsZero() {
		return nil, nil, nil
	}
	return security.ClusterTLS(sec.Paths())
}

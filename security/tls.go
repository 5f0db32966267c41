package security

import (
	"crypto/tls"
	"errors"
	"fmt"
)

// Validate checks that the paths name a usable identity: a certificate and
// its key together (the CA alone is allowed for a MySQL server only when
// both are given too).
func (p Paths) Validate() error {
	if p.IsZero() {
		return nil
	}
	if p.Cert == "" || p.Key == "" {
		return errors.New("security: ssl-cert and ssl-key must be given together")
	}
	return nil
}

// MySQLServerTLS is the TLS configuration of the MySQL protocol listener:
// this node's certificate; with a CA, clients that present a certificate
// must present one it signed (MySQL's REQUIRE X509 needs that).
func MySQLServerTLS(p Paths) (*tls.Config, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	cert, err := tls.LoadX509KeyPair(p.Cert, p.Key)
	if err != nil {
		return nil, fmt.Errorf("ssl-cert/ssl-key: %w", err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if p.CA != "" {
		pool, err := loadCAPool(p.CA)
		if err != nil {
			return nil, err
		}
		cfg.ClientCAs = pool
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
	}
	return cfg, nil
}

// MySQLServerIdentity returns the MySQL listener's TLS configuration and
// the files it came from: p when it names a certificate; else, when
// autoDir is not empty, a CA and server certificate in autoDir, generated
// there if absent (as MySQL 8's auto_generate_certs); else nil (no TLS).
// generated reports new files.
func MySQLServerIdentity(p Paths, autoDir string) (cfg *tls.Config, used Paths, generated bool, err error) {
	if p.Cert == "" && autoDir != "" {
		if p, generated, err = AutoCerts(autoDir); err != nil {
			return nil, Paths{}, false, fmt.Errorf("cannot generate TLS certificates in %s: %w", autoDir, err)
		}
	}
	if p.Cert == "" {
		return nil, Paths{}, false, nil
	}
	if cfg, err = MySQLServerTLS(p); err != nil {
		return nil, Paths{}, false, err
	}
	return cfg, p.Abs(), generated, nil
}

// ClusterTLS returns the mutual-TLS configurations of a cluster process's
// gRPC links: server requires and verifies a client certificate signed by
// the CA; client presents this node's certificate and verifies the peer's
// against the CA. All three paths are required.
func ClusterTLS(p Paths) (server, client *tls.Config, err error) {
	if p.CA == "" || p.Cert == "" || p.Key == "" {
		return nil, nil, errors.New("security: cluster TLS needs ssl-ca, ssl-cert and ssl-key")
	}
	cert, err := tls.LoadX509KeyPair(p.Cert, p.Key)
	if err != nil {
		return nil, nil, fmt.Errorf("ssl-cert/ssl-key: %w", err)
	}
	pool, err := loadCAPool(p.CA)
	if err != nil {
		return nil, nil, err
	}
	server = &tls.Config{
		Certificates: []tls.Certificate{cert},
		ClientCAs:    pool,
		ClientAuth:   tls.RequireAndVerifyClientCert,
		MinVersion:   tls.VersionTLS12,
	}
	client = &tls.Config{
		Certificates: []tls.Certificate{cert},
		RootCAs:      pool,
		MinVersion:   tls.VersionTLS12,
	}
	return server, client, nil
}

// VersionName is the protocol name MySQL shows in Ssl_version ("TLSv1.3").
func VersionName(v uint16) string {
	switch v {
	case tls.VersionTLS10:
		return "TLSv1"
	case tls.VersionTLS11:
		return "TLSv1.1"
	case tls.VersionTLS12:
		return "TLSv1.2"
	case tls.VersionTLS13:
		return "TLSv1.3"
	}
	return ""
}

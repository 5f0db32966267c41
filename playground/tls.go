package playground

import (
	"crypto/tls"
	"path/filepath"

	"github.com/shoaldb/shoal/security"
)

// tlsDir is where a TLS playground keeps its generated CA and certificate
// (one certificate, valid for 127.0.0.1 as server and client, serves every
// process).
func (c *Cluster) tlsDir() string { return filepath.Join(c.opts.DataDir, "tls") }

// TLSPaths returns the files of a TLS playground (zero without
// Options.TLS).
func (c *Cluster) TLSPaths() security.Paths {
	if !c.opts.TLS {
		return security.Paths{}
	}
	d := c.tlsDir()
	return security.Paths{CA: filepath.Join(d, security.CAFile), Cert: filepath.Join(d, security.ServerCertFile),
		Key: filepath.Join(d, security.ServerKeyFile)}
}

// generateTLS writes a fresh CA and certificate for the playground.
func (c *Cluster) generateTLS() error {
	if !c.opts.TLS {
		return nil
	}
	return security.GenerateCerts(c.tlsDir(), "shoal_playground")
}

// tlsArgs are the flags that give a process the playground's certificates:
// PD, stores and SQL nodes then talk mutual TLS, and SQL nodes offer TLS
// to MySQL clients.
func (c *Cluster) tlsArgs() []string {
	p := c.TLSPaths()
	if p.IsZero() {
		return nil
	}
	return []string{"--ssl-ca", p.CA, "--ssl-cert", p.Cert, "--ssl-key", p.Key}
}

// clientTLS is the playground's own PD client TLS (nil without TLS).
func (c *Cluster) clientTLS() (*tls.Config, error) {
	p := c.TLSPaths()
	if p.IsZero() {
		return nil, nil
	}
	_, client, err := security.ClusterTLS(p)
	return client, err
}

// Package security builds the TLS configurations of shoal: the MySQL
// protocol's server certificate (given, or generated into the data
// directory at first start and reused after, as MySQL 8's auto-generated
// certificates), and mutual TLS for the cluster's gRPC links.
//
// Every key and certificate file this package writes is mode 0600.
package security

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Paths names the PEM files of a TLS identity: the CA that signs peers'
// certificates, this node's certificate and its private key (TiDB's
// [security] ssl-ca, ssl-cert, ssl-key).
type Paths struct {
	CA   string
	Cert string
	Key  string
}

// IsZero reports that no file is named.
func (p Paths) IsZero() bool { return p.CA == "" && p.Cert == "" && p.Key == "" }

// Abs returns p with every named file made absolute (as SQL shows them in
// ssl_ca, ssl_cert, ssl_key); a path that cannot be made absolute stays.
func (p Paths) Abs() Paths {
	abs := func(f string) string {
		if f == "" {
			return ""
		}
		if a, err := filepath.Abs(f); err == nil {
			return a
		}
		return f
	}
	return Paths{CA: abs(p.CA), Cert: abs(p.Cert), Key: abs(p.Key)}
}

// File names of generated certificates, as MySQL 8 names its
// auto-generated ones.
const (
	CAFile         = "ca.pem"
	CAKeyFile      = "ca-key.pem"
	ServerCertFile = "server-cert.pem"
	ServerKeyFile  = "server-key.pem"
)

// certValidity is how long generated certificates are valid (MySQL's
// auto-generated ones: ten years).
const certValidity = 10 * 365 * 24 * time.Hour

// AutoCerts returns the certificate files in dir, generating a self-signed
// CA and a server certificate signed by it when they are not all there yet.
// generated reports whether it wrote new files.
func AutoCerts(dir string) (p Paths, generated bool, err error) {
	p = Paths{CA: filepath.Join(dir, CAFile), Cert: filepath.Join(dir, ServerCertFile), Key: filepath.Join(dir, ServerKeyFile)}
	have := 0
	for _, f := range []string{p.CA, p.Cert, p.Key} {
		if _, err := os.Stat(f); err == nil {
			have++
		}
	}
	if have == 3 {
		return p, false, nil
	}
	if err := GenerateCerts(dir, "shoal_auto_generated"); err != nil {
		return Paths{}, false, err
	}
	return p, true, nil
}

// GenerateCerts writes a new CA (ca.pem, ca-key.pem) and a certificate
// signed by it (server-cert.pem, server-key.pem) into dir, replacing any
// there. The certificate is valid for localhost, 127.0.0.1 and ::1, both as
// a server and as a client, so one set serves every process of a local
// cluster for mutual TLS.
func GenerateCerts(dir, commonName string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := time.Now().Add(-time.Hour) // tolerate a little clock skew
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: commonName + "_CA_Certificate"},
		NotBefore:             now,
		NotAfter:              now.Add(certValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: commonName + "_Server_Certificate"},
		NotBefore:    now,
		NotAfter:     now.Add(certValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return err
	}
	caKeyDER, err := x509.MarshalPKCS8PrivateKey(caKey)
	if err != nil {
		return err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	// The certificate files go last, so an interrupted run leaves no
	// complete-looking set behind for AutoCerts to reuse.
	for _, f := range []struct {
		name, typ string
		der       []byte
	}{
		{CAKeyFile, "PRIVATE KEY", caKeyDER},
		{ServerKeyFile, "PRIVATE KEY", keyDER},
		{CAFile, "CERTIFICATE", caDER},
		{ServerCertFile, "CERTIFICATE", der},
	} {
		if err := writePEM(filepath.Join(dir, f.name), f.typ, f.der); err != nil {
			return err
		}
	}
	return nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err)
	}
	return n
}

// writePEM writes one PEM block to path with mode 0600 (also when the file
// existed with a wider mode).
func writePEM(path, typ string, der []byte) error {
	data := pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// loadCAPool reads a PEM file of CA certificates.
func loadCAPool(path string) (*x509.CertPool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("ssl-ca: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, errors.New("ssl-ca " + path + ": no PEM certificate in it")
	}
	return pool, nil
}

package security

import (
	"bytes"
	"crypto/tls"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestAutoCertsGeneratesOnceThenReuses(t *testing.T) {
	dir := t.TempDir()
	p, generated, err := AutoCerts(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !generated {
		t.Fatal("first AutoCerts did not generate")
	}
	for _, f := range []string{p.CA, p.Cert, p.Key, filepath.Join(dir, CAKeyFile)} {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if mode := fi.Mode().Perm(); mode != 0o600 {
			t.Errorf("%s has mode %o, want 600", f, mode)
		}
	}
	before, _ := os.ReadFile(p.Cert)
	p2, generated, err := AutoCerts(dir)
	if err != nil {
		t.Fatal(err)
	}
	if generated || p2 != p {
		t.Fatalf("second AutoCerts: generated=%v paths=%+v, want reuse of %+v", generated, p2, p)
	}
	after, _ := os.ReadFile(p.Cert)
	if !bytes.Equal(before, after) {
		t.Fatal("second AutoCerts rewrote the certificate")
	}
}

func TestAutoCertsRegeneratesIncompleteSet(t *testing.T) {
	dir := t.TempDir()
	p, _, err := AutoCerts(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(p.Key); err != nil {
		t.Fatal(err)
	}
	if _, generated, err := AutoCerts(dir); err != nil || !generated {
		t.Fatalf("AutoCerts with a missing key: generated=%v err=%v", generated, err)
	}
	if _, err := MySQLServerTLS(p); err != nil {
		t.Fatalf("regenerated set does not load: %v", err)
	}
}

// TestClusterTLSMutualHandshake: two processes holding the generated set
// complete a mutual TLS handshake, and a client without a certificate is
// refused.
func TestClusterTLSMutualHandshake(t *testing.T) {
	dir := t.TempDir()
	if err := GenerateCerts(dir, "test"); err != nil {
		t.Fatal(err)
	}
	p := Paths{CA: filepath.Join(dir, CAFile), Cert: filepath.Join(dir, ServerCertFile), Key: filepath.Join(dir, ServerKeyFile)}
	srvCfg, cliCfg, err := ClusterTLS(p)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", srvCfg)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.SetDeadline(time.Now().Add(10 * time.Second))
			_ = c.(*tls.Conn).Handshake()
			c.Write([]byte("x"))
			c.Close()
		}
	}()
	dial := func(cfg *tls.Config) error {
		c, err := tls.Dial("tcp", ln.Addr().String(), cfg)
		if err != nil {
			return err
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		var b [1]byte
		_, err = c.Read(b[:])
		return err
	}
	if err := dial(cliCfg); err != nil {
		t.Fatalf("mutual TLS dial: %v", err)
	}
	noCert := cliCfg.Clone()
	noCert.Certificates = nil
	if err := dial(noCert); err == nil {
		t.Fatal("a client without a certificate was accepted")
	}
	if _, _, err := ClusterTLS(Paths{Cert: p.Cert, Key: p.Key}); err == nil {
		t.Fatal("ClusterTLS without a CA did not fail")
	}
}

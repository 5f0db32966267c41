package acceptance

import (
	"crypto/tls"
	"path/filepath"
	"testing"
	"time"

	"github.com/shoaldb/shoal/security"
	"github.com/shoaldb/shoal/tests/testserver"
)

// TestPlaygroundTLS: `shoal playground --tls` runs PD, a store and a SQL
// node with mutual TLS between them (a transaction needs PD and the store
// over gRPC), the SQL node offers TLS to clients through HAProxy, and a
// client that presents no certificate is refused by PD and the store.
func TestPlaygroundTLS(t *testing.T) {
	if target != "shoal" {
		t.Skip("runs shoal's own playground")
	}
	requireTool(t, "haproxy")
	dir := t.TempDir()
	pg, err := testserver.StartPlayground(testserver.PlaygroundOptions{
		Bin: shoalBin, PD: 1, Store: 1, SQL: 1, TLS: true,
		DataDir: filepath.Join(dir, "pg"), LogPath: filepath.Join(dir, "playground.log"),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := pg.Stop(90 * time.Second); err != nil {
			t.Errorf("playground stop: %v\n%s", err, pg.LogTail(3000))
		}
		if t.Failed() {
			for _, n := range []string{"pd-1", "store-1", "sql-1"} {
				t.Logf("%s log tail:\n%s", n, pg.ProcessLogTail(n, 1500))
			}
		}
	})
	db := openWith(t, pg.Server, "skip-verify")
	mustExec(t, db, "CREATE DATABASE tlsdb")
	mustExec(t, db, "CREATE TABLE tlsdb.t (id INT PRIMARY KEY, v INT)")
	mustExec(t, db, "INSERT INTO tlsdb.t VALUES (1, 10), (2, 20)")
	var sum int
	if err := db.QueryRow("SELECT SUM(v) FROM tlsdb.t").Scan(&sum); err != nil || sum != 30 {
		t.Fatalf("SUM over the TLS cluster: %d %v", sum, err)
	}
	if v := statusValue(t, db, "Ssl_cipher"); v == "" {
		t.Fatal("Ssl_cipher empty through HAProxy")
	}

	// PD's client port and the store's gRPC port want a client
	// certificate signed by the playground's CA.
	ca := filepath.Join(pg.DataDir, "tls", security.CAFile)
	_, clientTLS, err := security.ClusterTLS(security.Paths{CA: ca,
		Cert: filepath.Join(pg.DataDir, "tls", security.ServerCertFile), Key: filepath.Join(pg.DataDir, "tls", security.ServerKeyFile)})
	if err != nil {
		t.Fatal(err)
	}
	noCert := clientTLS.Clone()
	noCert.Certificates = nil
	for _, addr := range []string{pg.Layout.PD[0].Client, pg.Layout.Store[0].GRPC} {
		if err := tlsRoundTrip(addr, clientTLS); err != nil {
			t.Errorf("%s with the cluster certificate: %v", addr, err)
		}
		if err := tlsRoundTrip(addr, noCert); err == nil {
			t.Errorf("%s accepted a TLS client without a certificate", addr)
		}
	}
}

// tlsRoundTrip completes a TLS handshake with addr and waits for the
// server's verdict on the client certificate (TLS 1.3 reports it on the
// first read).
func tlsRoundTrip(addr string, cfg *tls.Config) error {
	cfg = cfg.Clone()
	cfg.NextProtos = []string{"h2"}
	c, err := tls.Dial("tcp", addr, cfg)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	// An HTTP/2 client preface; a server that accepted the certificate
	// answers with its SETTINGS frame.
	if _, err := c.Write([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00")); err != nil {
		return err
	}
	var b [9]byte
	_, err = c.Read(b[:])
	return err
}

package server_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/shoaldb/shoal/pd/pdclient"
	"github.com/shoaldb/shoal/pd/server"
	"github.com/shoaldb/shoal/pd/server/pdtest"
	"github.com/shoaldb/shoal/security"
)

// TestMutualTLSCluster: three PD members whose client and peer ports are
// mutual TLS elect a leader (peers talk TLS) and serve a PD client that
// presents the cluster's certificate; a plain client gets nowhere.
func TestMutualTLSCluster(t *testing.T) {
	dir := t.TempDir()
	if err := security.GenerateCerts(dir, "pdtest"); err != nil {
		t.Fatal(err)
	}
	paths := security.Paths{CA: filepath.Join(dir, security.CAFile), Cert: filepath.Join(dir, security.ServerCertFile),
		Key: filepath.Join(dir, security.ServerKeyFile)}
	c := pdtest.Start(t, 3, func(i int, cfg *server.Config) { cfg.Security = paths })
	defer c.Close()
	c.WaitLeader(20 * time.Second)

	_, clientTLS, err := security.ClusterTLS(paths)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cli, err := pdclient.New(ctx, c.Addrs(), pdclient.Options{TLS: clientTLS})
	if err != nil {
		t.Fatalf("TLS client: %v", err)
	}
	defer cli.Close()
	if _, err := cli.GetTS(ctx); err != nil {
		t.Fatalf("GetTS over TLS: %v", err)
	}

	pctx, pcancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer pcancel()
	plain, err := pdclient.New(pctx, c.Addrs(), pdclient.Options{RetryTimeout: 2 * time.Second, RequestTimeout: time.Second})
	if err == nil {
		_, err = plain.GetTS(pctx)
		plain.Close()
	}
	if err == nil {
		t.Fatal("a plain client reached a TLS-only PD")
	}
}

package session_test

import (
	"context"
	"errors"
	"testing"

	"github.com/shoaldb/shoal/embedded"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/session"
	"github.com/shoaldb/shoal/types"
)

func openTransportBackend(t *testing.T, cfg session.Config) *session.Backend {
	t.Helper()
	store, err := embedded.Open(t.TempDir(), embedded.Options{NoSync: true, BlockCacheSize: 8 << 20, MemTableSize: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	b, err := session.NewBackend(store, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// queryPairs runs a two-column query and returns its rows as a map.
func queryPairs(t *testing.T, s session.Conn, sql string) map[string]string {
	t.Helper()
	ctx := context.Background()
	rss, err := s.Execute(ctx, sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	out := map[string]string{}
	for _, rs := range rss {
		var rows []types.Row
		for {
			rows = rows[:0]
			if err := rs.Next(ctx, &rows); err != nil {
				t.Fatal(err)
			}
			if len(rows) == 0 {
				break
			}
			for _, r := range rows {
				out[r[0].String()] = r[1].String()
			}
		}
		rs.Close()
	}
	return out
}

func TestSslStatusFollowsTransport(t *testing.T) {
	b := openTransportBackend(t, session.Config{})
	tls := session.WithTransport(context.Background(), session.Transport{Secure: true, Cipher: "TLS_AES_128_GCM_SHA256", Version: "TLSv1.3"})
	s, err := b.NewSession(tls, "root", "127.0.0.1", "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got := queryPairs(t, s, "SHOW STATUS LIKE 'Ssl%'")
	if got["Ssl_cipher"] != "TLS_AES_128_GCM_SHA256" || got["Ssl_version"] != "TLSv1.3" {
		t.Fatalf("SHOW STATUS over TLS: %v", got)
	}
	got = queryPairs(t, s, "SHOW SESSION STATUS LIKE 'Ssl_cipher'")
	if got["Ssl_cipher"] != "TLS_AES_128_GCM_SHA256" {
		t.Fatalf("SHOW SESSION STATUS: %v", got)
	}
	if got := queryPairs(t, s, "SHOW GLOBAL STATUS LIKE 'Ssl_cipher'"); got["Ssl_cipher"] != "" {
		t.Fatalf("SHOW GLOBAL STATUS: %v", got)
	}
	plain, err := b.NewSession(context.Background(), "root", "127.0.0.1", "")
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if got := queryPairs(t, plain, "SHOW STATUS LIKE 'Ssl_cipher'"); got["Ssl_cipher"] != "" {
		t.Fatalf("plain session: %v", got)
	}
}

func TestRequireSecureTransport(t *testing.T) {
	b := openTransportBackend(t, session.Config{SSL: session.SSLConfig{Enabled: true}})
	tlsCtx := session.WithTransport(context.Background(), session.Transport{Secure: true, Cipher: "x", Version: "TLSv1.3"})
	admin, err := b.NewSession(tlsCtx, "root", "127.0.0.1", "")
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.Execute(context.Background(), "SET GLOBAL require_secure_transport = ON"); err != nil {
		t.Fatal(err)
	}
	_, err = b.NewSession(context.Background(), "root", "127.0.0.1", "")
	var se *errno.SQLError
	if !errors.As(err, &se) || se.Code != 3159 || se.State != "HY000" ||
		se.Message != "Connections using insecure transport are prohibited while --require_secure_transport=ON." {
		t.Fatalf("plain login with require_secure_transport=ON: %v", err)
	}
	s, err := b.NewSession(tlsCtx, "root", "127.0.0.1", "")
	if err != nil {
		t.Fatalf("TLS login with require_secure_transport=ON: %v", err)
	}
	s.Close()
	if _, err := admin.Execute(context.Background(), "SET GLOBAL require_secure_transport = OFF"); err != nil {
		t.Fatal(err)
	}
	s, err = b.NewSession(context.Background(), "root", "127.0.0.1", "")
	if err != nil {
		t.Fatalf("plain login after OFF: %v", err)
	}
	s.Close()
}

func TestSslVariablesShowConfig(t *testing.T) {
	b := openTransportBackend(t, session.Config{SSL: session.SSLConfig{Enabled: true, CA: "/d/ca.pem", Cert: "/d/server-cert.pem", Key: "/d/server-key.pem"}})
	s, err := b.NewSession(context.Background(), "root", "127.0.0.1", "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got := queryPairs(t, s, "SHOW VARIABLES LIKE '%ssl%'")
	want := map[string]string{"have_ssl": "YES", "have_openssl": "YES", "ssl_ca": "/d/ca.pem", "ssl_cert": "/d/server-cert.pem", "ssl_key": "/d/server-key.pem"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
}

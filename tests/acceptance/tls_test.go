package acceptance

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/shoaldb/shoal/tests/testserver"
)

// startShoalIn starts shoal server with its data directory in dir.
func startShoalIn(t *testing.T, dir string, o testserver.ShoalOptions) *testserver.Server {
	t.Helper()
	o.Bin, o.DataDir, o.LogPath = shoalBin, filepath.Join(dir, "data"), filepath.Join(dir, "shoal.log")
	s, err := testserver.StartShoal(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(60 * time.Second); err != nil {
			t.Errorf("shoal did not stop cleanly: %v\n%s", err, s.LogTail(4096))
		}
	})
	return s
}

// openWith opens root@s with extra DSN settings.
func openWith(t *testing.T, s *testserver.Server, tlsName string) *sql.DB {
	t.Helper()
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = "root", s.Password, "tcp", s.Addr()
	cfg.Timeout = 10 * time.Second
	cfg.TLSConfig = tlsName
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func statusValue(t *testing.T, db *sql.DB, name string) string {
	t.Helper()
	var n, v string
	if err := db.QueryRow("SHOW STATUS LIKE '"+name+"'").Scan(&n, &v); err != nil {
		t.Fatalf("SHOW STATUS LIKE '%s': %v", name, err)
	}
	return v
}

// TestTLSClients: shoal server generates a CA and server certificate into
// its data directory (0700, files 0600) and reuses them after a restart;
// go-sql-driver (skip-verify and verifying against the generated CA) and
// the mysql CLI connect over TLS; require_secure_transport=ON refuses a
// plain login with 3159; pprof is off by default.
func TestTLSClients(t *testing.T) {
	needShoal(t)
	dir := t.TempDir()
	s := startShoalIn(t, dir, testserver.ShoalOptions{})

	if fi, err := os.Stat(s.DataDir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("data dir mode: %v %v", fi.Mode(), err)
	}
	caPath := filepath.Join(s.DataDir, "ca.pem")
	for _, f := range []string{"ca.pem", "server-cert.pem", "server-key.pem"} {
		fi, err := os.Stat(filepath.Join(s.DataDir, f))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v %v", f, fi, err)
		}
	}
	// Everything the server wrote (Pebble's files too: umask 077) is its
	// owner's alone.
	filepath.WalkDir(s.DataDir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if fi, err := d.Info(); err == nil && fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s has mode %o", path, fi.Mode().Perm())
		}
		return nil
	})
	caPEM, err := os.ReadFile(caPath)
	if err != nil {
		t.Fatal(err)
	}

	secure := openWith(t, s, "skip-verify")
	if v := statusValue(t, secure, "Ssl_cipher"); v == "" {
		t.Fatal("Ssl_cipher is empty over TLS")
	}
	if v := statusValue(t, secure, "Ssl_version"); !strings.HasPrefix(v, "TLSv1.") {
		t.Fatalf("Ssl_version over TLS: %q", v)
	}
	var haveSSL, sslCA string
	if err := secure.QueryRow("SELECT @@have_ssl, @@ssl_ca").Scan(&haveSSL, &sslCA); err != nil || haveSSL != "YES" || sslCA != caPath {
		t.Fatalf("have_ssl=%q ssl_ca=%q (%v), want YES %s", haveSSL, sslCA, err, caPath)
	}
	plain := openWith(t, s, "false")
	if v := statusValue(t, plain, "Ssl_cipher"); v != "" {
		t.Fatalf("Ssl_cipher on a plain connection: %q", v)
	}

	// Verify the server against the generated CA.
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatal("ca.pem holds no certificate")
	}
	if err := mysql.RegisterTLSConfig("shoal-generated-ca", &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}); err != nil {
		t.Fatal(err)
	}
	verified := openWith(t, s, "shoal-generated-ca")
	if v := statusValue(t, verified, "Ssl_cipher"); v == "" {
		t.Fatal("Ssl_cipher empty with a verified certificate")
	}

	if bin, ok := findTool("mysql"); ok {
		out := runCLI(t, bin, s, "--ssl", "--ssl-verify-server-cert=0", "-e", "SHOW STATUS LIKE 'Ssl_cipher'")
		if !strings.Contains(out, "Ssl_cipher\t") || strings.Contains(out, "Ssl_cipher\t\n") {
			t.Fatalf("mysql --ssl: %q", out)
		}
		out = runCLI(t, bin, s, "--ssl-ca="+caPath, "-e", "SHOW STATUS LIKE 'Ssl_version'")
		if !strings.Contains(out, "Ssl_version\tTLSv1.") {
			t.Fatalf("mysql --ssl-ca: %q", out)
		}
	} else {
		requireTool(t, "mysql")
	}

	// REQUIRE SSL per account: a plain login is denied (1045), a TLS one
	// goes through, and caching_sha2_password's full authentication takes
	// the clear password over TLS (no RSA exchange).
	if _, err := secure.Exec("CREATE USER tlsonly@'%' IDENTIFIED BY 'pw' REQUIRE SSL"); err != nil {
		t.Fatal(err)
	}
	asUser := func(tlsName string) *sql.DB {
		cfg := mysql.NewConfig()
		cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = "tlsonly", "pw", "tcp", s.Addr()
		cfg.Timeout, cfg.TLSConfig = 10*time.Second, tlsName
		db, err := sql.Open("mysql", cfg.FormatDSN())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	if me := sqlErr(asUser("false").Ping()); me == nil || me.Number != 1045 || string(me.SQLState[:]) != "28000" {
		t.Fatalf("plain login of a REQUIRE SSL account: %v, want 1045", me)
	}
	if v := statusValue(t, asUser("skip-verify"), "Ssl_cipher"); v == "" {
		t.Fatal("TLS login of a REQUIRE SSL account: Ssl_cipher empty")
	}

	// require_secure_transport.
	if _, err := secure.Exec("SET GLOBAL require_secure_transport = ON"); err != nil {
		t.Fatal(err)
	}
	refused := openWith(t, s, "false")
	err = refused.Ping()
	me := sqlErr(err)
	if me == nil || me.Number != 3159 || string(me.SQLState[:]) != "HY000" ||
		me.Message != "Connections using insecure transport are prohibited while --require_secure_transport=ON." {
		t.Fatalf("plain login with require_secure_transport=ON: %v", err)
	}
	if bin, ok := findTool("mysql"); ok {
		out, err := runCLIErr(bin, s, "--skip-ssl", "-e", "SELECT 1")
		if err == nil || !strings.Contains(out, "3159") {
			t.Fatalf("mysql --skip-ssl with require_secure_transport=ON: %v %q", err, out)
		}
	}
	fresh := openWith(t, s, "skip-verify")
	if err := fresh.Ping(); err != nil {
		t.Fatalf("TLS login with require_secure_transport=ON: %v", err)
	}
	if _, err := fresh.Exec("SET GLOBAL require_secure_transport = OFF"); err != nil {
		t.Fatal(err)
	}

	for _, p := range []string{"/debug/pprof/", "/debug/pprof/cmdline"} {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d%s", s.StatusPort, p))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Fatalf("GET %s without --enable-pprof: %d, want 404", p, resp.StatusCode)
		}
	}

	// A restart reuses the generated certificates.
	secure.Close()
	plain.Close()
	verified.Close()
	refused.Close()
	fresh.Close()
	if err := s.Stop(60 * time.Second); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(60 * time.Second); err != nil {
		t.Fatal(err)
	}
	again, err := os.ReadFile(caPath)
	if err != nil || !bytes.Equal(again, caPEM) {
		t.Fatalf("ca.pem changed across a restart (%v)", err)
	}
	if v := statusValue(t, openWith(t, s, "shoal-generated-ca"), "Ssl_cipher"); v == "" {
		t.Fatal("Ssl_cipher empty after restart")
	}
}

func findTool(name string) (string, bool) {
	for _, p := range []string{name, "/usr/bin/" + name} {
		if b, err := exec.LookPath(p); err == nil {
			return b, true
		}
	}
	return "", false
}

func runCLIErr(bin string, s *testserver.Server, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	all := append([]string{"--no-defaults", "-h", "127.0.0.1", "-P", strconv.Itoa(s.Port), "-u", "root", "--protocol=TCP", "--batch"}, args...)
	out, err := exec.CommandContext(ctx, bin, all...).CombinedOutput()
	return string(out), err
}

func runCLI(t *testing.T, bin string, s *testserver.Server, args ...string) string {
	t.Helper()
	out, err := runCLIErr(bin, s, args...)
	if err != nil {
		t.Fatalf("mysql %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// TestPprofWhenEnabled: --enable-pprof serves /debug/pprof.
func TestPprofWhenEnabled(t *testing.T) {
	needShoal(t)
	s := startShoalIn(t, t.TempDir(), testserver.ShoalOptions{Args: []string{"--enable-pprof"}})
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/", s.StatusPort))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/debug/pprof/ with --enable-pprof: %d", resp.StatusCode)
	}
}

// TestRootPasswordFromEnvAndInitFile: the root password comes from
// SHOAL_ROOT_PASSWORD (not the command line: /proc/<pid>/cmdline does not
// hold it), and --init-file runs its statements as root at start.
func TestRootPasswordFromEnvAndInitFile(t *testing.T) {
	needShoal(t)
	dir := t.TempDir()
	initFile := filepath.Join(dir, "init.sql")
	os.WriteFile(initFile, []byte("CREATE DATABASE IF NOT EXISTS app;\nCREATE TABLE IF NOT EXISTS app.kv (k INT PRIMARY KEY, v VARCHAR(10));\nREPLACE INTO app.kv VALUES (1, 'init');\n"), 0o600)
	const pass = "s3cret-from-env"
	s := startShoalIn(t, dir, testserver.ShoalOptions{RootPassword: pass, Args: []string{"--init-file", initFile}})
	db := openWith(t, s, "false")
	var v string
	if err := db.QueryRow("SELECT v FROM app.kv WHERE k = 1").Scan(&v); err != nil || v != "init" {
		t.Fatalf("init-file result: %q %v", v, err)
	}
	nopass := mysql.NewConfig()
	nopass.User, nopass.Net, nopass.Addr, nopass.Timeout = "root", "tcp", s.Addr(), 10*time.Second
	wrong, _ := sql.Open("mysql", nopass.FormatDSN())
	defer wrong.Close()
	if me := sqlErr(wrong.Ping()); me == nil || me.Number != 1045 {
		t.Fatalf("login without the password: %v", me)
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", s.PID()))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(cmdline, []byte("server")) || bytes.Contains(cmdline, []byte(pass)) {
		t.Fatalf("server command line: %q", cmdline)
	}
}

// TestServerRefusesExposedEmptyRoot: a non-loopback --host with no root
// password fails at start, with a message naming the way out. Nothing
// listens on the wildcard address: the check runs before the listener.
func TestServerRefusesExposedEmptyRoot(t *testing.T) {
	needShoal(t)
	dir := t.TempDir()
	out, code := runShoal(t, 30*time.Second, "server", "--host", "0.0.0.0", "--port", "0", "--status-port", "0",
		"--data-dir", filepath.Join(dir, "data"))
	if code == 0 || !strings.Contains(out, "empty root password") || !strings.Contains(out, "--insecure-allow-empty-root-password") {
		t.Fatalf("exit %d: %s", code, out)
	}
	if out, code := runShoal(t, 10*time.Second, "server", "--root-password", "x"); code == 0 {
		t.Fatalf("--root-password still accepted: %s", out)
	}
}

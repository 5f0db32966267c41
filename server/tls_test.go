package server

import (
	"bufio"
	"crypto/tls"
	"encoding/binary"
	"net"
	"testing"
	"time"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/security"
)

// testTLSConfig is a server TLS config over freshly generated certificates.
func testTLSConfig(t *testing.T) *tls.Config {
	t.Helper()
	p, _, err := security.AutoCerts(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := security.MySQLServerTLS(p)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// greetingCaps reads the greeting and returns its capability flags.
func greetingCaps(t *testing.T, rc *rawClient) uint32 {
	t.Helper()
	g := rc.mustRead()
	r := newReader(g[1:])
	r.nulString()
	r.uint32()
	r.bytes(8)
	r.byte1()
	lo := r.uint16()
	r.byte1()
	r.uint16()
	hi := r.uint16()
	if !r.ok {
		t.Fatal("short greeting")
	}
	return uint32(lo) | uint32(hi)<<16
}

func TestGreetingOffersSSLOnlyWithTLS(t *testing.T) {
	plain := startServer(t, Config{})
	if caps := greetingCaps(t, dialRaw(t, plain.addr)); caps&mysql.ClientSSL != 0 {
		t.Fatal("server without TLS offers CLIENT_SSL")
	}
	secure := startServer(t, Config{TLS: testTLSConfig(t)})
	if caps := greetingCaps(t, dialRaw(t, secure.addr)); caps&mysql.ClientSSL == 0 {
		t.Fatal("server with TLS does not offer CLIENT_SSL")
	}
}

// TestDriverUpgradesToTLS: go-sql-driver sends an SSLRequest, the rest of
// the protocol runs over TLS, and the backend learns the session is secure
// with its cipher and version. A plain login on the same server stays
// plain.
func TestDriverUpgradesToTLS(t *testing.T) {
	env := startServer(t, Config{TLS: testTLSConfig(t)})
	db := env.open(t, "alice:secret", "", "tls=skip-verify")
	var one int
	if err := db.QueryRow("select 1").Scan(&one); err != nil {
		t.Fatal(err)
	}
	tr := env.b.lastSession().transport
	if !tr.Secure || tr.Cipher == "" || tr.Version == "" {
		t.Fatalf("TLS session's transport = %+v", tr)
	}
	plain := env.open(t, "alice:secret", "", "tls=false")
	if err := plain.Ping(); err != nil {
		t.Fatal(err)
	}
	if tr := env.b.lastSession().transport; tr.Secure || tr.Cipher != "" {
		t.Fatalf("plain session's transport = %+v", tr)
	}
}

// TestSSLRequestToPlainServer: a client that asks for TLS where none is
// offered gets ER_HANDSHAKE_ERROR, not a hang.
func TestSSLRequestToPlainServer(t *testing.T) {
	env := startServer(t, Config{})
	rc := dialRaw(t, env.addr)
	rc.seq = 0
	rc.mustRead()
	if err := rc.writePacket(sslRequest(rawCaps | mysql.ClientSSL)); err != nil {
		t.Fatal(err)
	}
	if code := errCode(rc.mustRead()); code != mysql.ErrHandshake {
		t.Fatalf("error %d, want %d", code, mysql.ErrHandshake)
	}
}

func sslRequest(caps uint32) []byte {
	var b []byte
	b = binary.LittleEndian.AppendUint32(b, caps)
	b = binary.LittleEndian.AppendUint32(b, 1<<24)
	b = append(b, 45)
	return append(b, make([]byte, 23)...)
}

// TestSSLRequestPipelinedWithClientHello: the SSLRequest and the TLS
// ClientHello arrive in one segment, so the server's packet reader has
// buffered the start of the TLS handshake; the upgrade must still work,
// and the handshake response then logs in over TLS.
func TestSSLRequestPipelinedWithClientHello(t *testing.T) {
	env := startServer(t, Config{TLS: testTLSConfig(t)})
	nc, err := net.DialTimeout("tcp", env.addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(30 * time.Second))
	rc := &rawClient{tb: t, c: nc, br: bufio.NewReader(nc)}
	rc.mustRead()
	held := &holdFirstWrite{Conn: nc}
	rc.c = held
	if err := rc.writePacket(sslRequest(rawCaps | mysql.ClientSSL)); err != nil {
		t.Fatal(err)
	}
	if len(held.pending) == 0 {
		t.Fatal("SSLRequest was not held back")
	}
	tc := tls.Client(held, &tls.Config{InsecureSkipVerify: true})
	if err := tc.Handshake(); err != nil {
		t.Fatalf("TLS handshake after a pipelined SSLRequest: %v", err)
	}
	// Log in over TLS: the handshake response continues the sequence.
	rc.c, rc.br = tc, bufio.NewReader(tc)
	var b []byte
	b = binary.LittleEndian.AppendUint32(b, rawCaps|mysql.ClientSSL)
	b = binary.LittleEndian.AppendUint32(b, 1<<24)
	b = append(b, 45)
	b = append(b, make([]byte, 23)...)
	b = append(b, "root"...)
	b = append(b, 0, 0, 0) // user NUL, empty auth (lenenc 0), no database
	b = append(b, mysql.AuthNativePassword...)
	b = append(b, 0)
	if err := rc.writePacket(b); err != nil {
		t.Fatal(err)
	}
	if resp := rc.mustRead(); resp[0] != 0 {
		t.Fatalf("login over TLS: %q", resp)
	}
	if tr := env.b.lastSession().transport; !tr.Secure {
		t.Fatalf("transport = %+v", tr)
	}
}

// holdFirstWrite delays its first Write and sends it together with the
// second, in one system call.
type holdFirstWrite struct {
	net.Conn
	pending []byte
	writes  int
}

func (h *holdFirstWrite) Write(p []byte) (int, error) {
	h.writes++
	if h.writes == 1 {
		h.pending = append([]byte(nil), p...)
		return len(p), nil
	}
	if h.writes == 2 {
		if _, err := h.Conn.Write(append(h.pending, p...)); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return h.Conn.Write(p)
}

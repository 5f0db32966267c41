package server

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pingcap/tidb/pkg/parser/mysql"
)

// limitBackend is a fakeBackend with max_connections and one account
// ("root") that holds CONNECTION_ADMIN.
type limitBackend struct {
	*fakeBackend
	max int
}

func (b *limitBackend) MaxConnections() int { return b.max }
func (b *limitBackend) HasConnectionAdmin(user, _ string) bool {
	return user == "root"
}

// serveBackend starts a server over b on a loopback listener.
func serveBackend(tb testing.TB, cfg Config, b Backend, ln net.Listener) *Server {
	tb.Helper()
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	srv := New(cfg, b)
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			tb.Fatal(err)
		}
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	tb.Cleanup(func() {
		srv.Close()
		if err := <-done; !errors.Is(err, ErrServerClosed) {
			tb.Errorf("Serve: %v", err)
		}
	})
	for srv.Addr() == nil {
		time.Sleep(time.Millisecond)
	}
	return srv
}

func TestMaxConnections(t *testing.T) {
	b := &limitBackend{fakeBackend: &fakeBackend{}, max: 2}
	srv := serveBackend(t, Config{}, b, nil)
	addr := srv.Addr().String()
	for range 2 {
		dialRaw(t, addr).login()
	}
	// The extra connection is alice's to take only if she held
	// CONNECTION_ADMIN: she is refused after login.
	rc := dialRaw(t, addr)
	resp := rc.handshake("alice", "secret", "", mysql.AuthNativePassword, rawCaps)
	if errCode(resp) != mysql.ErrConCount || string(resp[3:9]) != "#08004" {
		t.Fatalf("alice over the limit: %q", resp)
	}
	expectClosed(t, rc)
	// root may take it.
	admin := dialRaw(t, addr)
	admin.login()
	// Beyond max_connections+1 a socket is refused before the greeting.
	over := dialRaw(t, addr)
	first := over.mustRead()
	if errCode(first) != mysql.ErrConCount {
		t.Fatalf("first packet beyond the limit: %q", first)
	}
	expectClosed(t, over)
	// A slot freed is a slot for the next client.
	admin.command([]byte{mysql.ComQuit})
	expectClosed(t, admin)
	deadline := time.Now().Add(10 * time.Second)
	for srv.open.Load() > 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	dialRaw(t, addr).login()
}

func TestUnauthenticatedConnectionsCount(t *testing.T) {
	srv := serveBackend(t, Config{MaxConnections: 3}, &fakeBackend{}, nil)
	addr := srv.Addr().String()
	for range 4 { // max_connections + 1 that never log in
		rc := dialRaw(t, addr)
		rc.mustRead()
	}
	over := dialRaw(t, addr)
	if first := over.mustRead(); errCode(first) != mysql.ErrConCount {
		t.Fatalf("first packet beyond the limit: %q", first)
	}
}

func TestHandshakeTimeout(t *testing.T) {
	srv := serveBackend(t, Config{ConnectTimeout: 200 * time.Millisecond}, &fakeBackend{}, nil)
	silent := dialRaw(t, srv.Addr().String())
	silent.mustRead()
	expectClosed(t, silent)

	// A client that trickles its handshake response is cut off too.
	slow := dialRaw(t, srv.Addr().String())
	slow.mustRead()
	if _, err := slow.c.Write([]byte{100, 0, 0, 1}); err != nil {
		t.Fatal(err)
	}
	closed := false
	for range 200 { // at most 200 bytes, 20 ms apart
		if _, err := slow.c.Write([]byte{0}); err != nil {
			closed = true
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !closed {
		expectClosed(t, slow)
	}
}

func TestHandshakePacketBound(t *testing.T) {
	env := startServer(t, Config{})
	rc := dialRaw(t, env.addr)
	rc.mustRead()
	// A header declaring 64 KiB before login is refused without reading it.
	if _, err := rc.c.Write([]byte{0, 0, 1, 1}); err != nil {
		t.Fatal(err)
	}
	last := expectClosed(t, rc)
	if errCode(last) != mysql.ErrHandshake || string(last[3:9]) != "#08S01" {
		t.Fatalf("last %q", last)
	}
	// After login the bound is max_allowed_packet.
	rc2 := dialRaw(t, env.addr)
	rc2.login()
	rc2.command(append([]byte{mysql.ComQuery}, bytes.Repeat([]byte("x"), 100<<10)...))
	if p := rc2.mustRead(); p[0] != 0xff || errCode(p) == mysql.ErrNetPacketTooLarge {
		t.Fatalf("100 KiB query after login: %q", p)
	}
}

// TestPayloadGrowsWithData: a declared 16 MiB payload of which 10 bytes
// arrive holds about one read chunk, not 16 MiB.
func TestPayloadGrowsWithData(t *testing.T) {
	p := &packetIO{br: bufio.NewReader(bytes.NewReader(make([]byte, 10)))}
	buf, err := p.readPayload(nil, maxPayload)
	if !errors.Is(err, io.ErrUnexpectedEOF) || len(buf) != 10 {
		t.Fatalf("len %d err %v", len(buf), err)
	}
	if cap(buf) > readChunk {
		t.Fatalf("buffer of %d bytes for 10 received", cap(buf))
	}
	// A payload that does arrive is read whole.
	data := bytes.Repeat([]byte("abcdefg"), 100000)
	p = &packetIO{br: bufio.NewReader(bytes.NewReader(data))}
	buf, err = p.readPayload([]byte("x"), len(data))
	if err != nil || !bytes.Equal(buf[1:], data) || buf[0] != 'x' {
		t.Fatalf("err %v len %d", err, len(buf))
	}
}

// flakyListener fails Accept with errs before passing through.
type flakyListener struct {
	net.Listener
	mu   sync.Mutex
	errs []error
}

func (l *flakyListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	if len(l.errs) > 0 {
		err := l.errs[0]
		l.errs = l.errs[1:]
		l.mu.Unlock()
		return nil, err
	}
	l.mu.Unlock()
	return l.Listener.Accept()
}

// levelHandler records through logCapture from level up.
type levelHandler struct {
	*logCapture
	level slog.Level
}

func (h *levelHandler) Enabled(_ context.Context, lv slog.Level) bool { return lv >= h.level }

func TestAcceptErrorsAreSurvived(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := &flakyListener{Listener: inner, errs: []error{
		&net.OpError{Op: "accept", Err: syscall.EMFILE},
		&net.OpError{Op: "accept", Err: syscall.ENFILE},
		&net.OpError{Op: "accept", Err: syscall.ECONNABORTED},
		errors.New("something else"),
	}}
	logs := &logCapture{}
	srv := serveBackend(t, Config{Logger: slog.New(&levelHandler{logCapture: logs, level: slog.LevelWarn})}, &fakeBackend{}, ln)
	dialRaw(t, srv.Addr().String()).login()
	if n := logs.count(); n != 1 {
		t.Fatalf("%d log lines for one burst of accept errors, want 1", n)
	}
}

package server

import (
	"encoding/binary"
	"net"
	"testing"
	"time"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/embedded"
	"github.com/shoaldb/shoal/session"
)

// startSQLServer serves a real SQL layer over an embedded store on a free
// loopback port.
func startSQLServer(t *testing.T) string {
	t.Helper()
	store, err := embedded.Open(t.TempDir(), embedded.Options{NoSync: true, BlockCacheSize: 8 << 20, MemTableSize: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	b, err := session.NewBackend(store, session.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := New(Config{}, b)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

func (rc *rawClient) query(sql string) ([][]string, []byte) {
	rc.tb.Helper()
	rc.command(append([]byte{mysql.ComQuery}, sql...))
	return rc.readTextResult()
}

func TestComProcessKill(t *testing.T) {
	addr := startSQLServer(t)
	a, b := dialRaw(t, addr), dialRaw(t, addr)
	a.login()
	b.login()
	rows, _ := b.query("SELECT CONNECTION_ID()")
	var id uint32
	for _, ch := range rows[0][0] {
		id = id*10 + uint32(ch-'0')
	}

	kill := func(id uint32) []byte {
		a.command(binary.LittleEndian.AppendUint32([]byte{mysql.ComProcessKill}, id))
		return a.mustRead()
	}
	if p := kill(999999); errCode(p) != mysql.ErrNoSuchThread {
		t.Fatalf("COM_PROCESS_KILL of an unknown id: %q", p)
	}
	if p := kill(id); p[0] != 0 {
		t.Fatalf("COM_PROCESS_KILL: %q", p)
	}
	// The killed connection is closed.
	b.command([]byte{mysql.ComPing})
	if p, err := b.readPacket(); err == nil {
		t.Fatalf("killed connection answered %q", p)
	}
}

func TestInteractiveTimeout(t *testing.T) {
	addr := startSQLServer(t)
	a := dialRaw(t, addr)
	a.login()
	if _, p := a.query("SET GLOBAL interactive_timeout = 1"); p[0] != 0 {
		t.Fatalf("SET GLOBAL: %q", p)
	}
	// A non-interactive client keeps wait_timeout.
	if rows, _ := a.query("SELECT @@wait_timeout"); rows[0][0] != "28800" {
		t.Fatalf("non-interactive wait_timeout %v", rows)
	}

	c := dialRaw(t, addr)
	if p := c.handshake("root", "", "", mysql.AuthNativePassword, rawCaps|mysql.ClientInteractive); p[0] != 0 {
		t.Fatalf("login: %q", p)
	}
	if rows, _ := c.query("SELECT @@wait_timeout"); rows[0][0] != "1" {
		t.Fatalf("interactive wait_timeout %v", rows)
	}
	// Idle past it: ER_CLIENT_INTERACTION_TIMEOUT (sequence 0), then EOF.
	_ = c.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	c.seq = 0
	p := c.mustRead()
	if errCode(p) != 4031 || string(p[3:9]) != "#HY000" {
		t.Fatalf("idle interactive session got %q", p)
	}
	if _, err := c.readPacket(); err == nil {
		t.Fatal("connection still open after 4031")
	}
}

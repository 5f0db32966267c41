package acceptance

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/shoaldb/shoal/tests/testserver"
)

// freshConnWorks opens a brand-new pool and runs SELECT 1: the server
// survived whatever came before.
func freshConnWorks(t *testing.T, s *testserver.Server, after string) {
	t.Helper()
	db, err := s.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	var one int
	if err := db.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("after %s: a fresh connection does not work: %v (got %d)", after, err, one)
	}
}

// rawConn is a minimal MySQL protocol client for sending bad packets.
type rawConn struct {
	nc  net.Conn
	seq byte
}

func dialRaw(t *testing.T, s *testserver.Server) *rawConn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", s.Addr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	nc.SetDeadline(time.Now().Add(15 * time.Second))
	return &rawConn{nc: nc}
}

func (c *rawConn) readPacket() ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(c.nc, hdr[:]); err != nil {
		return nil, err
	}
	n := int(hdr[0]) | int(hdr[1])<<8 | int(hdr[2])<<16
	c.seq = hdr[3] + 1
	buf := make([]byte, n)
	_, err := io.ReadFull(c.nc, buf)
	return buf, err
}

func (c *rawConn) writePacket(payload []byte) error {
	hdr := []byte{byte(len(payload)), byte(len(payload) >> 8), byte(len(payload) >> 16), c.seq}
	c.seq++
	_, err := c.nc.Write(append(hdr, payload...))
	return err
}

// login completes the handshake as root with an empty password.
func (c *rawConn) login() error {
	if _, err := c.readPacket(); err != nil {
		return fmt.Errorf("greeting: %w", err)
	}
	const caps = 0x1 | 0x200 | 0x2000 | 0x8000 | 0x80000 // long password, protocol 41, transactions, secure conn, plugin auth
	var p bytes.Buffer
	binary.Write(&p, binary.LittleEndian, uint32(caps))
	binary.Write(&p, binary.LittleEndian, uint32(16<<20))
	p.WriteByte(45)
	p.Write(make([]byte, 23))
	p.WriteString("root\x00")
	p.WriteByte(0) // empty auth response
	p.WriteString("mysql_native_password\x00")
	if err := c.writePacket(p.Bytes()); err != nil {
		return err
	}
	for i := 0; i < 3; i++ {
		resp, err := c.readPacket()
		if err != nil {
			return err
		}
		switch {
		case len(resp) > 0 && resp[0] == 0x00:
			return nil
		case len(resp) > 0 && resp[0] == 0xfe: // auth switch: empty password
			if err := c.writePacket(nil); err != nil {
				return err
			}
		case len(resp) > 0 && resp[0] == 0x01 && len(resp) > 1 && resp[1] == 0x03: // caching_sha2 fast auth ok
			continue
		default:
			return fmt.Errorf("unexpected auth response %x", resp)
		}
	}
	return errors.New("no OK after auth")
}

// command sends one command packet and returns the first response packet.
func (c *rawConn) command(payload []byte) ([]byte, error) {
	c.seq = 0
	if err := c.writePacket(payload); err != nil {
		return nil, err
	}
	return c.readPacket()
}

func TestBadInputRawProtocol(t *testing.T) {
	s := startServer(t)
	rng := rand.New(rand.NewSource(1))
	garbage := make([]byte, 4096)
	rng.Read(garbage)

	cases := []struct {
		name string
		do   func(c *rawConn)
	}{
		{"garbage instead of a handshake response", func(c *rawConn) {
			c.readPacket()
			c.nc.Write(garbage)
		}},
		{"garbage before reading the greeting", func(c *rawConn) {
			c.nc.Write(garbage[:100])
		}},
		{"header promising 16MB then close", func(c *rawConn) {
			c.readPacket()
			c.nc.Write([]byte{0xff, 0xff, 0xff, 1, 'x', 'y'})
		}},
		{"truncated handshake response", func(c *rawConn) {
			c.readPacket()
			c.seq = 1
			c.writePacket([]byte{0x05, 0xa2, 0x00})
		}},
		{"handshake response with unterminated user", func(c *rawConn) {
			c.readPacket()
			c.seq = 1
			p := append([]byte{0x05, 0xa2, 0x0a, 0x00, 0, 0, 0, 1, 45}, make([]byte, 23)...)
			c.writePacket(append(p, []byte("rootrootroot")...))
		}},
		{"empty packet after login", func(c *rawConn) {
			if err := c.login(); err != nil {
				t.Errorf("login: %v", err)
				return
			}
			c.command(nil)
		}},
		{"garbage packets after login", func(c *rawConn) {
			if err := c.login(); err != nil {
				t.Errorf("login: %v", err)
				return
			}
			for i := 0; i < 5; i++ {
				c.seq = byte(rng.Intn(256))
				c.writePacket(garbage[i*100 : i*100+rng.Intn(100)])
			}
		}},
	}
	for _, tc := range cases {
		c := dialRaw(t, s)
		tc.do(c)
		// Drain whatever the server answers until it closes or 3s pass.
		c.nc.SetReadDeadline(time.Now().Add(3 * time.Second))
		io.Copy(io.Discard, c.nc)
		c.nc.Close()
		freshConnWorks(t, s, tc.name)
	}

	// After login: an unknown command and bad statement ids get ERR packets,
	// and the same connection keeps working.
	c := dialRaw(t, s)
	defer c.nc.Close()
	if err := c.login(); err != nil {
		t.Fatalf("login: %v", err)
	}
	for _, p := range [][]byte{
		{0xee, 1, 2, 3}, // unknown command
		{0x17, 0xff, 0xff, 0xff, 0x7f, 0, 1, 0, 0, 0}, // COM_STMT_EXECUTE of a statement that was never prepared
		{0x03}, // COM_QUERY with an empty query
	} {
		resp, err := c.command(p)
		if err != nil {
			t.Fatalf("command %x: connection lost: %v", p, err)
		}
		if len(resp) == 0 || resp[0] != 0xff {
			t.Errorf("command %x: want an ERR packet, got %x", p, resp)
		}
	}
	resp, err := c.command(append([]byte{0x03}, "SELECT 1"...))
	if err != nil || len(resp) == 0 || resp[0] == 0xff {
		t.Errorf("SELECT 1 after bad commands on the same connection: %x %v", resp, err)
	}
	freshConnWorks(t, s, "bad commands after login")
}

func TestBadInputSQLErrors(t *testing.T) {
	s := startServer(t)
	db, err := s.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	mustExec(t, db, "CREATE DATABASE bad")
	mustExec(t, db, "CREATE TABLE bad.t (id INT PRIMARY KEY, ti TINYINT, n INT, s VARCHAR(10))")
	mustExec(t, db, "INSERT INTO bad.t (id, ti, n, s) VALUES (1, 1, 1, 'one')")

	cases := []struct {
		name  string
		query string
		args  []any
		code  uint16
		state string
	}{
		{"syntax error", "SELEC 1", nil, 1064, "42000"},
		{"syntax error in the middle", "SELECT * FROM bad.t WHERE", nil, 1064, "42000"},
		{"unknown table", "SELECT * FROM bad.no_such_table", nil, 1146, "42S02"},
		{"unknown column", "SELECT no_such_col FROM bad.t", nil, 1054, "42S22"},
		{"unknown column in where", "SELECT id FROM bad.t WHERE nope = 1", nil, 1054, "42S22"},
		{"out of range", "INSERT INTO bad.t (id, ti) VALUES (2, 1000)", nil, 1264, "22003"},
		{"out of range (prepared)", "INSERT INTO bad.t (id, ti) VALUES (?, ?)", []any{3, 1000}, 1264, "22003"},
		{"wrongly typed value", "INSERT INTO bad.t (id, n) VALUES (4, 'abc')", nil, 1366, "HY000"},
		{"duplicate key", "INSERT INTO bad.t (id) VALUES (1)", nil, 1062, "23000"},
		{"duplicate key (prepared)", "INSERT INTO bad.t (id) VALUES (?)", []any{1}, 1062, "23000"},
	}
	for _, tc := range cases {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, err := db.ExecContext(ctx, tc.query, tc.args...)
		cancel()
		me := sqlErr(err)
		switch {
		case err == nil:
			t.Errorf("%s: %q succeeded, want error %d (%s)", tc.name, tc.query, tc.code, tc.state)
		case me == nil:
			t.Errorf("%s: %q: want MySQL error %d (%s), got non-MySQL error %v", tc.name, tc.query, tc.code, tc.state, err)
		case target == "mariadb" && me.Number == 1366 && string(me.SQLState[:]) == "22007":
			// MariaDB's SQLSTATE for 1366; MySQL 8 (and shoal) say HY000.
		case me.Number != tc.code || string(me.SQLState[:]) != tc.state:
			t.Errorf("%s: %q: got error %d (%s) %q, want %d (%s)", tc.name, tc.query, me.Number, string(me.SQLState[:]), me.Message, tc.code, tc.state)
		}
		freshConnWorks(t, s, tc.name)
	}
	// Nothing of the failed statements was written.
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM bad.t").Scan(&n); err != nil || n != 1 {
		t.Errorf("after the failed inserts: %d rows (%v), want 1", n, err)
	}
}

// TestBadInputOversizedPacket sends a query larger than the server's
// max_allowed_packet (64 MiB by default): error 1153, and the server lives.
func TestBadInputOversizedPacket(t *testing.T) {
	s := startServer(t)
	cfg, err := mysql.ParseDSN(s.DSN(""))
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxAllowedPacket = 256 << 20 // let the driver send it; the server must refuse
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var maxPacket int64 = 64 << 20
	if err := db.QueryRow("SELECT @@max_allowed_packet").Scan(&maxPacket); err != nil {
		t.Logf("SELECT @@max_allowed_packet: %v; assuming 64 MiB", err)
	}
	q := "SELECT '" + strings.Repeat("x", int(maxPacket)+1024) + "'"
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, err = db.ExecContext(ctx, q)
	me := sqlErr(err)
	switch {
	case err == nil:
		t.Errorf("a %d-byte query succeeded with max_allowed_packet=%d", len(q), maxPacket)
	case me == nil:
		t.Errorf("oversized packet: want MySQL error 1153, got %v", err)
	case me.Number != 1153:
		t.Errorf("oversized packet: got error %d (%s) %q, want 1153", me.Number, string(me.SQLState[:]), me.Message)
	default:
		t.Logf("oversized packet: %v", err)
	}
	freshConnWorks(t, s, "oversized packet")
}

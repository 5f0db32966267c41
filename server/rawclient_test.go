package server

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/pingcap/tidb/pkg/parser/mysql"
)

// rawClient speaks the protocol by hand, for what a driver will not do:
// malformed input, explicit parameter types, the auth switch, the classic
// EOF flow. Its query path does not allocate, for benchmarks.
type rawClient struct {
	tb   testing.TB
	c    net.Conn
	br   *bufio.Reader
	seq  byte
	caps uint32
	rbuf []byte
	wbuf []byte
	hdr  [4]byte
	salt []byte
}

func dialRaw(tb testing.TB, addr string) *rawClient {
	tb.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		tb.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	tb.Cleanup(func() { c.Close() })
	return &rawClient{tb: tb, c: c, br: bufio.NewReader(c)}
}

func (rc *rawClient) readPacket() ([]byte, error) {
	buf := rc.rbuf[:0]
	for {
		if _, err := io.ReadFull(rc.br, rc.hdr[:]); err != nil {
			return nil, err
		}
		n := int(rc.hdr[0]) | int(rc.hdr[1])<<8 | int(rc.hdr[2])<<16
		if rc.hdr[3] != rc.seq {
			return nil, fmt.Errorf("sequence %d, want %d", rc.hdr[3], rc.seq)
		}
		rc.seq++
		start := len(buf)
		buf = append(buf, make([]byte, n)...)
		if _, err := io.ReadFull(rc.br, buf[start:]); err != nil {
			return nil, err
		}
		if n < maxPayload {
			break
		}
	}
	rc.rbuf = buf
	return buf, nil
}

func (rc *rawClient) mustRead() []byte {
	rc.tb.Helper()
	p, err := rc.readPacket()
	if err != nil {
		rc.tb.Fatal(err)
	}
	return p
}

// writePacket sends payload with the current sequence id, split as needed.
func (rc *rawClient) writePacket(payload []byte) error {
	b := rc.wbuf[:0]
	for {
		n := min(len(payload), maxPayload)
		b = append(b, byte(n), byte(n>>8), byte(n>>16), rc.seq)
		rc.seq++
		b = append(b, payload[:n]...)
		payload = payload[n:]
		if n < maxPayload {
			break
		}
	}
	rc.wbuf = b
	_, err := rc.c.Write(b)
	return err
}

// command starts a new command.
func (rc *rawClient) command(payload []byte) {
	rc.tb.Helper()
	rc.seq = 0
	if err := rc.writePacket(payload); err != nil {
		rc.tb.Fatal(err)
	}
}

const rawCaps = mysql.ClientProtocol41 | mysql.ClientSecureConnection | mysql.ClientLongPassword |
	mysql.ClientTransactions | mysql.ClientPluginAuth | mysql.ClientConnectWithDB |
	mysql.ClientPluginAuthLenencClientData | mysql.ClientConnectAtts | mysql.ClientMultiResults

// handshake logs in and returns the server's final packet (OK or ERR).
func (rc *rawClient) handshake(user, pass, db, plugin string, caps uint32) []byte {
	rc.tb.Helper()
	rc.seq = 0
	g := rc.mustRead()
	if g[0] != 10 {
		rc.tb.Fatalf("protocol version %d", g[0])
	}
	r := newReader(g[1:])
	r.nulString() // version
	r.uint32()    // conn id
	salt := append([]byte(nil), r.bytes(8)...)
	r.byte1()
	r.uint16()
	r.byte1()
	r.uint16()
	r.uint16()
	r.byte1()
	r.bytes(10)
	salt = append(salt, r.bytes(12)...)
	if !r.ok {
		rc.tb.Fatal("short greeting")
	}
	rc.caps = caps
	rc.salt = salt
	var b []byte
	b = binary.LittleEndian.AppendUint32(b, caps)
	b = binary.LittleEndian.AppendUint32(b, 1<<24)
	b = append(b, 45)
	b = append(b, make([]byte, 23)...)
	b = append(b, user...)
	b = append(b, 0)
	var auth []byte
	if plugin == mysql.AuthNativePassword {
		auth = scrambleNativePassword(salt, pass)
	} else {
		auth = make([]byte, 32) // pretend caching_sha2 scramble
	}
	b = appendLenEncBytes(b, auth)
	if caps&mysql.ClientConnectWithDB != 0 {
		b = append(b, db...)
		b = append(b, 0)
	}
	b = append(b, plugin...)
	b = append(b, 0)
	if caps&mysql.ClientConnectAtts != 0 {
		var attrs []byte
		attrs = appendLenEncString(attrs, "_client_name")
		attrs = appendLenEncString(attrs, "raw")
		b = appendLenEncBytes(b, attrs)
	}
	if err := rc.writePacket(b); err != nil {
		rc.tb.Fatal(err)
	}
	resp := rc.mustRead()
	if resp[0] == 0xfe && len(resp) > 1 {
		// Auth switch request.
		r := newReader(resp[1:])
		name := string(r.nulString())
		if name != mysql.AuthNativePassword {
			rc.tb.Fatalf("switch to %q", name)
		}
		salt2 := r.bytes(20)
		if err := rc.writePacket(scrambleNativePassword(salt2, pass)); err != nil {
			rc.tb.Fatal(err)
		}
		resp = rc.mustRead()
	}
	return append([]byte(nil), resp...)
}

func (rc *rawClient) login() {
	rc.tb.Helper()
	resp := rc.handshake("root", "", "", mysql.AuthNativePassword, rawCaps)
	if resp[0] != 0 {
		rc.tb.Fatalf("login: %q", resp)
	}
}

// errCode returns the error code of an ERR packet, or 0.
func errCode(p []byte) uint16 {
	if len(p) < 3 || p[0] != 0xff {
		return 0
	}
	return binary.LittleEndian.Uint16(p[1:])
}

// readRows reads a result set (or OK/ERR) after a command and returns the
// rows as text cells ("NULL" for NULL) in the text protocol.
func (rc *rawClient) readTextResult() (rows [][]string, final []byte) {
	rc.tb.Helper()
	first := rc.mustRead()
	if first[0] == 0 || first[0] == 0xff {
		return nil, append([]byte(nil), first...)
	}
	r := newReader(first)
	n, _ := r.lenEncInt()
	for range n {
		rc.mustRead()
	}
	deprecate := rc.caps&mysql.ClientDeprecateEOF != 0
	if !deprecate {
		if p := rc.mustRead(); p[0] != 0xfe {
			rc.tb.Fatalf("want EOF after definitions, got %q", p)
		}
	}
	for {
		p := rc.mustRead()
		if (p[0] == 0xfe && len(p) < 0xffffff) || p[0] == 0xff {
			return rows, append([]byte(nil), p...)
		}
		r := newReader(p)
		var row []string
		for range n {
			v, isNull := r.lenEncInt()
			if isNull {
				row = append(row, "NULL")
				continue
			}
			row = append(row, string(r.bytes(int(v))))
		}
		if !r.ok {
			rc.tb.Fatalf("bad row %q", p)
		}
		rows = append(rows, row)
	}
}

// drainResult reads one response without allocating; it returns the number
// of packets read.
func (rc *rawClient) drainResult() int {
	first, err := rc.readPacket()
	if err != nil {
		rc.tb.Fatal(err)
	}
	if first[0] == 0 || first[0] == 0xff {
		return 1
	}
	count := 1
	ends := 1
	if rc.caps&mysql.ClientDeprecateEOF == 0 {
		ends = 2
	}
	for {
		p, err := rc.readPacket()
		if err != nil {
			rc.tb.Fatal(err)
		}
		count++
		if p[0] == 0xfe && len(p) < 16 {
			if ends--; ends == 0 {
				return count
			}
		}
		if p[0] == 0xff {
			rc.tb.Fatalf("error %q", p)
		}
	}
}

// readLoose reads one wire packet without checking its sequence id.
func (rc *rawClient) readLoose() ([]byte, error) {
	if _, err := io.ReadFull(rc.br, rc.hdr[:]); err != nil {
		return nil, err
	}
	n := int(rc.hdr[0]) | int(rc.hdr[1])<<8 | int(rc.hdr[2])<<16
	p := make([]byte, n)
	_, err := io.ReadFull(rc.br, p)
	return p, err
}

package server

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/pingcap/tidb/pkg/parser/mysql"
)

// Fuzz targets for everything the server decodes from a client before or
// without the SQL layer. scripts/test.sh runs each for a bounded time; the
// seed corpora are in testdata/fuzz/<target>.

// FuzzPacketReader: any byte stream yields packets within the bound, and
// buffers sized by what arrived, never by what a header claimed.
func FuzzPacketReader(f *testing.F) {
	f.Add([]byte{1, 0, 0, 0, 3})
	f.Add([]byte{0xff, 0xff, 0xff, 0, 1, 2, 3})
	f.Add(append([]byte{5, 0, 0, 0, 3, 's', 'e', 'l', 'e'}, 0, 0, 0, 1))
	f.Add([]byte{0, 0, 1, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		const limit = 1 << 20
		p := &packetIO{br: bufio.NewReader(bytes.NewReader(data)), maxPacket: limit}
		for range 64 {
			pkt, err := p.readPacket()
			if err != nil {
				return
			}
			if len(pkt) > limit {
				t.Fatalf("packet of %d bytes over the %d limit", len(pkt), limit)
			}
			if cap(pkt) > 2*len(data)+readChunk+1024 {
				t.Fatalf("buffer of %d bytes from %d received", cap(pkt), len(data))
			}
			p.seq = 0
		}
	})
}

// FuzzHandshakeResponse: the parser never panics and what it returns comes
// from the packet.
func FuzzHandshakeResponse(f *testing.F) {
	hr := func(caps uint32, rest ...byte) []byte {
		b := binary.LittleEndian.AppendUint32(nil, caps)
		b = binary.LittleEndian.AppendUint32(b, 1<<24)
		b = append(b, 45)
		b = append(b, make([]byte, 23)...)
		return append(b, rest...)
	}
	f.Add(hr(rawCaps, append([]byte("root\x00\x14"), make([]byte, 20)...)...))
	f.Add(hr(rawCaps|mysql.ClientConnectWithDB, []byte("root\x00\x00test\x00mysql_native_password\x00")...))
	f.Add(hr(mysql.ClientProtocol41 | mysql.ClientSSL))
	f.Add(hr(mysql.ClientProtocol41, []byte("u\x00pw\x00")...))
	f.Add([]byte{0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := parseHandshakeResponse(data)
		if err != nil {
			return
		}
		if len(got.auth) > len(data) || len(got.user) > len(data) || len(got.db) > len(data) {
			t.Fatalf("parsed more than received: %+v", got)
		}
	})
}

// fuzzStmt is a prepared statement with n parameters for the decoders.
func fuzzStmt(n int) *stmt { return &stmt{id: 1, numParams: n} }

// FuzzStmtExecuteParams: COM_STMT_EXECUTE parameter blocks decode or fail
// with errMalformed, for any declared types and values.
func FuzzStmtExecuteParams(f *testing.F) {
	f.Add(byte(1), []byte{0, 1, mysql.TypeLonglong, 0, 1, 0, 0, 0, 0, 0, 0, 0})
	f.Add(byte(2), []byte{0, 1, mysql.TypeVarString, 0, mysql.TypeDouble, 0, 3, 'a', 'b', 'c', 0, 0, 0, 0, 0, 0, 0xf0, 0x3f})
	f.Add(byte(1), []byte{0, 1, mysql.TypeDatetime, 0, 11, 0xe8, 0x07, 1, 2, 3, 4, 5, 1, 0, 0, 0})
	f.Add(byte(1), []byte{0, 1, mysql.TypeDuration, 0, 8, 1, 1, 0, 0, 0, 2, 3, 4})
	f.Add(byte(1), []byte{1, 1, mysql.TypeNull, 0})
	f.Add(byte(3), []byte{0, 1, mysql.TypeNewDecimal, 0, mysql.TypeBlob, 0, mysql.TypeTiny, 0x80, 0xfc, 0xff})
	f.Fuzz(func(t *testing.T, n byte, data []byte) {
		st := fuzzStmt(int(n % 40))
		for range 2 { // the second round reuses the bound types
			params, err := decodeParams(st, data)
			if err != nil {
				if err != errMalformed {
					t.Fatalf("error %v", err)
				}
				return
			}
			if len(params) != st.numParams {
				t.Fatalf("%d params for %d", len(params), st.numParams)
			}
			for _, p := range params {
				_ = p.String()
			}
			if len(data) > 0 && st.numParams > 0 {
				data = append(data[:(st.numParams+7)/8:(st.numParams+7)/8], 0) // not rebound
				data = append(data, bytes.Repeat([]byte{1}, 64)...)
			}
		}
	})
}

// FuzzStmtSendLongData: any sequence of COM_STMT_SEND_LONG_DATA bodies is
// absorbed within max_allowed_packet, then decodes at execution.
func FuzzStmtSendLongData(f *testing.F) {
	f.Add(byte(1), []byte{1, 0, 0, 0, 0, 0, 'a', 'b'}, []byte{0, 1, mysql.TypeBlob, 0})
	f.Add(byte(2), []byte{1, 0, 0, 0, 1, 0}, []byte{0, 1, mysql.TypeLonglong, 0, mysql.TypeString, 0, 1, 0, 0, 0, 0, 0, 0, 0})
	f.Add(byte(1), []byte{1, 0, 0, 0, 9, 0, 'x'}, []byte{0, 0})
	f.Add(byte(1), []byte{2, 0, 0, 0}, []byte{})
	f.Fuzz(func(t *testing.T, n byte, body, exec []byte) {
		const limit = 64
		c := &conn{stmts: map[uint32]*stmt{1: fuzzStmt(int(n % 8))}, pkt: &packetIO{maxPacket: limit}}
		st := c.stmts[1]
		for range 3 {
			if err := c.handleStmtSendLongData(body); err != nil {
				if err != errMalformed {
					t.Fatalf("error %v", err)
				}
				return
			}
		}
		total := 0
		for _, d := range st.longData {
			total += len(d)
		}
		if total > limit {
			t.Fatalf("%d bytes of long data kept over the %d limit", total, limit)
		}
		if st.longDataErr != nil {
			return
		}
		if _, err := decodeParams(st, exec); err != nil && err != errMalformed {
			t.Fatalf("error %v", err)
		}
		st.resetLongData()
	})
}

package server

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"slices"
)

// maxPayload is the largest payload one wire packet carries; a logical
// packet of this size or more continues in the next wire packet.
const maxPayload = 1<<24 - 1

// Sentinel errors of the packet layer. The connection loop turns them into
// ERR packets (where the link still works) and closes the connection.
var (
	errPacketTooLarge = errors.New("packet larger than max_allowed_packet")
	errOutOfOrder     = errors.New("packets out of order")
	errMalformed      = errors.New("malformed packet")
)

// packetIO reads and writes MySQL packets on one connection. Reads go through
// a bufio.Reader into one reused payload buffer; writes are appended to one
// buffer that is written out by flush (once per response) or when it grows
// past flushThreshold while a large result streams.
type packetIO struct {
	conn      net.Conn
	br        *bufio.Reader
	seq       uint8
	maxPacket int

	rbuf []byte // reused payload buffer for reads
	wbuf []byte // pending output: complete packets and at most one open packet
	hdr  [4]byte
}

const (
	readBufSize    = 16 << 10
	flushThreshold = 32 << 10
	keepBufSize    = 1 << 20 // buffers grown beyond this are dropped after use
)

func newPacketIO(c net.Conn, maxPacket int) *packetIO {
	return &packetIO{
		conn:      c,
		br:        bufio.NewReaderSize(c, readBufSize),
		maxPacket: maxPacket,
		rbuf:      make([]byte, 0, 1024),
		wbuf:      make([]byte, 0, 16<<10),
	}
}

// readPacket returns the next logical packet (wire packets of maxPayload
// bytes joined). The returned slice is valid until the next readPacket.
func (p *packetIO) readPacket() ([]byte, error) {
	if cap(p.rbuf) > keepBufSize {
		p.rbuf = make([]byte, 0, 1024)
	}
	buf := p.rbuf[:0]
	for {
		if _, err := io.ReadFull(p.br, p.hdr[:]); err != nil {
			return nil, err
		}
		n := int(uint32(p.hdr[0]) | uint32(p.hdr[1])<<8 | uint32(p.hdr[2])<<16)
		if p.hdr[3] != p.seq {
			return nil, errOutOfOrder
		}
		p.seq++
		if len(buf)+n > p.maxPacket {
			return nil, errPacketTooLarge
		}
		var err error
		if buf, err = p.readPayload(buf, n); err != nil {
			return nil, err
		}
		if n < maxPayload {
			break
		}
	}
	p.rbuf = buf
	return buf, nil
}

// readChunk is the least a payload buffer grows by while a packet arrives.
const readChunk = 64 << 10

// readPayload appends the next n payload bytes to buf. The buffer grows
// with what has arrived (doubling), not with what the header declared, so
// a client that declares 16 MiB and sends ten bytes holds little memory.
func (p *packetIO) readPayload(buf []byte, n int) ([]byte, error) {
	for n > 0 {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, min(n, max(cap(buf), readChunk)))
		}
		chunk := min(n, cap(buf)-len(buf))
		m, err := io.ReadFull(p.br, buf[len(buf):len(buf)+chunk])
		buf = buf[:len(buf)+m]
		n -= m
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// startPacket opens a packet in the write buffer; the payload is appended to
// p.wbuf by the caller and the packet is closed by endPacket.
func (p *packetIO) startPacket() int {
	start := len(p.wbuf)
	p.wbuf = append(p.wbuf, 0, 0, 0, 0)
	return start
}

// endPacket fills in the header of the packet opened at start, splitting it
// into several wire packets if its payload is maxPayload bytes or more, and
// writes buffered output to the socket if a lot has piled up.
func (p *packetIO) endPacket(start int) error {
	n := len(p.wbuf) - start - 4
	if n < maxPayload {
		p.wbuf[start] = byte(n)
		p.wbuf[start+1] = byte(n >> 8)
		p.wbuf[start+2] = byte(n >> 16)
		p.wbuf[start+3] = p.seq
		p.seq++
	} else {
		p.splitPacket(start)
	}
	if len(p.wbuf) >= flushThreshold {
		return p.flush()
	}
	return nil
}

// splitPacket rewrites the oversized packet opened at start as a series of
// wire packets. It is rare (payloads of 16 MiB and more), so it copies.
func (p *packetIO) splitPacket(start int) {
	payload := append([]byte(nil), p.wbuf[start+4:]...)
	p.wbuf = p.wbuf[:start]
	for {
		n := min(len(payload), maxPayload)
		p.wbuf = append(p.wbuf, byte(n), byte(n>>8), byte(n>>16), p.seq)
		p.seq++
		p.wbuf = append(p.wbuf, payload[:n]...)
		payload = payload[n:]
		if n < maxPayload {
			return
		}
	}
}

// writePacket appends one complete packet with the given payload.
func (p *packetIO) writePacket(payload []byte) error {
	start := p.startPacket()
	p.wbuf = append(p.wbuf, payload...)
	return p.endPacket(start)
}

// flush writes all buffered packets to the socket.
func (p *packetIO) flush() error {
	if len(p.wbuf) == 0 {
		return nil
	}
	_, err := p.conn.Write(p.wbuf)
	if cap(p.wbuf) > keepBufSize {
		p.wbuf = make([]byte, 0, 16<<10)
	} else {
		p.wbuf = p.wbuf[:0]
	}
	return err
}

// Length-encoded integers and strings.

func appendLenEncInt(b []byte, n uint64) []byte {
	switch {
	case n < 251:
		return append(b, byte(n))
	case n < 1<<16:
		return append(b, 0xfc, byte(n), byte(n>>8))
	case n < 1<<24:
		return append(b, 0xfd, byte(n), byte(n>>8), byte(n>>16))
	default:
		return append(b, 0xfe, byte(n), byte(n>>8), byte(n>>16), byte(n>>24),
			byte(n>>32), byte(n>>40), byte(n>>48), byte(n>>56))
	}
}

func appendLenEncString(b []byte, s string) []byte {
	b = appendLenEncInt(b, uint64(len(s)))
	return append(b, s...)
}

func appendLenEncBytes(b []byte, s []byte) []byte {
	b = appendLenEncInt(b, uint64(len(s)))
	return append(b, s...)
}

func appendUint16(b []byte, v uint16) []byte { return binary.LittleEndian.AppendUint16(b, v) }
func appendUint32(b []byte, v uint32) []byte { return binary.LittleEndian.AppendUint32(b, v) }
func appendUint64(b []byte, v uint64) []byte { return binary.LittleEndian.AppendUint64(b, v) }

// reader is a bounds-checked cursor over a received payload. Every method
// fails softly: once a read runs past the end, ok turns false and reads
// return zero values, so parsers check ok once at the end.
type reader struct {
	b  []byte
	ok bool
}

func newReader(b []byte) reader { return reader{b: b, ok: true} }

func (r *reader) fail() { r.ok = false; r.b = nil }

func (r *reader) empty() bool { return len(r.b) == 0 }

func (r *reader) byte1() byte {
	if len(r.b) < 1 {
		r.fail()
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}

func (r *reader) uint16() uint16 {
	if len(r.b) < 2 {
		r.fail()
		return 0
	}
	v := binary.LittleEndian.Uint16(r.b)
	r.b = r.b[2:]
	return v
}

func (r *reader) uint32() uint32 {
	if len(r.b) < 4 {
		r.fail()
		return 0
	}
	v := binary.LittleEndian.Uint32(r.b)
	r.b = r.b[4:]
	return v
}

func (r *reader) uint64() uint64 {
	if len(r.b) < 8 {
		r.fail()
		return 0
	}
	v := binary.LittleEndian.Uint64(r.b)
	r.b = r.b[8:]
	return v
}

func (r *reader) bytes(n int) []byte {
	if n < 0 || len(r.b) < n {
		r.fail()
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

// nulString reads up to a NUL byte (consumed); a missing NUL takes the rest.
func (r *reader) nulString() []byte {
	for i, c := range r.b {
		if c == 0 {
			v := r.b[:i:i]
			r.b = r.b[i+1:]
			return v
		}
	}
	v := r.b
	r.b = r.b[len(r.b):]
	return v
}

// lenEncInt reads a length-encoded integer; isNull reports the 0xfb marker.
func (r *reader) lenEncInt() (v uint64, isNull bool) {
	c := r.byte1()
	switch c {
	case 0xfb:
		return 0, true
	case 0xfc:
		return uint64(r.uint16()), false
	case 0xfd:
		b := r.bytes(3)
		if b == nil {
			return 0, false
		}
		return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16, false
	case 0xfe:
		return r.uint64(), false
	case 0xff:
		r.fail()
		return 0, false
	}
	return uint64(c), false
}

func (r *reader) lenEncBytes() []byte {
	n, isNull := r.lenEncInt()
	if isNull || !r.ok {
		return nil
	}
	if n > uint64(len(r.b)) {
		r.fail()
		return nil
	}
	return r.bytes(int(n))
}

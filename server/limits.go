package server

import (
	"errors"
	"net"
	"time"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
)

// Connection limits. Every accepted socket, authenticated or not, counts
// toward max_connections, so a crowd of clients that never log in cannot
// exhaust file descriptors or memory: beyond max_connections+1 a new socket
// is told 1040 and closed at once; the one extra slot is kept for an
// account that may take it (CONNECTION_ADMIN/SUPER), checked after login.

// DefaultMaxConnections is max_connections when neither the Backend nor
// Config says otherwise (MySQL's default).
const DefaultMaxConnections = 151

// preAuthMaxPacket bounds every packet a client sends before it has
// authenticated (handshake response, auth switch answer). MySQL's own
// handshake response is far smaller; more is refused as a bad handshake.
const preAuthMaxPacket = 16 << 10

// ConnectionLimiter is optionally implemented by a Backend whose limits are
// system variables (max_connections) and whose accounts carry privileges.
type ConnectionLimiter interface {
	// MaxConnections is max_connections now.
	MaxConnections() int
	// HasConnectionAdmin reports whether user@host holds CONNECTION_ADMIN
	// or SUPER, which lets it take the one connection beyond
	// max_connections.
	HasConnectionAdmin(user, host string) bool
}

// PacketLimiter is optionally implemented by a Session: the largest packet
// the client may send once logged in (its max_allowed_packet).
type PacketLimiter interface {
	MaxAllowedPacket() int
}

func (s *Server) maxConnections() int {
	if l, ok := s.backend.(ConnectionLimiter); ok {
		return l.MaxConnections()
	}
	return s.cfg.MaxConnections
}

func (s *Server) hasConnectionAdmin(user, host string) bool {
	if l, ok := s.backend.(ConnectionLimiter); ok {
		return l.HasConnectionAdmin(user, host)
	}
	return false
}

// errTooManyConnections is 1040 (08004).
func errTooManyConnections() *errno.SQLError { return errno.NewStd(mysql.ErrConCount) }

// refuseConnection tells a socket accepted beyond the limit 1040 (as the
// first packet, where a greeting would be) and closes it, without waiting
// on a client that does not read.
func refuseConnection(nc net.Conn) {
	_ = nc.SetWriteDeadline(time.Now().Add(time.Second))
	p := newPacketIO(nc, preAuthMaxPacket)
	c := &conn{pkt: p}
	_ = c.writeError(errTooManyConnections())
	_ = p.flush()
	_ = nc.Close()
}

// acceptBackoff is the pause after a failed Accept: 5 ms doubling to 1 s.
// Accept fails when the process is out of file descriptors (EMFILE,
// ENFILE), a peer gave up before the accept (ECONNABORTED) and for other
// transient reasons; none of them is a reason to stop listening.
func acceptBackoff(prev time.Duration) time.Duration {
	return min(max(2*prev, 5*time.Millisecond), time.Second)
}

// fatalBeforeAuth ends a connection whose login failed at the packet
// layer: an oversized packet is a bad handshake (1043) there.
func (c *conn) fatalBeforeAuth(err error) {
	if errors.Is(err, errPacketTooLarge) || errors.Is(err, errMalformed) {
		c.pkt.wbuf = c.pkt.wbuf[:0]
		_ = c.writeError(errno.NewStd(mysql.ErrHandshake))
		_ = c.pkt.flush()
		return
	}
	c.fatal(err)
}

// checkConnectionLimit refuses a login that takes the extra connection
// beyond max_connections unless the account may take it.
func (c *conn) checkConnectionLimit(user string) error {
	if c.srv.open.Load() <= int64(c.srv.maxConnections()) || c.srv.hasConnectionAdmin(user, c.host) {
		return nil
	}
	_ = c.writeError(errTooManyConnections())
	_ = c.pkt.flush()
	return errTooManyConnections()
}

// setSession installs a logged-in session and lifts the packet bound from
// the pre-login size to its max_allowed_packet.
func (c *conn) setSession(sess Session) {
	c.sess = sess
	c.pkt.maxPacket = c.srv.cfg.MaxAllowedPacket
	if l, ok := sess.(PacketLimiter); ok {
		if n := l.MaxAllowedPacket(); n > 0 {
			c.pkt.maxPacket = n
		}
	}
}

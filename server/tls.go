package server

import (
	"bufio"
	"context"
	"crypto/tls"
	"io"
	"net"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/security"
	"github.com/shoaldb/shoal/session"
)

// sslRequestLen is the length of an SSLRequest packet: the first 32 bytes
// of a HandshakeResponse41 (capabilities, max packet, charset, filler),
// which a client sends with CLIENT_SSL set before starting TLS.
const sslRequestLen = 32

// capabilities are the flags offered in the greeting: CLIENT_SSL only when
// the server has a certificate.
func (s *Server) capabilities() uint32 {
	if s.cfg.TLS != nil {
		return serverCapabilities | mysql.ClientSSL
	}
	return serverCapabilities
}

// isSSLRequest reports that the first packet of a handshake asks for TLS.
func (c *conn) isSSLRequest(data []byte) bool {
	if c.srv.cfg.TLS == nil || len(data) != sslRequestLen {
		return false
	}
	r := newReader(data)
	return r.uint32()&mysql.ClientSSL != 0
}

// startTLS runs the TLS handshake on the connection (as server) and moves
// the packet layer onto it; the handshake response and every command after
// it then travel encrypted. The packet sequence carries on.
func (c *conn) startTLS() error {
	// The client may have sent its ClientHello right behind the
	// SSLRequest, so the TLS layer first reads what the packet reader
	// has buffered.
	raw := &bufferedConn{Conn: c.nc, r: c.pkt.br}
	tc := tls.Server(raw, c.srv.cfg.TLS)
	if err := tc.Handshake(); err != nil {
		return err
	}
	st := tc.ConnectionState()
	c.transport = session.Transport{
		Secure:  true,
		Cipher:  tls.CipherSuiteName(st.CipherSuite),
		Version: security.VersionName(st.Version),
	}
	c.pkt.conn = tc
	c.pkt.br = bufio.NewReaderSize(tc, readBufSize)
	return nil
}

// Secure reports whether the connection runs over TLS.
func (c *conn) Secure() bool { return c.transport.Secure }

// sessionContext is ctx carrying the connection's transport, which
// Backend.NewSession reads (session.TransportOf) for the Ssl_* status
// variables, require_secure_transport and per-account TLS requirements.
func (c *conn) sessionContext(ctx context.Context) context.Context {
	return session.WithTransport(ctx, c.transport)
}

// bufferedConn reads through r (which holds bytes already read from Conn)
// and writes straight to Conn.
type bufferedConn struct {
	net.Conn
	r io.Reader
}

func (b *bufferedConn) Read(p []byte) (int, error) { return b.r.Read(p) }

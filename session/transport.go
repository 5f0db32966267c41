package session

import (
	"context"

	"github.com/shoaldb/shoal/errno"
)

// Transport describes how a client is connected: over TLS or not, and with
// which protocol version and cipher (the Ssl_version and Ssl_cipher status
// variables). The protocol layer puts it in the context it passes to
// Backend.NewSession (WithTransport).
type Transport struct {
	Secure  bool
	Cipher  string // e.g. TLS_AES_128_GCM_SHA256
	Version string // e.g. TLSv1.3
}

type transportKey struct{}

// WithTransport returns ctx carrying t.
func WithTransport(ctx context.Context, t Transport) context.Context {
	return context.WithValue(ctx, transportKey{}, t)
}

// TransportOf returns the transport ctx carries; without one, a plain
// (insecure) connection.
func TransportOf(ctx context.Context) Transport {
	t, _ := ctx.Value(transportKey{}).(Transport)
	return t
}

// codeSecureTransportRequired is MySQL's ER_SECURE_TRANSPORT_REQUIRED (the
// parser module has no constant for it).
const codeSecureTransportRequired = 3159

func errSecureTransportRequired() error {
	return errno.New(codeSecureTransportRequired, "Connections using insecure transport are prohibited while --require_secure_transport=ON.")
}

// codeNoSecureTransportsConfigured is MySQL's
// ER_NO_SECURE_TRANSPORTS_CONFIGURED.
const codeNoSecureTransportsConfigured = 3160

// checkTransportSetting refuses SET GLOBAL require_secure_transport = ON on
// a node that offers no TLS (it would lock every client out), as MySQL.
func (b *Backend) checkTransportSetting(name, val string) error {
	if name == "require_secure_transport" && val == "1" && !b.cfg.SSL.Enabled {
		return errno.New(codeNoSecureTransportsConfigured,
			"No secure transports (SSL or Shared Memory) are configured, unable to set --require_secure_transport=ON.")
	}
	return nil
}

// checkTransport refuses an insecure connection while the global
// require_secure_transport is ON.
func (b *Backend) checkTransport(t Transport) error {
	if t.Secure {
		return nil
	}
	if v, ok := b.globals.get("require_secure_transport"); ok && v == "1" {
		return errSecureTransportRequired()
	}
	return nil
}

// SSLConfig is what the protocol layer's TLS looks like to SQL: whether it
// is on, and the files it uses (shown by have_ssl, ssl_ca, ssl_cert,
// ssl_key).
type SSLConfig struct {
	Enabled bool
	CA      string
	Cert    string
	Key     string
}

func (b *Backend) sslVarDefault(name string) string {
	ssl := b.cfg.SSL
	switch name {
	case "have_ssl", "have_openssl":
		if ssl.Enabled {
			return "YES"
		}
		return "DISABLED"
	case "ssl_ca":
		return ssl.CA
	case "ssl_cert":
		return ssl.Cert
	case "ssl_key":
		return ssl.Key
	}
	return ""
}

// statusVars are the rows of SHOW [GLOBAL|SESSION] STATUS. Ssl_cipher and
// Ssl_version describe this session's connection; globally they are empty,
// as in MySQL.
func (s *Session) statusVars(global bool) [][2]string {
	t := s.transport
	if global {
		t = Transport{}
	}
	return [][2]string{
		{"Ssl_cipher", t.Cipher},
		{"Ssl_version", t.Version},
		{"Threads_connected", "1"},
		{"Uptime", "1"},
	}
}

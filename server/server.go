// Package server speaks the MySQL client/server protocol: the v10 handshake
// with mysql_native_password, the text protocol (COM_QUERY) and the binary
// protocol of prepared statements, over a Backend that opens SQL sessions.
//
// Each connection is served by one goroutine that reads a command, runs it
// against its Session and writes the whole response into one buffer that is
// flushed once (large result sets are streamed in chunks). A panic while
// serving a connection is recovered and ends only that connection.
package server

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shoaldb/shoal/session"
)

// Config configures a Server.
type Config struct {
	// Addr is the TCP address ListenAndServe listens on (host:port).
	Addr string
	// MaxAllowedPacket bounds the size of a packet a client may send;
	// default 64 MiB.
	MaxAllowedPacket int
	// ServerVersion is the version string sent in the handshake; default
	// DefaultServerVersion.
	ServerVersion string
	// ConnectTimeout bounds the handshake (greeting to OK); default 10s.
	ConnectTimeout time.Duration
	// Logger receives connection-level errors; default slog.Default().
	Logger *slog.Logger
	// MaxConnections is max_connections when the Backend is no
	// ConnectionLimiter; default DefaultMaxConnections.
	MaxConnections int
	// TLS, when set, is offered to clients (CLIENT_SSL; see tls.go).
	TLS *tls.Config
}

// DefaultServerVersion is the version announced when Config.ServerVersion is
// empty. Clients parse the leading "8.0.11" to pick features.
const DefaultServerVersion = "8.0.11-shoal"

// DefaultMaxAllowedPacket is max_allowed_packet when Config leaves it zero.
const DefaultMaxAllowedPacket = 64 << 20

// Server accepts MySQL connections and serves them against a Backend.
type Server struct {
	cfg     Config
	backend Backend
	log     *slog.Logger
	start   time.Time

	ctx    context.Context
	cancel context.CancelFunc

	nextConnID atomic.Uint64
	sha2       sha2Cache
	connIDBase uint64
	questions  atomic.Uint64
	// open counts accepted sockets still served, logged in or not.
	open atomic.Int64

	mu        sync.Mutex
	listeners map[net.Listener]struct{}
	conns     map[*conn]struct{}
	byID      map[uint64]*conn // authenticated connections (process.go)
	watching  bool             // the disconnect watchdog runs (idle.go)
	closed    bool
	addr      net.Addr
	wg        sync.WaitGroup
}

// ErrServerClosed is returned by Serve and ListenAndServe after Close.
var ErrServerClosed = errors.New("server: closed")

// New returns a server for backend; it does not listen yet.
func New(cfg Config, b Backend) *Server {
	if cfg.MaxAllowedPacket <= 0 {
		cfg.MaxAllowedPacket = DefaultMaxAllowedPacket
	}
	if cfg.ServerVersion == "" {
		cfg.ServerVersion = DefaultServerVersion
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = 10 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.MaxConnections <= 0 {
		cfg.MaxConnections = DefaultMaxConnections
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv := &Server{
		cfg:       cfg,
		backend:   b,
		log:       cfg.Logger,
		start:     time.Now(),
		ctx:       ctx,
		cancel:    cancel,
		listeners: make(map[net.Listener]struct{}),
		conns:     make(map[*conn]struct{}),
		byID:      make(map[uint64]*conn),
	}
	if pm, ok := b.(interface {
		SetProcessManager(session.ProcessManager)
	}); ok {
		pm.SetProcessManager(srv)
	}
	// In a cluster connection ids carry the node's server id (global kill).
	if ib, ok := b.(interface{ ConnectionIDBase() uint64 }); ok {
		srv.connIDBase = ib.ConnectionIDBase()
	}
	return srv
}

// ListenAndServe listens on Config.Addr and serves until Close.
func (s *Server) ListenAndServe() error {
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return err
	}
	return s.Serve(ln)
}

// Serve accepts connections on ln until Close. Failed accepts (out of
// file descriptors and the like) are retried with a backoff; only a closed
// listener ends it. It closes ln before returning.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ln.Close()
		return ErrServerClosed
	}
	s.listeners[ln] = struct{}{}
	if s.addr == nil {
		s.addr = ln.Addr()
	}
	if !s.watching {
		s.watching = true
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.watchdog()
		}()
	}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, ln)
		s.mu.Unlock()
		ln.Close()
	}()

	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if s.isClosed() {
				return ErrServerClosed
			}
			if errors.Is(err, net.ErrClosed) {
				return err // the listener was closed under us
			}
			if backoff == 0 {
				s.log.Warn("server: accept failed; retrying with backoff", "err", err)
			}
			backoff = acceptBackoff(backoff)
			time.Sleep(backoff)
			continue
		}
		backoff = 0
		if n := s.open.Add(1); n > int64(s.maxConnections())+1 {
			s.open.Add(-1)
			// Not in s.wg: it ends by itself within a second.
			go refuseConnection(nc)
			continue
		}
		c := newConn(s, nc, s.connIDBase|s.nextConnID.Add(1))
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			s.open.Add(-1)
			nc.Close()
			return ErrServerClosed
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			defer s.open.Add(-1)
			c.serve(s.ctx)
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
		}()
	}
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Addr returns the address of the first listener Serve was given, or nil.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// ConnCount returns the number of open client connections.
func (s *Server) ConnCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// Close stops accepting, closes every client connection (a command in
// flight sees its context cancelled) and waits for the connection
// goroutines to finish.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.wg.Wait()
		return nil
	}
	s.closed = true
	for ln := range s.listeners {
		ln.Close()
	}
	for c := range s.conns {
		c.nc.Close()
	}
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()
	return nil
}

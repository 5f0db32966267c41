package server

import (
	"errors"
	"net"
	"time"

	"github.com/shoaldb/shoal/errno"
)

// idleTimeouter is a session with wait_timeout / interactive_timeout.
type idleTimeouter interface {
	IdleTimeout() time.Duration
	SetInteractive()
}

// errClientInteractionTimeout is MySQL 8's ER_CLIENT_INTERACTION_TIMEOUT,
// sent before closing a connection idle past wait_timeout.
func errClientInteractionTimeout() *errno.SQLError {
	return errno.New(4031, "The client was disconnected by the server because of inactivity. See wait_timeout and interactive_timeout for configuring this behavior.")
}

// armIdleTimeout bounds the wait for the next command by the session's
// wait_timeout.
func (c *conn) armIdleTimeout() {
	if it, ok := c.sess.(idleTimeouter); ok {
		if d := it.IdleTimeout(); d > 0 {
			now := time.Now()
			// A deadline armed a moment ago for the same timeout stands
			// (it is at most a hundredth of the timeout, and at most a
			// second, early): moving it costs every command.
			if c.idleDeadline && d == c.idleFor && now.Sub(c.idleArmed) < min(d/100, time.Second) {
				return
			}
			_ = c.nc.SetReadDeadline(now.Add(d))
			c.idleDeadline, c.idleFor, c.idleArmed = true, d, now
			return
		}
	}
	if c.idleDeadline {
		_ = c.nc.SetReadDeadline(time.Time{})
		c.idleDeadline = false
	}
}

// isTimeout reports a read that ended at its deadline.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// disconnectAfter is how long a statement runs before its connection
// starts watching its socket for the client going away: short statements
// (the hot path) never pay for the watch.
const disconnectAfter = 50 * time.Millisecond

// errClientGone is the cause a statement's context carries when its client
// closed the connection.
var errClientGone = errors.New("server: client closed the connection")

// watchdog starts the disconnect watch of every statement that has run
// disconnectAfter, until the server closes. The watch peeks at the socket
// (the client sends nothing while it waits for a response, so the read
// returns only at EOF, on a pipelined command, or when the statement ends
// and stops the watch with a read deadline); peeking leaves any bytes read
// in the packet reader's buffer.
func (s *Server) watchdog() {
	t := time.NewTicker(disconnectAfter / 2)
	defer t.Stop()
	var conns []*conn
	for {
		select {
		case <-s.ctx.Done():
			return
		case now := <-t.C:
			s.mu.Lock()
			conns = conns[:0]
			for _, c := range s.byID {
				conns = append(conns, c)
			}
			s.mu.Unlock()
			for _, c := range conns {
				c.maybeWatch(now)
			}
		}
	}
}

func (c *conn) maybeWatch(now time.Time) {
	p := &c.proc
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cancel == nil || !p.hasInfo || p.watchDone != nil || now.Sub(p.since) < disconnectAfter {
		return
	}
	done, cancel := make(chan struct{}), p.cancel
	p.watchDone = done
	// No wait_timeout while a statement runs; endCommand sets its deadline
	// only after this (it takes p.mu and sees watchDone).
	_ = c.nc.SetReadDeadline(time.Time{})
	go func() {
		defer close(done)
		if _, err := c.pkt.br.Peek(1); err != nil && !isTimeout(err) {
			cancel(errClientGone)
		}
	}()
}

// stopWatch ends a statement's disconnect watch, if one started, before
// the connection reads its next command.
func (c *conn) stopWatch(done chan struct{}) {
	_ = c.nc.SetReadDeadline(time.Now())
	<-done
	_ = c.nc.SetReadDeadline(time.Time{})
	c.idleDeadline = false
}

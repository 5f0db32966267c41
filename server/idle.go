package server

import (
	"context"
	"errors"
	"net"
	"sync"
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
			_ = c.nc.SetReadDeadline(time.Now().Add(d))
			c.idleDeadline = true
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

// disconnectAfter is how long a command runs before the connection starts
// watching its socket for the client going away: short commands (the hot
// path) never pay for the watch.
const disconnectAfter = 50 * time.Millisecond

// errClientGone is the cause a statement's context carries when its client
// closed the connection.
var errClientGone = errors.New("server: client closed the connection")

// disconnectWatch cancels a running command when its client closes the
// connection: once the command has run disconnectAfter, a timer goroutine
// peeks at the socket (the client sends nothing while it waits for a
// response, so a read returns only at EOF, on a pipelined command, or when
// the command ends and stops the watch by a read deadline). Peeking leaves
// any bytes read in the packet reader's buffer.
type disconnectWatch struct {
	c       *conn
	timer   *time.Timer
	mu      sync.Mutex
	cancel  context.CancelCauseFunc // set while a command runs
	running bool                    // the peek is under way
	done    chan struct{}           // closed when the peek returns
}

func (w *disconnectWatch) start(cancel context.CancelCauseFunc) {
	w.mu.Lock()
	w.cancel = cancel
	w.mu.Unlock()
	if w.timer == nil {
		w.timer = time.AfterFunc(disconnectAfter, w.watch)
	} else {
		w.timer.Reset(disconnectAfter)
	}
}

func (w *disconnectWatch) watch() {
	w.mu.Lock()
	cancel := w.cancel
	if cancel == nil {
		w.mu.Unlock()
		return
	}
	w.running, w.done = true, make(chan struct{})
	done := w.done
	// No wait_timeout while a command runs; stop sets a deadline only
	// after this (it takes mu and sees running).
	_ = w.c.nc.SetReadDeadline(time.Time{})
	w.mu.Unlock()
	defer close(done)
	_, err := w.c.pkt.br.Peek(1)
	if err != nil && !isTimeout(err) {
		cancel(errClientGone)
	}
}

// stop ends the watch before the connection reads its next command.
func (w *disconnectWatch) stop() {
	if w.timer == nil {
		return
	}
	w.timer.Stop()
	w.mu.Lock()
	w.cancel = nil
	running, done := w.running, w.done
	w.running, w.done = false, nil
	w.mu.Unlock()
	if running {
		_ = w.c.nc.SetReadDeadline(time.Now())
		<-done
		_ = w.c.nc.SetReadDeadline(time.Time{})
		w.c.idleDeadline = false
	}
}

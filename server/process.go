package server

import (
	"context"
	"sync"
	"time"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/session"
)

// processState is what SHOW PROCESSLIST shows of a connection, updated by
// its goroutine at each command's start and end and read by any other
// (under mu), plus the cancel of the running command's context, which KILL
// and a client disconnect use.
type processState struct {
	mu      sync.Mutex
	user    string
	command byte // mysql.ComSleep between commands
	since   time.Time
	info    string
	hasInfo bool
	db      string
	cancel  context.CancelCauseFunc // nil between commands
	killed  bool                    // KILL CONNECTION: end after the command
	// watchDone is closed when the running statement's disconnect watch
	// ends; nil while none runs (idle.go).
	watchDone chan struct{}
}

// errInterrupted is the cause a killed statement's context carries.
var errInterrupted = errno.NewStd(mysql.ErrQueryInterrupted)

// beginCommand marks the start of a command and returns its context,
// cancelled by KILL QUERY / KILL CONNECTION or by the client going away.
// The context is the connection's, made anew only after one was cancelled,
// so a command costs no allocation.
func (c *conn) beginCommand(ctx context.Context, cmd byte, info string, hasInfo bool) (context.Context, context.CancelCauseFunc) {
	if c.cmdCtx == nil || c.cmdCtx.Err() != nil {
		if c.cmdCancel != nil {
			c.cmdCancel(nil)
		}
		c.cmdCtx, c.cmdCancel = context.WithCancelCause(ctx)
	}
	p := &c.proc
	p.mu.Lock()
	p.command, p.since, p.info, p.hasInfo, p.cancel = cmd, time.Now(), info, hasInfo, c.cmdCancel
	p.mu.Unlock()
	return c.cmdCtx, c.cmdCancel
}

// endCommand marks the connection idle again and reports whether it was
// killed meanwhile.
func (c *conn) endCommand() (killed bool) {
	p := &c.proc
	var db string
	if c.sess != nil {
		db = c.sess.CurrentDB()
	}
	p.mu.Lock()
	p.command, p.since, p.info, p.hasInfo, p.cancel, p.db = mysql.ComSleep, time.Now(), "", false, nil, db
	killed = p.killed
	watchDone := p.watchDone
	p.watchDone = nil
	p.mu.Unlock()
	if watchDone != nil {
		c.stopWatch(watchDone)
	}
	return killed
}

// kill interrupts the connection's running command; unless query, the
// connection ends too (its session rolls back when its goroutine leaves).
func (c *conn) kill(query bool) {
	p := &c.proc
	p.mu.Lock()
	if p.cancel != nil {
		p.cancel(errInterrupted)
	}
	if !query {
		p.killed = true
	}
	p.mu.Unlock()
	if !query {
		// Wakes a goroutine blocked reading the next command, or writing.
		_ = c.nc.Close()
	}
}

func (c *conn) process(now time.Time) session.Process {
	p := &c.proc
	p.mu.Lock()
	defer p.mu.Unlock()
	cmd := mysql.Command2Str[p.command]
	state := ""
	if p.command != mysql.ComSleep {
		state = "executing"
	}
	return session.Process{ID: c.id, User: p.user, Host: c.hostPort, DB: p.db, Command: cmd,
		Time: int64(now.Sub(p.since) / time.Second), State: state, Info: p.info, HasInfo: p.hasInfo}
}

// Processes lists every authenticated connection of this server.
func (s *Server) Processes() []session.Process {
	now := time.Now()
	s.mu.Lock()
	conns := make([]*conn, 0, len(s.byID))
	for _, c := range s.byID {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	out := make([]session.Process, 0, len(conns))
	for _, c := range conns {
		out = append(out, c.process(now))
	}
	return out
}

// Kill interrupts connection id's statement, or ends the connection.
func (s *Server) Kill(id uint64, query bool) bool {
	s.mu.Lock()
	c := s.byID[id]
	s.mu.Unlock()
	if c == nil {
		return false
	}
	c.kill(query)
	return true
}

// register makes an authenticated connection visible to SHOW PROCESSLIST
// and KILL.
func (s *Server) register(c *conn) {
	s.mu.Lock()
	s.byID[c.id] = c
	s.mu.Unlock()
}

func (s *Server) unregister(c *conn) {
	s.mu.Lock()
	delete(s.byID, c.id)
	s.mu.Unlock()
}

// processKiller is a session that can carry out COM_PROCESS_KILL with its
// user's privileges.
type processKiller interface{ Kill(id uint64) error }

// handleProcessKill is COM_PROCESS_KILL: KILL CONNECTION id.
func (c *conn) handleProcessKill(body []byte) error {
	r := newReader(body)
	id := r.uint32()
	if !r.ok {
		return errMalformed
	}
	k, ok := c.sess.(processKiller)
	if !ok {
		return c.writeError(errno.NewStd(mysql.ErrUnknownCom))
	}
	if err := k.Kill(uint64(id)); err != nil {
		return c.writeError(err)
	}
	return c.writeOK()
}

// stmtText is the text of the prepared statement a COM_STMT_EXECUTE runs.
func (c *conn) stmtText(body []byte) (string, bool) {
	r := newReader(body)
	id := r.uint32()
	if st := c.stmts[id]; r.ok && st != nil {
		return st.sql, true
	}
	return "", false
}

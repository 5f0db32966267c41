package server

import (
	"context"
	"crypto/rand"
	"crypto/sha1"
	"errors"
	"io"
	"net"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/session"
	"github.com/shoaldb/shoal/types"
)

// serverCapabilities are the capability flags offered in the handshake.
// CLIENT_SSL is added when the server has a certificate (tls.go);
// CLIENT_COMPRESS, CLIENT_LOCAL_FILES, CLIENT_FOUND_ROWS and
// CLIENT_SESSION_TRACK are not offered.
const serverCapabilities = mysql.ClientLongPassword | mysql.ClientLongFlag |
	mysql.ClientConnectWithDB | mysql.ClientProtocol41 | mysql.ClientInteractive |
	mysql.ClientTransactions | mysql.ClientSecureConnection | mysql.ClientMultiStatements |
	mysql.ClientMultiResults | mysql.ClientPSMultiResults | mysql.ClientPluginAuth |
	mysql.ClientConnectAtts | mysql.ClientPluginAuthLenencClientData | mysql.ClientDeprecateEOF

// defaultCollationID is the collation announced in the handshake
// (utf8mb4_bin).
const defaultCollationID = 46

// errQuit ends the command loop without an error (COM_QUIT).
var errQuit = errors.New("quit")

// conn is one client connection.
type conn struct {
	srv  *Server
	nc   net.Conn
	pkt  *packetIO
	id   uint64
	host string
	// hostPort is the client's address as SHOW PROCESSLIST shows it.
	hostPort string
	proc     processState
	// idleDeadline: a wait_timeout read deadline (idleFor, set at
	// idleArmed) is set.
	idleDeadline bool
	idleFor      time.Duration
	idleArmed    time.Time
	// cmdCtx is the running command's context (process.go).
	cmdCtx    context.Context
	cmdCancel context.CancelCauseFunc

	capability uint32
	user       string
	salt       [20]byte
	multiStmts bool
	sess       Session
	// transport: TLS or not (startTLS), passed to the backend's sessions.
	transport session.Transport

	stmts map[uint32]*stmt
	rows  []types.Row // reused batch for ResultSet.Next
}

func newConn(s *Server, nc net.Conn, id uint64) *conn {
	host, hostPort := "localhost", "localhost"
	if ta, ok := nc.RemoteAddr().(*net.TCPAddr); ok {
		host, hostPort = ta.IP.String(), ta.String()
	}
	c := &conn{
		srv:      s,
		nc:       nc,
		pkt:      newPacketIO(nc, preAuthMaxPacket),
		id:       id,
		host:     host,
		hostPort: hostPort,
		stmts:    make(map[uint32]*stmt),
		rows:     make([]types.Row, 0, 128),
	}
	return c
}

func (c *conn) deprecateEOF() bool { return c.capability&mysql.ClientDeprecateEOF != 0 }

// serve runs the connection until the client quits, the link fails or the
// server closes. Panics are recovered here and end only this connection.
func (c *conn) serve(ctx context.Context) {
	defer func() {
		if r := recover(); r != nil {
			c.srv.log.Error("server: panic serving connection", "conn", c.id, "panic", r, "stack", string(debug.Stack()))
			// Drop whatever half-written response is pending and tell the
			// client, if the link still works.
			c.pkt.wbuf = c.pkt.wbuf[:0]
			_ = c.writeError(malformedError())
			_ = c.pkt.flush()
		}
		c.close()
	}()

	_ = c.nc.SetDeadline(time.Now().Add(c.srv.cfg.ConnectTimeout))
	if err := c.handshake(ctx); err != nil {
		c.srv.log.Debug("server: handshake failed", "conn", c.id, "host", c.host, "err", err)
		return
	}
	_ = c.nc.SetDeadline(time.Time{})
	ctx = c.sessionContext(ctx)

	for {
		c.pkt.seq = 0
		c.armIdleTimeout()
		data, err := c.pkt.readPacket()
		if err != nil {
			if c.idleDeadline && isTimeout(err) {
				// wait_timeout: say why, then close (rolling back).
				_ = c.writeError(errClientInteractionTimeout())
				_ = c.pkt.flush()
				return
			}
			c.fatal(err)
			return
		}
		if err := c.dispatch(ctx, data); err != nil {
			if err != errQuit {
				c.fatal(err)
			}
			return
		}
		if err := c.pkt.flush(); err != nil {
			return
		}
	}
}

// fatal reports a connection-ending error to the client where the protocol
// allows it.
func (c *conn) fatal(err error) {
	var se *errno.SQLError
	switch {
	case errors.Is(err, errPacketTooLarge):
		se = errno.NewStd(mysql.ErrNetPacketTooLarge)
	case errors.Is(err, errOutOfOrder):
		se = errno.NewStd(mysql.ErrNetPacketsOutOfOrder)
	case errors.Is(err, errMalformed):
		se = malformedError()
	default:
		if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
			c.srv.log.Debug("server: connection error", "conn", c.id, "err", err)
		}
		return
	}
	c.pkt.wbuf = c.pkt.wbuf[:0]
	_ = c.writeError(se)
	_ = c.pkt.flush()
}

func malformedError() *errno.SQLError {
	e := errno.NewStd(mysql.ErrMalformedPacket)
	e.State = "08S01"
	return e
}

func (c *conn) close() {
	c.srv.unregister(c)
	if c.cmdCancel != nil {
		c.cmdCancel(nil)
	}
	if c.sess != nil {
		c.sess.Close()
		c.sess = nil
	}
	c.nc.Close()
}

// ---- handshake ----

func (c *conn) newSalt() {
	if _, err := rand.Read(c.salt[:]); err != nil {
		panic(err)
	}
	// Like MySQL: 7-bit, no NUL (the salt is NUL-terminated on the wire)
	// and no '$'.
	for i, b := range c.salt {
		b &= 0x7f
		if b == 0 || b == '$' {
			b++
		}
		c.salt[i] = b
	}
}

func (c *conn) writeGreeting() error {
	p := c.pkt
	start := p.startPacket()
	b := p.wbuf
	b = append(b, 10)
	b = append(b, c.srv.cfg.ServerVersion...)
	b = append(b, 0)
	b = appendUint32(b, uint32(c.id))
	b = append(b, c.salt[:8]...)
	b = append(b, 0)
	b = appendUint16(b, uint16(c.srv.capabilities()&0xffff))
	b = append(b, defaultCollationID)
	b = appendUint16(b, mysql.ServerStatusAutocommit)
	b = appendUint16(b, uint16(c.srv.capabilities()>>16))
	b = append(b, byte(len(c.salt)+1))
	b = append(b, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	b = append(b, c.salt[8:]...)
	b = append(b, 0)
	b = append(b, mysql.AuthNativePassword...)
	b = append(b, 0)
	p.wbuf = b
	if err := p.endPacket(start); err != nil {
		return err
	}
	return p.flush()
}

// handshakeResponse is the parsed HandshakeResponse41.
type handshakeResponse struct {
	capability uint32
	user       string
	auth       []byte
	db         string
	plugin     string
}

func parseHandshakeResponse(data []byte) (handshakeResponse, error) {
	var hr handshakeResponse
	r := newReader(data)
	hr.capability = r.uint32()
	if !r.ok {
		return hr, errMalformed
	}
	if hr.capability&mysql.ClientProtocol41 == 0 {
		return hr, errno.New(mysql.ErrNotSupportedAuthMode, "Client does not support protocol 4.1; consider upgrading MySQL client")
	}
	r.uint32() // max packet size
	r.byte1()  // character set
	r.bytes(23)
	if !r.ok {
		return hr, errMalformed
	}
	if hr.capability&mysql.ClientSSL != 0 && r.empty() {
		// An SSLRequest to a server without TLS (CLIENT_SSL not offered),
		// or a second one.
		return hr, errno.New(mysql.ErrHandshake, "SSL is not supported by this server")
	}
	hr.user = string(r.nulString())
	switch {
	case hr.capability&mysql.ClientPluginAuthLenencClientData != 0:
		n, isNull := r.lenEncInt()
		if isNull || n > uint64(len(r.b)) {
			return hr, errMalformed
		}
		hr.auth = r.bytes(int(n))
	case hr.capability&mysql.ClientSecureConnection != 0:
		hr.auth = r.bytes(int(r.byte1()))
	default:
		hr.auth = r.nulString()
	}
	if !r.ok {
		return hr, errMalformed
	}
	if hr.capability&mysql.ClientConnectWithDB != 0 && !r.empty() {
		hr.db = string(r.nulString())
	}
	if hr.capability&mysql.ClientPluginAuth != 0 && !r.empty() {
		hr.plugin = string(r.nulString())
	}
	// CLIENT_CONNECT_ATTRS: the rest is key/value pairs, which we ignore.
	hr.auth = append([]byte(nil), hr.auth...)
	return hr, nil
}

func (c *conn) handshake(ctx context.Context) error {
	c.newSalt()
	if err := c.writeGreeting(); err != nil {
		return err
	}
	data, err := c.pkt.readPacket()
	if err != nil {
		c.fatalBeforeAuth(err)
		return err
	}
	if c.isSSLRequest(data) {
		if err := c.startTLS(); err != nil {
			return err
		}
		if data, err = c.pkt.readPacket(); err != nil {
			c.fatal(err)
			return err
		}
	}
	hr, err := parseHandshakeResponse(data)
	if err != nil {
		se := errno.NewStd(mysql.ErrHandshake)
		if !errors.Is(err, errMalformed) {
			se = errno.ToSQLError(err)
		}
		_ = c.writeError(se)
		_ = c.pkt.flush()
		return err
	}
	c.capability = hr.capability & (serverCapabilities | mysql.ClientSSL)
	c.user = hr.user
	c.multiStmts = c.capability&mysql.ClientMultiStatements != 0

	if err := c.authenticate(hr.user, hr.auth, hr.plugin); err != nil {
		return err
	}
	if err := c.checkConnectionLimit(hr.user); err != nil {
		return err
	}
	sess, err := c.srv.backend.NewSession(c.sessionContext(ctx), hr.user, c.host, hr.db)
	if err != nil {
		_ = c.writeError(err)
		_ = c.pkt.flush()
		return err
	}
	sess.SetConnectionID(c.id)
	c.setSession(sess)
	if it, ok := sess.(idleTimeouter); ok && c.capability&mysql.ClientInteractive != 0 {
		it.SetInteractive()
	}
	c.proc.user, c.proc.db, c.proc.since = hr.user, sess.CurrentDB(), time.Now()
	c.srv.register(c)
	if err := c.writeOK(); err != nil {
		return err
	}
	return c.pkt.flush()
}

// handleChangeUser implements COM_CHANGE_USER: authenticate again and
// replace the session. A failure ends the connection, as the old identity
// must not silently carry on.
func (c *conn) handleChangeUser(ctx context.Context, body []byte) error {
	r := newReader(body)
	user := string(r.nulString())
	var auth []byte
	if c.capability&mysql.ClientSecureConnection != 0 {
		auth = r.bytes(int(r.byte1()))
	} else {
		auth = r.nulString()
	}
	if !r.ok {
		return errMalformed
	}
	auth = append([]byte(nil), auth...)
	db := string(r.nulString())
	var plugin string
	if len(r.b) >= 2 {
		r.uint16() // character set
		if c.capability&mysql.ClientPluginAuth != 0 {
			plugin = string(r.nulString())
		}
	}
	if err := c.authenticate(user, auth, plugin); err != nil {
		return errQuit
	}
	sess, err := c.srv.backend.NewSession(ctx, user, c.host, db)
	if err != nil {
		_ = c.writeError(err)
		_ = c.pkt.flush()
		return errQuit
	}
	c.sess.Close()
	c.stmts = make(map[uint32]*stmt)
	c.user = user
	c.proc.mu.Lock()
	c.proc.user = user
	c.proc.mu.Unlock()
	sess.SetConnectionID(c.id)
	c.setSession(sess)
	return c.writeOK()
}

// scrambleNativePassword is the client side of mysql_native_password (used
// by tests).
func scrambleNativePassword(salt []byte, password string) []byte {
	if password == "" {
		return nil
	}
	h1 := sha1.Sum([]byte(password))
	h2 := sha1.Sum(h1[:])
	h := sha1.New()
	h.Write(salt)
	h.Write(h2[:])
	out := h.Sum(nil)
	for i := range out {
		out[i] ^= h1[i]
	}
	return out
}

// ---- generic responses ----

// writeOK writes an OK packet with the session's outcome of the last
// statement.
func (c *conn) writeOK() error {
	return c.writeOKWith(c.sess.AffectedRows(), c.sess.LastInsertID(), c.sess.Status(), c.sess.WarningCount())
}

func (c *conn) writeOKWith(affected, lastID uint64, status, warnings uint16) error {
	p := c.pkt
	start := p.startPacket()
	b := append(p.wbuf, 0x00)
	b = appendLenEncInt(b, affected)
	b = appendLenEncInt(b, lastID)
	b = appendUint16(b, status)
	b = appendUint16(b, warnings)
	p.wbuf = b
	return p.endPacket(start)
}

// writeEnd ends a sequence of rows or definitions: an EOF packet, or with
// CLIENT_DEPRECATE_EOF an OK packet with the 0xfe header.
func (c *conn) writeEnd(status, warnings uint16) error {
	p := c.pkt
	start := p.startPacket()
	b := append(p.wbuf, 0xfe)
	if c.deprecateEOF() {
		b = append(b, 0, 0)
		b = appendUint16(b, status)
		b = appendUint16(b, warnings)
	} else {
		b = appendUint16(b, warnings)
		b = appendUint16(b, status)
	}
	p.wbuf = b
	return p.endPacket(start)
}

// writeEOF writes a classic EOF packet (after definitions when the client
// did not set CLIENT_DEPRECATE_EOF).
func (c *conn) writeEOF(status, warnings uint16) error {
	p := c.pkt
	start := p.startPacket()
	b := append(p.wbuf, 0xfe)
	b = appendUint16(b, warnings)
	b = appendUint16(b, status)
	p.wbuf = b
	return p.endPacket(start)
}

// writeError writes an ERR packet for err, converted by errno.ToSQLError.
func (c *conn) writeError(err error) error {
	se := errno.ToSQLError(err)
	p := c.pkt
	start := p.startPacket()
	b := append(p.wbuf, 0xff)
	b = appendUint16(b, se.Code)
	b = append(b, '#')
	state := se.State
	if len(state) != 5 {
		state = (state + "HY000")[:5]
	}
	b = append(b, state...)
	msg := se.Message
	if len(msg) > 512 {
		msg = msg[:512]
	}
	b = append(b, msg...)
	p.wbuf = b
	return p.endPacket(start)
}

// ---- command dispatch ----

func (c *conn) dispatch(ctx context.Context, data []byte) error {
	if len(data) == 0 {
		return errMalformed
	}
	cmd, body := data[0], data[1:]
	c.srv.questions.Add(1)
	if cmd == mysql.ComQuit {
		return errQuit
	}
	var info string
	hasInfo := false
	switch cmd {
	case mysql.ComQuery:
		info, hasInfo = string(body), true
	case mysql.ComStmtExecute:
		info, hasInfo = c.stmtText(body)
	}
	// Only statements (hasInfo) are watched for a disconnect (idle.go):
	// other commands may read from the client themselves (COM_CHANGE_USER's
	// auth switch).
	cctx, _ := c.beginCommand(ctx, cmd, info, hasInfo)
	err := c.runCommand(cctx, cmd, body, info)
	if c.endCommand() && err == nil {
		return errQuit // KILL CONNECTION
	}
	return err
}

func (c *conn) runCommand(ctx context.Context, cmd byte, body []byte, query string) error {
	switch cmd {
	case mysql.ComQuery:
		return c.handleQuery(ctx, query)
	case mysql.ComProcessKill:
		return c.handleProcessKill(body)
	case mysql.ComPing:
		return c.writeOK()
	case mysql.ComInitDB:
		if err := c.sess.UseDB(ctx, string(body)); err != nil {
			return c.writeError(err)
		}
		return c.writeOK()
	case mysql.ComStmtPrepare:
		return c.handleStmtPrepare(ctx, string(body))
	case mysql.ComStmtExecute:
		return c.handleStmtExecute(ctx, body)
	case mysql.ComStmtSendLongData:
		return c.handleStmtSendLongData(body)
	case mysql.ComStmtClose:
		return c.handleStmtClose(body)
	case mysql.ComStmtReset:
		return c.handleStmtReset(body)
	case mysql.ComFieldList:
		return c.handleFieldList(ctx, body)
	case mysql.ComSetOption:
		r := newReader(body)
		opt := r.uint16()
		if !r.ok {
			return errMalformed
		}
		switch opt {
		case 0:
			c.multiStmts = true
		case 1:
			c.multiStmts = false
		default:
			return c.writeError(errno.NewStd(mysql.ErrUnknownCom))
		}
		return c.writeEOF(c.sess.Status(), 0)
	case mysql.ComStatistics:
		return c.handleStatistics()
	case mysql.ComResetConnection:
		return c.handleResetConnection(ctx)
	case mysql.ComChangeUser:
		return c.handleChangeUser(ctx, body)
	default:
		return c.writeError(errno.NewStd(mysql.ErrUnknownCom))
	}
}

func (c *conn) handleStatistics() error {
	s := c.srv
	up := time.Since(s.start).Seconds()
	q := s.questions.Load()
	qps := 0.0
	if up > 0 {
		qps = float64(q) / up
	}
	p := c.pkt
	start := p.startPacket()
	b := p.wbuf
	b = append(b, "Uptime: "...)
	b = strconv.AppendInt(b, int64(up), 10)
	b = append(b, "  Threads: "...)
	b = strconv.AppendInt(b, int64(s.ConnCount()), 10)
	b = append(b, "  Questions: "...)
	b = strconv.AppendUint(b, q, 10)
	b = append(b, "  Slow queries: 0  Opens: 0  Flush tables: 0  Open tables: 0  Queries per second avg: "...)
	b = strconv.AppendFloat(b, qps, 'f', 3, 64)
	p.wbuf = b
	return p.endPacket(start)
}

// handleResetConnection implements COM_RESET_CONNECTION by replacing the
// session with a fresh one for the same user and current database.
func (c *conn) handleResetConnection(ctx context.Context) error {
	db := c.sess.CurrentDB()
	sess, err := c.srv.backend.NewSession(ctx, c.user, c.host, db)
	if err != nil {
		return c.writeError(err)
	}
	c.sess.Close()
	c.stmts = make(map[uint32]*stmt)
	sess.SetConnectionID(c.id)
	c.setSession(sess)
	return c.writeOK()
}

func (c *conn) handleFieldList(ctx context.Context, body []byte) error {
	r := newReader(body)
	table := string(r.nulString())
	fields, err := c.sess.FieldList(ctx, table)
	if err != nil {
		return c.writeError(err)
	}
	for _, f := range fields {
		p := c.pkt
		start := p.startPacket()
		p.wbuf = appendColumnDef(p.wbuf, f)
		p.wbuf = append(p.wbuf, 0xfb) // default value: NULL
		if err := p.endPacket(start); err != nil {
			return err
		}
	}
	return c.writeEnd(c.sess.Status(), 0)
}

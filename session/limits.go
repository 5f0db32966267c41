package session

import (
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
)

// Limits that keep one client from taking the node down, as MySQL's system
// variables: max_connections (the protocol layer asks the Backend, see
// server.ConnectionLimiter), max_allowed_packet (read once per session:
// MySQL makes the session value read-only and copies the global at
// connect) and max_prepared_stmt_count (counted over the whole node).

func init() {
	sysVars["max_connections"] = sysVar{def: "151", numeric: true, globalOnly: true}
	sysVars["max_prepared_stmt_count"] = sysVar{def: "16382", numeric: true, globalOnly: true}
}

// intVarRange is the range (and block size) MySQL accepts for a numeric
// variable; a value outside is clamped with warning 1292, as MySQL does.
type intVarRange struct {
	min, max, block int64
}

var intVarRanges = map[string]intVarRange{
	"max_connections":         {1, 100000, 1},
	"max_prepared_stmt_count": {0, 4194304, 1},
	"max_allowed_packet":      {1024, 1 << 30, 1024},
	"group_concat_max_len":    {4, 1<<63 - 1, 1},
	"max_error_count":         {0, 65535, 1},
}

// readOnlySessionVars may only be set globally; SET SESSION is 1621.
var readOnlySessionVars = map[string]bool{"max_allowed_packet": true}

// checkLimitVar validates SET of a bounded variable. It returns the value
// to store, clamped into range with a 1292 warning where MySQL clamps.
func (s *Session) checkLimitVar(name, val string, global bool) (string, error) {
	if !global && readOnlySessionVars[name] {
		return "", errno.New(mysql.ErrVariableIsReadonly, "SESSION variable '%s' is read-only. Use SET GLOBAL to assign the value", name)
	}
	r, ok := intVarRanges[name]
	if !ok {
		return val, nil
	}
	n, err := strconv.ParseInt(val, 10, 64)
	if err != nil {
		if _, ferr := strconv.ParseFloat(val, 64); ferr == nil && !strings.ContainsAny(val, ".eE") {
			n = r.max // an integer beyond int64
		} else {
			return "", errno.NewStd(mysql.ErrWrongTypeForVar, name)
		}
	}
	clamped := max(r.min, min(n, r.max))
	clamped -= clamped % r.block
	if clamped != n || err != nil {
		s.addWarnings(errno.NewStd(mysql.ErrTruncatedWrongValue, name, val))
	}
	return strconv.FormatInt(clamped, 10), nil
}

// globalInt reads a numeric global variable.
func (b *Backend) globalInt(name string) int64 {
	v, ok := b.globals.get(name)
	if !ok {
		v = b.varDefault(name)
	}
	n, _ := strconv.ParseInt(v, 10, 64)
	return n
}

// MaxConnections is max_connections (server.ConnectionLimiter).
func (b *Backend) MaxConnections() int { return int(b.globalInt("max_connections")) }

// HasConnectionAdmin reports whether user, logging in from host, may take
// the connection beyond max_connections: its account, with its default
// roles, holds CONNECTION_ADMIN or SUPER (as MySQL).
func (b *Backend) HasConnectionAdmin(user, host string) bool {
	snap := b.privs.Snapshot()
	a := snap.Match(user, host)
	if a == nil {
		return false
	}
	m := snap.Merge(a.Ident, a.DefaultRoles)
	return m.Global.Has(mysql.SuperPriv) || m.HasDynamic("CONNECTION_ADMIN")
}

// initLimitVars copies the global max_allowed_packet into the session, as
// MySQL does at connect.
func (s *Session) initLimitVars() {
	s.setSessionVar("max_allowed_packet", strconv.FormatInt(s.b.globalInt("max_allowed_packet"), 10))
}

// MaxAllowedPacket is the session's max_allowed_packet
// (server.PacketLimiter).
func (s *Session) MaxAllowedPacket() int {
	n, _ := strconv.Atoi(s.vars["max_allowed_packet"])
	return n
}

// preparedCounter counts prepared statements over the node.
type preparedCounter struct{ n atomic.Int64 }

// reservePrepared takes a slot for one more prepared statement, or fails
// with 1461 when max_prepared_stmt_count are open.
func (s *Session) reservePrepared() error {
	limit := s.b.globalInt("max_prepared_stmt_count")
	if s.b.prepared.n.Add(1) > limit {
		s.b.prepared.n.Add(-1)
		return errno.New(mysql.ErrMaxPreparedStmtCountReached,
			"Can't create more than max_prepared_stmt_count statements (current value: %d)", limit)
	}
	return nil
}

func (s *Session) releasePrepared(n int) { s.b.prepared.n.Add(-int64(n)) }

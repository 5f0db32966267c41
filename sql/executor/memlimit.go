package executor

import "sync/atomic"

// The server memory limit (tidb_server_memory_limit): every statement's
// tracked memory (what its sorts, hash aggregations and joins hold, see
// memquota.go) also counts in one ServerMemory per server. A statement
// reports its growth in steps of serverMemStep bytes with one atomic add,
// so operators pay nothing per row and statements that buffer no rows
// (point selects) never touch the shared counter. When a step takes the
// total past the limit, that statement's operator is told it is over, as
// over its own quota: it spills if it can, else the statement fails with
// 8176. (TiDB instead cancels the statement using the most memory; here
// the one whose growth crosses the limit pays.)

// serverMemStep is how far a statement's tracked memory moves before the
// server-wide counter hears of it.
const serverMemStep = 16 << 10

// ServerMemory is a server's tracked memory and its limit.
type ServerMemory struct {
	used atomic.Int64
	// Limit returns the limit in bytes, 0 for none; it is asked only when
	// a statement reports growth.
	Limit func() int64
}

// Used is the tracked memory of all the server's statements.
func (m *ServerMemory) Used() int64 { return m.used.Load() }

// syncServerMem reports the statement's tracked memory to the server
// counter and whether the server is now over its limit.
func (c *Context) syncServerMem() (over bool) {
	delta := c.memUsed - c.serverHeld
	c.serverHeld = c.memUsed
	total := c.ServerMem.used.Add(delta)
	if delta <= 0 || c.ServerMem.Limit == nil {
		return false
	}
	limit := c.ServerMem.Limit()
	return limit > 0 && total > limit
}

// ReleaseServerMem returns what the statement still reports to the server
// counter (an operator that was not closed) and stops reporting; the
// session calls it when the statement ends.
func (c *Context) ReleaseServerMem() {
	if c.ServerMem != nil && c.serverHeld != 0 {
		c.ServerMem.used.Add(-c.serverHeld)
		c.serverHeld = 0
	}
	c.ServerMem = nil
}

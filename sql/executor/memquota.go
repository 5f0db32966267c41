package executor

import (
	"unsafe"

	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/types"
)

// Memory quota of a statement (tidb_mem_quota_query): sort, hash
// aggregation and hash join count what they hold in Context.memUsed. Over
// Context.MemQuota a sort spills sorted runs to disk, a hash aggregation
// and a hash join spill partitions (hash_agg_spill.go,
// hash_join_spill.go); a nested-loop join's inner side cannot spill and
// fails with 8175.

const datumSize = int64(unsafe.Sizeof(types.Datum{}))

// rowMem estimates the memory a row holds: its slice, datums and the bytes
// of its strings.
func rowMem(row types.Row) int64 {
	n := 24 + int64(len(row))*datumSize
	for i := range row {
		if k := row[i].Kind(); k == types.KindString || k == types.KindBytes {
			n += int64(len(row[i].Bytes()))
		}
	}
	return n
}

// consumeMem counts n more bytes held by the statement and reports whether
// it is now over its quota.
func (c *Context) consumeMem(n int64) (over bool) {
	c.memUsed += n
	if c.ServerMem != nil && c.memUsed-c.serverHeld >= serverMemStep && c.syncServerMem() {
		return true
	}
	return c.MemQuota > 0 && c.memUsed > c.MemQuota
}

// releaseMem returns n bytes an operator no longer holds.
func (c *Context) releaseMem(n int64) {
	c.memUsed -= n
	if c.ServerMem != nil && (c.serverHeld-c.memUsed >= serverMemStep || c.memUsed == 0 && c.serverHeld != 0) {
		c.syncServerMem()
	}
}

// MemUsed is what the statement's operators hold now (for tests).
func (c *Context) MemUsed() int64 { return c.memUsed }

// errOverMem is the error of a statement that cannot spill: TiDB's 8175
// over its own tidb_mem_quota_query, else 8176 (the server is over
// tidb_server_memory_limit, memlimit.go).
func (c *Context) errOverMem() error {
	if c.MemQuota > 0 && c.memUsed > c.MemQuota {
		return errno.MemoryExceedForQuery()
	}
	return errno.MemoryExceedForInstance()
}

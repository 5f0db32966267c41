package session

import (
	"strconv"
	"strings"
	"sync"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/sql/executor"
)

// tidb_server_memory_limit (GLOBAL, as TiDB's): the memory all statements
// of this SQL node may track together (sql/executor/memlimit.go). 0, the
// default, is no limit; "N%" (1 to 99) is that share of the machine's
// memory; else bytes, optionally with a KB, MB, GB or TB suffix (powers of
// 1024), stored as the byte count. Unlike TiDB, values under 512 MiB are
// taken as given (small nodes, tests).

func init() {
	sysVars["tidb_server_memory_limit"] = sysVar{def: "0", globalOnly: true}
}

var byteSizeSuffixes = []struct {
	suffix string
	shift  uint
}{{"KB", 10}, {"MB", 20}, {"GB", 30}, {"TB", 40}}

// parseServerMemoryLimit returns the limit val sets, in bytes, and its
// stored form.
func parseServerMemoryLimit(val string) (limit int64, norm string, ok bool) {
	v := strings.ToUpper(strings.TrimSpace(val))
	if pct, isPct := strings.CutSuffix(v, "%"); isPct {
		p, err := strconv.ParseFloat(pct, 64)
		total := machineMemory()
		if err != nil || p < 1 || p > 99 || total == 0 {
			return 0, "", false
		}
		norm = strconv.FormatFloat(p, 'f', -1, 64) + "%"
		return int64(float64(total) * p / 100), norm, true
	}
	shift := uint(0)
	for _, s := range byteSizeSuffixes {
		if n, cut := strings.CutSuffix(v, s.suffix); cut {
			v, shift = n, s.shift
			break
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || n > (1<<62)>>shift {
		return 0, "", false
	}
	n <<= shift
	return n, strconv.FormatInt(n, 10), true
}

func normalizeServerMemoryLimit(name, val string) (string, error) {
	_, norm, ok := parseServerMemoryLimit(val)
	if !ok {
		return "", errno.NewStd(mysql.ErrWrongValueForVar, name, val)
	}
	return norm, nil
}

// serverMemoryLimit is the node's limit in bytes (0: none); the executor
// asks it only when a statement's tracked memory grows by a step.
func (b *Backend) serverMemoryLimit() int64 {
	v, ok := b.globals.get("tidb_server_memory_limit")
	if !ok {
		v = b.varDefault("tidb_server_memory_limit")
	}
	n, _, _ := parseServerMemoryLimit(v)
	return n
}

// ServerMemoryUsed is the memory the node's statements track now.
func (b *Backend) ServerMemoryUsed() int64 { return b.serverMem.Used() }

// trackStatementMemory makes ec count against the node's limit. The
// previous statement's context stops counting: its operators release what
// they hold when closed, and anything left (an operator never closed) is
// returned here rather than held against the node for ever.
func (s *Session) trackStatementMemory(ec *executor.Context) {
	s.releaseStatementMemory()
	ec.ServerMem = &s.b.serverMem
	s.memStmt = ec
}

func (s *Session) releaseStatementMemory() {
	if s.memStmt != nil {
		s.memStmt.ReleaseServerMem()
		s.memStmt = nil
	}
}

var machineMemoryOnce = sync.OnceValue(readMachineMemory)

// machineMemory is the machine's total memory in bytes, 0 if unknown.
func machineMemory() uint64 { return machineMemoryOnce() }

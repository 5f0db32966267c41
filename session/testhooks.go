package session

import (
	"sync/atomic"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// stmtHook, when set, runs before every statement. It exists for tests
// only (one injects a panic mid-transaction to check that the protocol
// layer's recovery closes the session and releases its locks); production
// code never sets it.
var stmtHook atomic.Pointer[func(ast.StmtNode)]

// SetStatementHookForTesting installs f (nil removes it). Tests only.
func SetStatementHookForTesting(f func(ast.StmtNode)) {
	if f == nil {
		stmtHook.Store(nil)
		return
	}
	stmtHook.Store(&f)
}

func runStmtHook(node ast.StmtNode) {
	if f := stmtHook.Load(); f != nil {
		(*f)(node)
	}
}

package session

import (
	"context"
	"errors"
	"time"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/sql/executor"
)

// errMaxExecTime is the cause a SELECT's context carries when
// max_execution_time (or its hint) ran out.
var errMaxExecTime = errno.NewStd(mysql.ErrMaxExecTimeExceeded)

// maxExecutionTime is the time limit of a top-level SELECT: its
// MAX_EXECUTION_TIME(ms) hint, else max_execution_time; 0 is none. As in
// MySQL only SELECTs are limited (set operations by the variable alone).
func (s *Session) maxExecutionTime(node ast.StmtNode) time.Duration {
	if sel, ok := node.(*ast.SelectStmt); ok {
		for _, h := range sel.TableHints {
			if h.HintName.L == "max_execution_time" {
				if ms, ok := h.HintData.(uint64); ok {
					return time.Duration(ms) * time.Millisecond
				}
			}
		}
	} else if _, ok := node.(*ast.SetOprStmt); !ok {
		return 0
	}
	return s.hot().maxExecution
}

// withMaxExecutionTime bounds a SELECT's context by maxExecutionTime; the
// returned release (nil when there is no bound) ends the bound when the
// result set closes.
func (s *Session) withMaxExecutionTime(ctx context.Context, node ast.StmtNode) (context.Context, context.CancelFunc) {
	d := s.maxExecutionTime(node)
	if d <= 0 {
		return ctx, nil
	}
	return context.WithTimeoutCause(ctx, d, errMaxExecTime)
}

// interruptedErr turns the failure of a statement whose context ended
// (KILL QUERY, max_execution_time, the client leaving) into the error that
// says why; other errors pass through.
func interruptedErr(ctx context.Context, err error) error {
	if err == nil || ctx.Err() == nil {
		return err
	}
	var se *errno.SQLError
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.As(err, &se) && (se.Code == mysql.ErrQueryInterrupted || se.Code == mysql.ErrMaxExecTimeExceeded) {
		return executor.InterruptError(ctx)
	}
	return err
}

// memQuota is tidb_mem_quota_query in bytes (0 or less: no quota).
func (s *Session) memQuota() int64 {
	return s.hot().memQuota
}

// uninterrupted is the context of a commit: as in MySQL, KILL and
// max_execution_time do not stop a commit once it started (a commit cut
// between its phases could only report an undetermined outcome).
func uninterrupted(ctx context.Context) context.Context { return context.WithoutCancel(ctx) }

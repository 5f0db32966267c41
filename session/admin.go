package session

import (
	"context"
	"fmt"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/sql/executor"
	"github.com/shoaldb/shoal/sql/expression"
	"github.com/shoaldb/shoal/sql/planner"
)

func buildScalar(s *Session, e ast.ExprNode) (expression.Expr, *planner.Statement, error) {
	return planner.BuildScalar(s.planContext(), e)
}

// runAdmin handles ADMIN CHECK TABLE: every index must hold exactly the
// entries its table's rows imply, read in one snapshot.
func (s *Session) runAdmin(ctx context.Context, x *ast.AdminStmt) (ResultSet, error) {
	if x.Tp != ast.AdminCheckTable {
		return nil, errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support this ADMIN statement")
	}
	is := s.schema()
	txn, err := s.b.store.Begin(ctx, kv.TxnOptions{Mode: kv.Optimistic})
	if err != nil {
		return nil, toSQLError(err)
	}
	defer txn.Rollback()
	for _, tn := range x.Tables {
		db := tn.Schema.O
		if db == "" {
			db = s.db
		}
		t := is.Table(db, tn.Name.O)
		if t == nil {
			return nil, errno.NewStd(mysql.ErrNoSuchTable, db, tn.Name.O)
		}
		if err := executor.CheckTable(ctx, txn, t); err != nil {
			return nil, errno.New(8003, "%s", fmt.Sprintf("ADMIN CHECK TABLE %s.%s: %v", db, t.Name, err))
		}
	}
	return nil, nil
}

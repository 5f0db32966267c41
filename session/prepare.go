package session

import (
	"context"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/sql/planner"
	"github.com/shoaldb/shoal/sql/sqlmode"
	"github.com/shoaldb/shoal/types"
)

// preparedStmt is a prepared statement with its cached plan. The plan is
// valid while the schema version, current database and sql_mode it was
// built under are unchanged; otherwise it is rebuilt on execution. (The
// statement keeps the parse of the sql_mode it was prepared under, as in
// MySQL.)
type preparedStmt struct {
	id        uint32
	node      ast.StmtNode
	numParams int
	plan      *planner.Statement
	version   int64
	tempGen   uint64 // the session's temporary tables when planned
	db        string
	mode      sqlmode.Mode
	fields    []*Field
	allowed   privVerdict
}

func planned(node ast.StmtNode) bool {
	if describedTable(node) != nil {
		return false // runs as SHOW COLUMNS
	}
	switch node.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt, *ast.InsertStmt, *ast.UpdateStmt, *ast.DeleteStmt, *ast.ExplainStmt:
		return true
	}
	return false
}

// Prepare parses and plans a statement.
func (s *Session) Prepare(ctx context.Context, sql string) (*PreparedInfo, error) {
	stmts, err := s.parse(sql)
	if err != nil {
		s.beginFailedParse()
		s.addError(err)
		return nil, err
	}
	if len(stmts) != 1 {
		return nil, errno.New(mysql.ErrUnknown, "Prepared statement contains multiple statements")
	}
	// Preparing is a statement of its own for the diagnostics area (its
	// warning count goes in the prepare response).
	s.beginStatement(stmts[0])
	// Executions with the cached plan skip the ledger: judge it here.
	if err := s.checkLedger(stmts[0]); err != nil {
		return nil, err
	}
	if err := s.reservePrepared(); err != nil {
		return nil, err
	}
	stored := false
	defer func() {
		if !stored {
			s.releasePrepared(1)
		}
	}()
	s.nextStmtID++
	id := s.nextStmtID
	ps := &preparedStmt{id: id, node: stmts[0], numParams: planner.CountParams(stmts[0])}
	if planned(ps.node) {
		before := s.b.catalog.InfoSchema().Version()
		plan, err := s.replan(ps)
		if err != nil && s.refreshedAfter(ctx, err, before) {
			plan, err = s.replan(ps)
		}
		if err != nil {
			s.addError(err)
			return nil, err
		}
		if plan.Root != nil {
			switch plan.Root.(type) {
			case *planner.Insert, *planner.Update, *planner.Delete:
			default:
				ps.fields = fieldsOf(plan.Root.Columns())
			}
		}
	}
	s.prepared[id] = ps
	stored = true
	return &PreparedInfo{ID: id, NumParams: ps.numParams, Fields: ps.fields}, nil
}

// replan builds the statement's plan and caches it (subject to the plan
// cache's bound); it returns the plan for this execution either way.
func (s *Session) replan(ps *preparedStmt) (*planner.Statement, error) {
	pc := s.planContext()
	is := pc.Schema
	plan, err := planner.Build(pc, ps.node)
	if err != nil {
		return nil, err
	}
	if pc.ReadTS != 0 {
		return plan, nil // fit for this transaction's snapshot only
	}
	ps.plan, ps.version, ps.tempGen, ps.db, ps.mode = plan, is.Version(), s.temp.Gen(), s.db, s.sqlMode()
	s.plans.add(ps, s.planCacheSize())
	return plan, nil
}

// ExecutePrepared runs a prepared statement with parameters.
func (s *Session) ExecutePrepared(ctx context.Context, id uint32, params []types.Datum) (ResultSet, error) {
	ps, ok := s.prepared[id]
	if !ok {
		return nil, errno.New(mysql.ErrUnknownStmtHandler, "Unknown prepared statement handler (%d) given to mysqld_stmt_execute", id)
	}
	if len(params) != ps.numParams {
		return nil, errno.New(mysql.ErrWrongArguments, "Incorrect arguments to mysqld_stmt_execute")
	}
	// The protocol layer reuses params between executions.
	owned := make([]types.Datum, len(params))
	for i, p := range params {
		owned[i] = p.Clone()
	}
	var plan *planner.Statement
	if planned(ps.node) {
		if ps.plan == nil || ps.version != s.b.catalog.InfoSchema().Version() || ps.tempGen != s.temp.Gen() || !strings.EqualFold(ps.db, s.db) || ps.mode != s.sqlMode() ||
			s.snapshotTS(s.b.catalog.InfoSchema()) != 0 {
			var err error
			if plan, err = s.replan(ps); err != nil {
				s.beginStatement(ps.node)
				s.addError(err)
				return nil, err
			}
		} else {
			plan = ps.plan
			s.plans.touch(ps)
		}
	}
	s.outcomes = s.outcomes[:0]
	rs, err := s.executeStmt(ctx, ps.node, plan, owned, &ps.allowed)
	s.addError(err)
	return rs, err
}

// ClosePrepared forgets a prepared statement.
func (s *Session) ClosePrepared(id uint32) {
	if ps := s.prepared[id]; ps != nil {
		s.plans.remove(ps)
		s.releasePrepared(1)
	}
	delete(s.prepared, id)
}

// runSQLPrepared handles PREPARE / EXECUTE / DEALLOCATE statements.
func (s *Session) runSQLPrepared(ctx context.Context, node ast.StmtNode) (ResultSet, error) {
	switch x := node.(type) {
	case *ast.PrepareStmt:
		sql := x.SQLText
		if x.SQLVar != nil {
			sql = s.userVars[strings.ToLower(x.SQLVar.Name)].String()
		}
		// A name prepared again drops its old statement first, even if
		// the new one fails (MySQL).
		key := "\x00stmt:" + strings.ToLower(x.Name)
		if old, ok := s.userVars[key]; ok {
			s.ClosePrepared(uint32(old.Int()))
			delete(s.userVars, key)
		}
		info, err := s.Prepare(ctx, sql)
		if err != nil {
			return nil, err
		}
		s.userVars[key] = types.NewInt(int64(info.ID))
		return nil, nil
	case *ast.ExecuteStmt:
		idd, ok := s.userVars["\x00stmt:"+strings.ToLower(x.Name)]
		if !ok {
			return nil, errno.New(mysql.ErrUnknownStmtHandler, "Unknown prepared statement handler (%s) given to EXECUTE", x.Name)
		}
		var params []types.Datum
		for _, u := range x.UsingVars {
			v, ok := u.(*ast.VariableExpr)
			if !ok {
				return nil, errno.New(mysql.ErrWrongArguments, "Incorrect arguments to EXECUTE")
			}
			params = append(params, s.userVars[strings.ToLower(v.Name)])
		}
		return s.ExecutePrepared(ctx, uint32(idd.Int()), params)
	case *ast.DeallocateStmt:
		key := "\x00stmt:" + strings.ToLower(x.Name)
		if idd, ok := s.userVars[key]; ok {
			s.ClosePrepared(uint32(idd.Int()))
			delete(s.userVars, key)
			return nil, nil
		}
		return nil, errno.New(mysql.ErrUnknownStmtHandler, "Unknown prepared statement handler (%s) given to DEALLOCATE PREPARE", x.Name)
	}
	return nil, nil
}

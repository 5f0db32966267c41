package session

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/sql/catalog"
	"github.com/shoaldb/shoal/sql/ddl"
	"github.com/shoaldb/shoal/sql/executor"
	"github.com/shoaldb/shoal/sql/planner"
	"github.com/shoaldb/shoal/sql/sqlmode"
	"github.com/shoaldb/shoal/types"
)

// maxAutocommitRetries bounds the retries of an autocommit statement that
// keeps meeting write conflicts.
const maxAutocommitRetries = 64

// maxStatementRetries bounds the for_update_ts retries of one statement in a
// pessimistic transaction.
const maxStatementRetries = 256

// errReplan: the schema changed between planning a statement and fixing
// the timestamp it reads at; it ran nothing and is planned again. A plan
// is only as good as the schema it was made under, and that is known to
// hold at the read timestamp only if the node still had that schema after
// taking it: online schema changes wait for every node to load a state
// before the next, so the plan's indexes were then at most one state old
// (still maintained by every writer).
var errReplan = errors.New("session: schema changed before the statement's read timestamp")

// stalePlan reports whether plan was made under a schema older than the
// one this node has now (call it once the read timestamp is fixed).
func (s *Session) stalePlan(plan *planner.Statement) bool {
	return plan.SchemaVersion != s.b.catalog.InfoSchema().Version()
}

// maxSchemaChangeRetries bounds the replans of an autocommit statement
// whose table kept changing definition before it could commit (each
// online schema change moves a table through a few versions).
const maxSchemaChangeRetries = 16

// executeStmt runs one parsed statement. plan, when non-nil, is a cached
// plan for it; params are prepared-statement parameters; allowed, when
// non-nil, remembers the privilege check of a prepared statement.
func (s *Session) executeStmt(ctx context.Context, node ast.StmtNode, plan *planner.Statement, params []types.Datum, allowed *privVerdict) (ResultSet, error) {
	runStmtHook(node)
	s.beginStatement(node)
	s.affected = 0
	s.evalCtx.Params = params
	if show := describedTable(node); show != nil {
		node = show
	}
	if err := s.checkPrivilegesOnce(node, allowed); err != nil {
		return nil, err
	}
	if plan == nil { // a prepared statement's passed at PREPARE
		if err := s.checkLedger(node); err != nil {
			return nil, err
		}
	}
	switch x := node.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt, *ast.ExplainStmt, *ast.InsertStmt, *ast.UpdateStmt, *ast.DeleteStmt:
		for attempt := 0; ; attempt++ {
			if plan == nil {
				var err error
				if plan, err = planner.Build(s.planContext(), node); err != nil {
					return nil, err
				}
			}
			switch plan.Root.(type) {
			case *planner.Insert, *planner.Update, *planner.Delete:
			default:
				qctx, release := s.withMaxExecutionTime(ctx, node)
				rs, err := s.runQuery(qctx, plan)
				err = interruptedErr(qctx, err)
				rs = releaseOnClose(rs, release)
				if errors.Is(err, errReplan) {
					if attempt < maxSchemaChangeRetries {
						plan = nil
						continue
					}
					err = catalog.ErrSchemaChanged
				}
				return rs, err
			}
			autocommit := s.txn == nil && s.autocommit()
			err := s.runDML(ctx, plan)
			// An autocommit statement planned before a schema change of
			// its table committed nothing: plan it again and rerun it.
			if (errors.Is(err, errReplan) || autocommit && errors.Is(err, catalog.ErrSchemaChanged)) && attempt < maxSchemaChangeRetries {
				plan = nil
				continue
			}
			if errors.Is(err, errReplan) {
				err = catalog.ErrSchemaChanged
			}
			return nil, err
		}
	case *ast.CreateUserStmt, *ast.DropUserStmt, *ast.RenameUserStmt, *ast.AlterUserStmt, *ast.SetPwdStmt,
		*ast.GrantStmt, *ast.RevokeStmt, *ast.GrantRoleStmt, *ast.RevokeRoleStmt, *ast.SetDefaultRoleStmt:
		return nil, s.runAccountStmt(ctx, node)
	case *ast.SetRoleStmt:
		return nil, s.setRole(x)
	case ast.DDLNode:
		if !keepsTransaction(x) {
			if err := s.commitTxn(ctx); err != nil {
				return nil, err
			}
		}
		d := &ddl.DDL{Catalog: s.b.catalog, CurrentDB: s.db, Clustering: s.clustering(), TimeZone: s.timeZone(), Temp: s.temp, SQLMode: s.sqlMode(), CheckView: func(sel ast.StmtNode) ([]string, error) {
			return planner.ViewColumns(s.planContext(), sel)
		}}
		var err error
		if ct, ok := x.(*ast.CreateTableStmt); ok && ct.Select != nil && ct.TemporaryKeyword == ast.TemporaryNone {
			err = s.createTableSelect(ctx, d, ct)
		} else {
			err = d.Exec(ctx, x)
		}
		s.destroyDroppedTemp()
		s.addWarnings(d.Warnings...)
		for _, n := range d.Notes {
			s.addWarnings(noteOf(n))
		}
		return nil, err
	case *ast.BeginStmt:
		if err := s.commitTxn(ctx); err != nil {
			return nil, err
		}
		mode := s.txnMode()
		switch x.Mode {
		case ast.Optimistic:
			mode = kv.Optimistic
		case ast.Pessimistic:
			mode = kv.Pessimistic
		}
		if err := s.beginTxn(ctx, true, mode); err != nil {
			return nil, err
		}
		s.readOnlyTxn = x.ReadOnly
		return nil, nil
	case *ast.CommitStmt:
		return nil, s.commitTxn(ctx)
	case *ast.RollbackStmt:
		if x.SavepointName != "" {
			return nil, s.rollbackToSavepoint(x.SavepointName)
		}
		s.rollbackTxn()
		return nil, nil
	case *ast.SavepointStmt:
		return nil, s.setSavepoint(ctx, x.Name)
	case *ast.ReleaseSavepointStmt:
		return nil, s.releaseSavepoint(x.Name)
	case *ast.SetStmt:
		return nil, s.runSet(ctx, x)
	case *ast.UseStmt:
		return nil, s.UseDB(ctx, x.DBName)
	case *ast.ShowStmt:
		return s.runShow(ctx, x)
	case *ast.AnalyzeTableStmt:
		return s.runAnalyze(ctx, x)
	case *ast.AdminStmt:
		return s.runAdmin(ctx, x)
	case *ast.BRIEStmt:
		return s.runBRIE(ctx, x)
	case *ast.DoStmt:
		for _, e := range x.Exprs {
			if _, err := s.evalScalar(ctx, e); err != nil {
				return nil, err
			}
		}
		return nil, nil
	case *ast.FlushStmt:
		if x.Tp == ast.FlushPrivileges {
			return nil, s.b.privs.Reload(ctx)
		}
		return nil, nil
	case *ast.KillStmt:
		return nil, s.runKill(ctx, x)
	case *ast.PrepareStmt, *ast.ExecuteStmt, *ast.DeallocateStmt:
		return s.runSQLPrepared(ctx, x)
	}
	return nil, errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support this statement")
}

// describedTable is the SHOW COLUMNS that DESCRIBE t [col] (also DESC,
// EXPLAIN t) stands for: the parser wraps it in an ExplainStmt, which is
// otherwise the EXPLAIN of a statement. Nil for any other node.
func describedTable(node ast.StmtNode) *ast.ShowStmt {
	if x, ok := node.(*ast.ExplainStmt); ok {
		if show, ok := x.Stmt.(*ast.ShowStmt); ok {
			return show
		}
	}
	return nil
}

// keepsTransaction reports the DDLs that do not commit the open
// transaction first: CREATE TEMPORARY TABLE and DROP TEMPORARY TABLE, as
// in MySQL (other DDL on a temporary table does commit).
func keepsTransaction(node ast.DDLNode) bool {
	switch x := node.(type) {
	case *ast.CreateTableStmt:
		return x.TemporaryKeyword == ast.TemporaryLocal
	case *ast.DropTableStmt:
		return x.TemporaryKeyword == ast.TemporaryLocal
	}
	return false
}

// evalScalar evaluates the expression of a SET or DO. One with a subquery
// reads in the open transaction, or else in a snapshot of its own, as an
// autocommit SELECT would.
func (s *Session) evalScalar(ctx context.Context, e ast.ExprNode) (types.Datum, error) {
	ex, st, err := planner.BuildScalar(s.planContext(), e)
	if err != nil {
		return types.Datum{}, err
	}
	txn := s.txn
	if len(st.Subqueries) > 0 {
		if err := s.ensureImplicitTxn(ctx); err != nil {
			return types.Datum{}, err
		}
		if txn = s.txn; txn == nil {
			if txn, err = s.b.store.Begin(ctx, kv.TxnOptions{Mode: kv.Optimistic}); err != nil {
				return types.Datum{}, toSQLError(err)
			}
			defer func() { _ = txn.Rollback() }()
		}
	}
	ec := s.newExecContext(ctx, txn, st)
	v, err := ex.Eval(ec.Eval, nil)
	s.collectWarnings()
	if err != nil {
		return types.Datum{}, toSQLError(err)
	}
	return v.Clone(), nil
}

func (s *Session) planContext() *planner.Context {
	is := s.schema()
	return &planner.Context{Schema: is, CurrentDB: s.db,
		OnlyFullGroupBy:       s.sqlMode().Has(sqlmode.OnlyFullGroupBy),
		NoUnsignedSubtraction: s.sqlMode().Has(sqlmode.NoUnsignedSubtraction),
		NoBackslashEscapes:    s.sqlMode().Has(sqlmode.NoBackslashEscapes),
		ReadTS:                s.snapshotTS(is)}
}

// snapshotTS is the start timestamp of the open transaction when an index
// of is became complete after it (so plans must not read through it at
// that snapshot), else 0: every index is complete at any snapshot the
// next statement reads.
func (s *Session) snapshotTS(is *catalog.InfoSchema) uint64 {
	if s.txn == nil {
		return 0
	}
	if ts := s.txn.StartTS(); ts < is.NewestCompleteTS() {
		return ts
	}
	return 0
}

func (s *Session) collectWarnings() {
	s.addWarnings(s.evalCtx.Warnings...)
	s.evalCtx.Warnings = s.evalCtx.Warnings[:0]
}

// runQuery runs a SELECT (or EXPLAIN) and returns its streaming result.
func (s *Session) runQuery(ctx context.Context, plan *planner.Statement) (ResultSet, error) {
	if err := s.ensureImplicitTxn(ctx); err != nil {
		return nil, err
	}
	fields := fieldsOf(plan.Root.Columns())
	if s.txn != nil {
		if plan.ForUpdate && s.txn.Mode() == kv.Pessimistic {
			// Lock and read at a fresh for_update_ts; retry the whole
			// statement when a row changed between the read and the lock.
			var rows []types.Row
			err := s.inStatement(ctx, func(ec *executor.Context) error {
				e, err := executor.Build(ec, plan.Root)
				if err != nil {
					return err
				}
				rows, err = executor.Drain(e)
				return err
			}, plan)
			if err != nil {
				return nil, err
			}
			return &staticResultSet{fields: fields, rows: rows}, nil
		}
		s.txn.SetReadTS(0)
		ec := s.newExecContext(ctx, s.txn, plan)
		return s.openResult(ec, plan, fields, nil)
	}
	// Autocommit read: a snapshot transaction that lives as long as the
	// result set.
	txn, err := s.b.store.Begin(ctx, kv.TxnOptions{Mode: kv.Optimistic})
	if err != nil {
		return nil, toSQLError(err)
	}
	if s.stalePlan(plan) {
		_ = txn.Rollback()
		return nil, errReplan
	}
	ec := s.newExecContext(ctx, txn, plan)
	return s.openResult(ec, plan, fields, func() { _ = txn.Rollback() })
}

func (s *Session) openResult(ec *executor.Context, plan *planner.Statement, fields []*Field, done func()) (ResultSet, error) {
	e, err := executor.Build(ec, plan.Root)
	if err == nil {
		err = e.Open()
	}
	if err != nil {
		if e != nil {
			e.Close()
		}
		if done != nil {
			done()
		}
		return nil, toSQLError(err)
	}
	return &execResultSet{s: s, ctx: ec.Ctx, fields: fields, exec: e, done: done}, nil
}

// inStatement runs fn as one statement of the open pessimistic transaction:
// in a staging savepoint, reading at a fresh for_update_ts, retried with a
// newer one while fn meets write conflicts on its locks.
func (s *Session) inStatement(ctx context.Context, fn func(ec *executor.Context) error, plan *planner.Statement) error {
	txn := s.txn
	for attempt := 0; ; attempt++ {
		ts, err := s.b.store.CurrentTS(ctx)
		if err != nil {
			return toSQLError(err)
		}
		if s.stalePlan(plan) {
			return errReplan
		}
		txn.SetReadTS(ts)
		h := txn.Staging()
		ec := s.newExecContext(ctx, txn, plan)
		ec.Pessimistic, ec.ForUpdateTS = true, ts
		err = fn(ec)
		txn.SetReadTS(0)
		if err == nil {
			txn.Release(h)
			s.statementDone(ec)
			return nil
		}
		txn.Cleanup(h)
		if errors.Is(err, kv.ErrWriteConflict) && !isSQL(err) && attempt < maxStatementRetries {
			backoff(attempt)
			continue
		}
		if errors.Is(err, kv.ErrDeadlock) {
			// As InnoDB: a deadlock victim's whole transaction rolls back.
			s.rollbackTxn()
		}
		return toSQLError(err)
	}
}

func backoff(attempt int) {
	if attempt > 2 {
		d := time.Duration(attempt) * time.Millisecond
		if d > 50*time.Millisecond {
			d = 50 * time.Millisecond
		}
		time.Sleep(d)
	}
}

// statementDone takes a finished DML statement's results: affected rows,
// LAST_INSERT_ID and warnings.
func (s *Session) statementDone(ec *executor.Context) {
	if ec.LastInsertID != 0 {
		s.lastInsertID = ec.LastInsertID
	}
	s.affected = ec.AffectedRows
	s.collectWarnings()
}

// runDML runs INSERT, UPDATE or DELETE.
func (s *Session) runDML(ctx context.Context, plan *planner.Statement) error {
	if err := s.ensureImplicitTxn(ctx); err != nil {
		return err
	}
	// As MySQL, a read-only transaction may still change temporary
	// tables.
	if t := writtenTable(plan); (t == nil || !t.Temporary) && ((s.txn != nil && s.readOnlyTxn) || s.readOnlySession()) {
		return errno.NewStd(mysql.ErrCantExecuteInReadOnlyTransaction)
	}
	run := func(ec *executor.Context) error { return executor.ExecDML(ec, plan.Root) }
	if s.txn != nil {
		// The definition the statement's writes were planned with is
		// noted once it wrote them (a statement replanned or failed
		// wrote nothing).
		if s.txn.Mode() == kv.Pessimistic {
			err := s.inStatement(ctx, run, plan)
			if err == nil {
				s.noteWrite(plan)
			}
			return err
		}
		h := s.txn.Staging()
		ec := s.newExecContext(ctx, s.txn, plan)
		if err := run(ec); err != nil {
			s.txn.Cleanup(h)
			return toSQLError(err)
		}
		s.txn.Release(h)
		s.noteWrite(plan)
		s.statementDone(ec)
		return nil
	}
	// Autocommit: one optimistic transaction committed in one phase; on a
	// write conflict, or when another transaction rolled it back (took its
	// locks for dead while its prewrite waited), the whole statement runs
	// again on fresh data: nothing of it committed, and the client never
	// saw its effects.
	opts := s.txnOptions(kv.Optimistic)
	for attempt := 0; ; attempt++ {
		txn, err := s.b.store.Begin(ctx, opts)
		if err != nil {
			return toSQLError(err)
		}
		if s.stalePlan(plan) {
			_ = txn.Rollback()
			return errReplan
		}
		ec := s.newExecContext(ctx, txn, plan)
		err = run(ec)
		if err == nil {
			tables := map[int64]*catalog.TableInfo{}
			if t := writtenTable(plan); t != nil && !t.Temporary {
				tables[t.ID] = t
			}
			err = s.b.catalog.CommitGuard(tables, func() error { return txn.Commit(uninterrupted(ctx)) })
			if err == nil {
				s.statementDone(ec)
				return nil
			}
			if errors.Is(err, kv.ErrResultUndetermined) {
				return toSQLError(err)
			}
		}
		_ = txn.Rollback()
		if (isRetryableConflict(err) || errors.Is(err, kv.ErrTxnAborted)) && attempt < maxAutocommitRetries {
			backoff(attempt)
			continue
		}
		return toSQLError(err)
	}
}

func (s *Session) runSet(ctx context.Context, x *ast.SetStmt) error {
	for _, v := range x.Variables {
		name := strings.ToLower(v.Name)
		if name == ast.SetNames || name == ast.SetCharset {
			continue // utf8mb4 throughout
		}
		var val types.Datum
		switch e := v.Value.(type) {
		case *ast.ColumnNameExpr:
			val = types.NewString(e.Name.Name.O)
		case *ast.DefaultExpr:
			if _, ok := sysVars[name]; ok {
				val = types.NewString(s.b.varDefault(name))
			}
		case nil:
		default:
			var err error
			if val, err = s.evalScalar(ctx, v.Value); err != nil {
				return err
			}
		}
		if !v.IsSystem {
			s.userVars[name] = val.Clone()
			continue
		}
		if name == "tx_isolation_one_shot" {
			// SET TRANSACTION ISOLATION LEVEL ... (next transaction only).
			if _, err := normalizeVar("transaction_isolation", val.String()); err != nil {
				return err
			}
			continue
		}
		if name == "tx_read_only" {
			if err := s.checkTxReadOnly(val); err != nil {
				return err
			}
		}
		if _, ok := sysVars[name]; !ok {
			return errUnknownSysVar(name)
		}
		if sysVars[name].readOnly {
			return errno.NewStd(mysql.ErrIncorrectGlobalLocalVar, name, "read only")
		}
		if err := checkVarType(name, val); err != nil {
			return err
		}
		str := val.String()
		if val.IsNull() {
			str = ""
		}
		var setWarnings []error
		if name == "sql_mode" {
			text, err := sqlModeText(val)
			if err != nil {
				return err
			}
			if str, setWarnings, err = normalizeSQLMode(text); err != nil {
				return err
			}
		}
		norm, err := normalizeVar(name, str)
		if err != nil {
			return err
		}
		if err := checkCharsetVar(name, norm); err != nil {
			return err
		}
		s.addWarnings(setWarnings...)
		if norm, err = s.checkLimitVar(name, norm, v.IsGlobal); err != nil {
			return err
		}
		if v.IsGlobal {
			if err := s.b.checkTransportSetting(name, norm); err != nil {
				return err
			}
			if err := s.b.persistGlobal(ctx, name, norm); err != nil {
				return toSQLError(err)
			}
			s.b.globals.set(name, norm)
			continue
		}
		if sysVars[name].globalOnly {
			return errno.New(mysql.ErrGlobalVariable, "Variable '%s' is a GLOBAL variable and should be set with SET GLOBAL", name)
		}
		if name == "autocommit" && norm == "1" && !s.autocommit() && s.txn != nil {
			if err := s.commitTxn(ctx); err != nil {
				return err
			}
		}
		s.setSessionVar(name, norm)
	}
	return nil
}

// readOnlySession reports transaction_read_only / tx_read_only = 1.
func (s *Session) readOnlySession() bool {
	v, _ := s.getSysVar("transaction_read_only", false)
	w, _ := s.getSysVar("tx_read_only", false)
	return v == "1" || w == "1"
}

func (s *Session) runAnalyze(ctx context.Context, x *ast.AnalyzeTableStmt) (ResultSet, error) {
	fields := stringFields("Table", "Op", "Msg_type", "Msg_text")
	var rows []types.Row
	for _, tn := range x.TableNames {
		db := tn.Schema.O
		if db == "" {
			db = s.db
		}
		if s.schema().Table(db, tn.Name.O) == nil {
			return nil, errno.NewStd(mysql.ErrNoSuchTable, db, tn.Name.O)
		}
		rows = append(rows, types.Row{types.NewString(db + "." + tn.Name.O), types.NewString("analyze"), types.NewString("status"), types.NewString("OK")})
	}
	return &staticResultSet{fields: fields, rows: rows}, nil
}

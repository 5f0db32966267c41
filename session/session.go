// Package session runs SQL statements for one client connection: it parses,
// plans (with a prepared-plan cache), manages the transaction (autocommit,
// explicit, pessimistic or optimistic), executes, and streams results to the
// protocol layer.
//
// Invariants:
//   - A statement either takes full effect in its transaction or none: each
//     statement runs inside a staging savepoint of the transaction buffer
//     that is discarded when the statement fails.
//   - An autocommit DML statement that hits a write conflict is retried from
//     scratch (it re-reads everything); a statement inside an explicit
//     transaction is retried only for a conflict on its own pessimistic
//     locks, whose reads are then redone at a newer for_update_ts. A
//     transaction is never silently retried across statements.
//   - A commit whose outcome is unknown is reported as such (never as a
//     success or a plain failure).
package session

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	_ "github.com/pingcap/tidb/pkg/parser/test_driver" // literal values for the parser
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/sql/catalog"
	"github.com/shoaldb/shoal/sql/ddl"
	"github.com/shoaldb/shoal/sql/executor"
	"github.com/shoaldb/shoal/sql/expression"
	"github.com/shoaldb/shoal/sql/planner"
	"github.com/shoaldb/shoal/sql/privilege"
	"github.com/shoaldb/shoal/sql/sqlmode"
	"github.com/shoaldb/shoal/types"
)

// Config configures the SQL layer.
type Config struct {
	// Password of the root user; empty means none.
	Password string
	// SchemaSyncInterval > 0 means other SQL nodes share the store (a
	// cluster): the schema and global variables are re-read this often,
	// and before commits (see cluster.go). Zero: this is the only node.
	SchemaSyncInterval time.Duration
	// DisablePlanCache: prepared statements are planned at every
	// execution (config prepared-plan-cache.enabled = false).
	DisablePlanCache bool
	// Logger for background work; nil: slog.Default().
	Logger *slog.Logger
	// GC: the defaults of the GC variables (gc-life-time and friends).
	GC GCSettings
	// BackupDirs: where BACKUP and RESTORE may read and write (config
	// security.backup-dirs); none: both are refused.
	BackupDirs []string
	// TempDir is where sorts over tidb_mem_quota_query spill; empty: the
	// system's temporary directory.
	TempDir string
	// SSL: whether the protocol layer offers TLS, and its files (have_ssl,
	// ssl_ca, ssl_cert, ssl_key).
	SSL SSLConfig
}

// Backend is the SQL layer of one node: it owns the catalog and creates
// sessions.
type Backend struct {
	store   kv.Storage
	catalog *catalog.Catalog
	cfg     Config
	globals *globalVars
	// serverMem counts statements' tracked memory against
	// tidb_server_memory_limit (memlimit.go).
	serverMem executor.ServerMemory

	syncing  bool // other SQL nodes share the store
	stopSync context.CancelFunc
	syncDone chan struct{}

	prepared preparedCounter  // prepared statements open on this node
	privs    *privilege.Store // accounts and grants (privilege.go)

	// brMu runs one BACKUP or RESTORE at a time on this node (as TiDB):
	// they are heavy, and later ones queue (their Queue Time).
	brMu sync.Mutex

	// processes are the protocol layer's connections (SetProcessManager;
	// read by the sync loop too).
	processes atomic.Pointer[ProcessManager]
	// serverID is this node's id in a cluster (globalkill.go); 0 alone.
	serverID uint64
}

// NewBackend opens the catalog on store and bootstraps the default
// databases.
func NewBackend(store kv.Storage, cfg Config) (*Backend, error) {
	ctx := context.Background()
	cat, err := catalog.Open(ctx, store)
	if err != nil {
		return nil, err
	}
	// The catalog's DDLs and Sync settle the jobs they meet with ddl's
	// state machine.
	ddl.AttachJobs(cat)
	b := &Backend{store: store, catalog: cat, cfg: cfg, globals: &globalVars{vals: map[string]string{}}}
	b.serverMem.Limit = b.serverMemoryLimit
	for _, db := range []string{"mysql", "test"} {
		if cat.InfoSchema().DB(db) == nil {
			d := &ddl.DDL{Catalog: cat}
			if err := d.Exec(ctx, &ast.CreateDatabaseStmt{Name: ast.NewCIStr(db), IfNotExists: true}); err != nil {
				return nil, fmt.Errorf("bootstrap database %s: %w", db, err)
			}
		}
	}
	if err := b.loadGlobals(ctx); err != nil {
		return nil, fmt.Errorf("load global variables: %w", err)
	}
	if b.privs, err = privilege.Open(ctx, store, cfg.Password); err != nil {
		return nil, fmt.Errorf("load accounts: %w", err)
	}
	if cfg.SchemaSyncInterval == 0 {
		// The only node: temporary tables recorded in kv are a previous
		// run's, left by a crash (a cluster's nodes sweep those of gone
		// nodes in their sync loop).
		if _, err := cat.SweepTempTables(ctx); err != nil {
			return nil, fmt.Errorf("drop the temporary tables of a previous run: %w", err)
		}
	}
	if cfg.SchemaSyncInterval > 0 {
		log := cfg.Logger
		if log == nil {
			log = slog.Default()
		}
		b.syncing = true
		cat.EnableSync()
		// Online schema changes wait for every registered node; a node
		// commits only once it holds a schema lease.
		if err := cat.Register(ctx); err != nil {
			return nil, err
		}
		if b.serverID, err = b.allocServerID(ctx); err != nil {
			return nil, fmt.Errorf("allocate a server id: %w", err)
		}
		sctx, cancel := context.WithCancel(context.Background())
		b.stopSync, b.syncDone = cancel, make(chan struct{})
		go func() {
			defer close(b.syncDone)
			b.sync(sctx, cfg.SchemaSyncInterval, log)
		}()
	}
	return b, nil
}

// logger is where background work of the SQL layer reports.
func (b *Backend) logger() *slog.Logger {
	if b.cfg.Logger != nil {
		return b.cfg.Logger
	}
	return slog.Default()
}

// NewSession opens a session.
func (b *Backend) NewSession(ctx context.Context, user, host, db string) (Conn, error) {
	s := &Session{b: b, parser: parser.New(), user: user, host: host, vars: map[string]string{},
		userVars: map[string]types.Datum{}, prepared: map[uint32]*preparedStmt{}, temp: catalog.NewTempTables()}
	s.evalCtx.Session = s
	s.evalCtx.Vars = s.readVar
	s.transport = TransportOf(ctx)
	if err := b.checkTransport(s.transport); err != nil {
		return nil, err
	}
	s.initLimitVars()
	if err := s.login(); err != nil {
		return nil, err
	}
	s.processListFn = func() []types.Row { return s.processRows(false) }
	if db != "" {
		if err := s.UseDB(ctx, db); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Session is one client's session. Its methods are called by one goroutine
// at a time (the connection's).
type Session struct {
	b      *Backend
	parser *parser.Parser
	user   string
	host   string
	connID uint64
	db     string
	// transport: how the client is connected (TLS or not).
	transport Transport
	priv      sessionPrivs // the account, its active roles and merged grants (privilege.go)

	vars     map[string]string // session values of system variables (set through setSessionVar)
	varGen   uint64            // counts changes of vars (hot_vars.go)
	hotVars  hotVars
	userVars map[string]types.Datum

	txn kv.Txn
	// explicit: BEGIN or autocommit=0 opened txn; it lives until COMMIT.
	explicit bool
	// readOnlyTxn: START TRANSACTION READ ONLY.
	readOnlyTxn bool
	// txnTables are the definitions of the tables the transaction wrote,
	// as planned; commit requires them to be still current.
	txnTables map[int64]*catalog.TableInfo
	// savepoints of the open transaction, oldest first (savepoint.go);
	// empty whenever txn is nil.
	savepoints []savepoint
	// temp are the session's TEMPORARY tables, overlaid on the shared
	// schema by schema() (see sql/catalog/temp.go).
	temp *catalog.TempTables

	affected     uint64
	lastInsertID uint64
	diag         diagnostics
	// modeText and mode cache the parsed sql_mode (modeParsed: mode is set).
	modeText   string
	mode       sqlmode.Mode
	modeParsed bool
	outcomes   []stmtOutcome

	prepared   map[uint32]*preparedStmt
	nextStmtID uint32
	plans      planLRU // which prepared statements keep their plan

	evalCtx expression.Context
	// tz caches the zone @@time_zone named (tzName) at the last statement.
	tz     *types.TimeZone
	tzName string

	mu sync.Mutex // guards Close against a running statement's cleanup

	// processListFn is information_schema.PROCESSLIST's rows (made once:
	// a method value allocates).
	processListFn func() []types.Row

	// memStmt is the last statement counting against the node's memory
	// limit (memlimit.go).
	memStmt *executor.Context
}

type stmtOutcome struct {
	affected, lastInsertID uint64
	warnings               uint16
}

// SessionInfo for expressions.

func (s *Session) CurrentDB() string    { return s.db }
func (s *Session) User() string         { return s.user + "@" + s.host }
func (s *Session) ConnectionID() uint64 { return s.connID }
func (s *Session) LastInsertID() uint64 { return s.lastInsertID }
func (s *Session) SysVar(name string) (types.Datum, bool) {
	v, err := s.getSysVar(name, false)
	if err != nil {
		return types.Datum{}, false
	}
	return varDatum(name, v), true
}

func (s *Session) AffectedRows() uint64 { return s.affected }
func (s *Session) WarningCount() uint16 {
	return uint16(min(s.diag.stmtConds, 65535))
}

// StatementOutcome reports the outcome of statement i of the last
// multi-statement Execute.
func (s *Session) StatementOutcome(i int) (uint64, uint64, uint16) {
	if i < len(s.outcomes) {
		o := s.outcomes[i]
		return o.affected, o.lastInsertID, o.warnings
	}
	return s.affected, s.lastInsertID, s.WarningCount()
}

func (s *Session) Status() uint16 {
	var st uint16
	if s.txn != nil && s.explicit {
		st |= mysql.ServerStatusInTrans
	}
	if s.autocommit() {
		st |= mysql.ServerStatusAutocommit
	}
	// Clients escape strings by this flag (mysql_real_escape_string).
	if s.sqlMode().Has(sqlmode.NoBackslashEscapes) {
		st |= mysql.ServerStatusNoBackslashEscaped
	}
	return st
}

func (s *Session) SetConnectionID(id uint64) { s.connID = id }

// Close rolls back any open transaction and drops the temporary tables.
func (s *Session) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.txn != nil {
		_ = s.txn.Rollback()
		s.txn, s.savepoints = nil, nil
	}
	s.temp.RemoveAll()
	s.destroyDroppedTemp()
	s.releasePrepared(len(s.prepared))
	clear(s.prepared)
	s.releaseStatementMemory()
}

func (s *Session) getSysVar(name string, global bool) (string, error) {
	name = strings.ToLower(name)
	_, ok := sysVars[name]
	if !ok {
		return "", errUnknownSysVar(name)
	}
	switch name {
	case "last_insert_id", "identity":
		return fmt.Sprint(s.lastInsertID), nil
	case "warning_count":
		return fmt.Sprint(s.diag.total), nil
	case "error_count":
		return fmt.Sprint(s.diag.errors), nil
	}
	if !global {
		if v, ok := s.vars[name]; ok {
			return v, nil
		}
	}
	if v, ok := s.b.globals.get(name); ok {
		return v, nil
	}
	return s.b.varDefault(name), nil
}

func (s *Session) readVar(name string, system, global bool) (types.Datum, error) {
	if !system {
		return s.userVars[strings.ToLower(name)], nil
	}
	v, err := s.getSysVar(name, global)
	if err != nil {
		return types.Datum{}, err
	}
	return varDatum(strings.ToLower(name), v), nil
}

func (s *Session) autocommit() bool { return s.hot().autocommit }

func (s *Session) strictMode() bool { return s.sqlMode().IsStrict() }

// autoIncSeries is auto_increment_increment and auto_increment_offset,
// each within MySQL's 1..65535.
func (s *Session) autoIncSeries() (increment, offset int64) {
	h := s.hot()
	return h.autoIncInc, h.autoIncOff
}

func (s *Session) lockWait() time.Duration { return s.hot().lockWait }

// clustering is tidb_enable_clustered_index as the DDL executor takes it.
func (s *Session) clustering() ddl.Clustering {
	switch v, _ := s.getSysVar("tidb_enable_clustered_index", false); v {
	case "OFF":
		return ddl.ClusterNone
	case "INT_ONLY":
		return ddl.ClusterIntOnly
	}
	return ddl.ClusterAll
}

func (s *Session) txnMode() kv.TxnMode {
	v, _ := s.getSysVar("tidb_txn_mode", false)
	if v == "optimistic" {
		return kv.Optimistic
	}
	return kv.Pessimistic
}

// UseDB switches the current database.
func (s *Session) UseDB(ctx context.Context, db string) error {
	if err := s.checkUseDB(db); err != nil {
		return err
	}
	d := s.b.catalog.InfoSchema().DB(db)
	if d == nil && s.b.syncing {
		// Look again whatever this reload reports: a concurrent one (another
		// connection's, the background loop's) may have loaded the
		// database meanwhile, and then this one finds nothing to do.
		_, err := s.b.catalog.Refresh(ctx)
		if d = s.b.catalog.InfoSchema().DB(db); d == nil && err != nil {
			return toSQLError(err)
		}
	}
	if d == nil {
		if strings.EqualFold(db, "information_schema") {
			s.db = "information_schema"
			return nil
		}
		return errno.NewStd(mysql.ErrBadDB, db)
	}
	s.db = d.Name
	return nil
}

// FieldList describes the columns of a table in the current database.
func (s *Session) FieldList(ctx context.Context, table string) ([]*Field, error) {
	if !s.isTemporary(s.db, table) && !s.privs().AnyOnTable(s.db, table) {
		return nil, s.tableDenied(mysql.SelectPriv, table)
	}
	t := s.schema().Table(s.db, table)
	if t == nil {
		return nil, errno.NewStd(mysql.ErrNoSuchTable, s.db, table)
	}
	fields := make([]*Field, 0, len(t.Columns))
	for _, c := range t.PublicColumns() {
		fields = append(fields, &Field{DBName: s.db, Table: t.Name, OrgTable: t.Name, Name: c.Name, OrgName: c.Name, Type: c.Type})
	}
	return fields, nil
}

func (s *Session) parse(sql string) ([]ast.StmtNode, error) {
	if textDepth(sql, maxTextDepth) > maxTextDepth {
		return nil, errTooDeep(maxStmtDepth)
	}
	s.parser.SetSQLMode(s.sqlMode().ParserMode())
	stmts, _, err := s.parser.ParseSQL(sql)
	if err != nil {
		return nil, errno.New(mysql.ErrParse, "%s", err.Error())
	}
	if err := checkDepth(stmts); err != nil {
		return nil, err
	}
	return stmts, nil
}

// Execute runs the statements of sql.
func (s *Session) Execute(ctx context.Context, sql string) ([]ResultSet, error) {
	stmts, err := s.parse(sql)
	if err != nil {
		s.beginFailedParse()
		s.addError(err)
		return nil, err
	}
	if len(stmts) == 0 {
		return nil, errno.NewStd(mysql.ErrEmptyQuery)
	}
	s.outcomes = s.outcomes[:0]
	results := make([]ResultSet, 0, len(stmts))
	for i, st := range stmts {
		before := s.b.catalog.InfoSchema().Version()
		rs, err := s.executeStmt(ctx, st, nil, nil, nil)
		if _, ddl := st.(ast.DDLNode); err != nil && !ddl && s.refreshedAfter(ctx, err, before) {
			rs, err = s.executeStmt(ctx, st, nil, nil, nil)
		}
		err = interruptedErr(ctx, err)
		if err != nil {
			s.addError(err)
			return results, err
		}
		if rs != nil && i < len(stmts)-1 {
			// Later statements run before the client reads this result.
			if rs, err = materialize(ctx, rs); err != nil {
				return results, err
			}
		}
		s.outcomes = append(s.outcomes, stmtOutcome{s.affected, s.lastInsertID, s.WarningCount()})
		results = append(results, rs)
	}
	return results, nil
}

// toSQLError maps storage errors to MySQL errors.
func toSQLError(err error) error {
	var se *errno.SQLError
	if errors.As(err, &se) {
		return se
	}
	var wc *kv.WriteConflictError
	switch {
	case errors.As(err, &wc):
		return errno.New(9007, "Write conflict, txnStartTS=%d, conflictCommitTS=%d, key=%x [try again later]", wc.StartTS, wc.ConflictTS, []byte(wc.Key))
	case errors.Is(err, kv.ErrWriteConflict):
		return errno.New(9007, "Write conflict [try again later]")
	case errors.Is(err, kv.ErrLockWaitTimeout):
		return errno.NewStd(mysql.ErrLockWaitTimeout)
	case errors.Is(err, kv.ErrDeadlock):
		return errno.NewStd(mysql.ErrLockDeadlock)
	case errors.Is(err, kv.ErrKeyExists):
		return errno.New(mysql.ErrDupEntry, "Duplicate entry for key")
	case errors.Is(err, kv.ErrResultUndetermined):
		return errno.New(8224, "Result of the commit is undetermined: the transaction may or may not have been committed")
	case errors.Is(err, kv.ErrRegionUnavailable):
		// TiDB's code and text: the statement did not take effect.
		return errno.New(9005, "Region is unavailable")
	case errors.Is(err, kv.ErrGCTooEarly):
		return errno.New(9006, "GC life time is shorter than transaction duration: %v", err)
	case errors.Is(err, kv.ErrTxnAborted):
		return errno.New(8005, "Transaction aborted (%v); it must be retried by the client", err)
	case errors.Is(err, context.Canceled):
		return errno.NewStd(mysql.ErrQueryInterrupted)
	}
	return errno.ToSQLError(err)
}

func isRetryableConflict(err error) bool {
	return errors.Is(err, kv.ErrWriteConflict) || errors.Is(err, kv.ErrKeyExists) && !isSQL(err)
}

func isSQL(err error) bool {
	var se *errno.SQLError
	return errors.As(err, &se)
}

func (s *Session) newExecContext(ctx context.Context, txn kv.Txn, stmt *planner.Statement) *executor.Context {
	s.evalCtx.Warnings = s.evalCtx.Warnings[:0]
	s.evalCtx.Outer = s.evalCtx.Outer[:0]
	s.evalCtx.StmtTime = time.Now()
	s.evalCtx.TimeZone = s.timeZone()
	s.evalCtx.Ctx = ctx
	s.evalCtx.ResetStatement()
	mode := s.sqlMode()
	// IGNORE turns the errors of strict mode into warnings and adjusted
	// values, as in MySQL.
	strict := mode.IsStrict() && !ignoresErrors(stmt)
	s.evalCtx.Strict = strict
	s.evalCtx.DivZero = divZeroAction(mode, stmt)
	ec := &executor.Context{Ctx: ctx, Txn: txn, Catalog: s.b.catalog, Schema: s.schema(), Eval: &s.evalCtx,
		Stmt: stmt, StrictMode: strict, SQLMode: mode, LockWait: s.lockWait(),
		ProcessList: s.processListFn,
		MemQuota:    s.memQuota(), SpillDir: s.b.cfg.TempDir,
		Privs: s}
	ec.AutoIncIncrement, ec.AutoIncOffset = s.autoIncSeries()
	s.evalCtx.Subquery = ec.RunSubquery
	s.evalCtx.KeyedLookup = ec.KeyedLookup
	s.trackStatementMemory(ec)
	return ec
}

// beginTxn opens the session's transaction if none is open.
func (s *Session) beginTxn(ctx context.Context, explicit bool, mode kv.TxnMode) error {
	if s.txn != nil {
		return nil
	}
	txn, err := s.b.store.Begin(ctx, s.txnOptions(mode))
	if err != nil {
		return toSQLError(err)
	}
	s.txn, s.explicit = txn, explicit
	return nil
}

// txnOptions are the options of a new transaction in mode, from the
// session's variables (tidb_enable_1pc, tidb_enable_async_commit,
// tidb_guarantee_linearizability).
func (s *Session) txnOptions(mode kv.TxnMode) kv.TxnOptions {
	onePC, _ := s.getSysVar("tidb_enable_1pc", false)
	async, _ := s.getSysVar("tidb_enable_async_commit", false)
	linearizable, _ := s.getSysVar("tidb_guarantee_linearizability", false)
	return kv.TxnOptions{Mode: mode, Enable1PC: onePC != "0",
		EnableAsyncCommit: async != "0", AsyncCommitLinearizable: linearizable != "0"}
}

// commitTxn commits the open transaction (if any).
func (s *Session) commitTxn(ctx context.Context) error {
	txn, tables := s.txn, s.txnTables
	s.txn, s.explicit, s.readOnlyTxn, s.txnTables, s.savepoints = nil, false, false, nil, nil
	if txn == nil {
		return nil
	}
	defer s.destroyDroppedTemp()
	if err := s.b.catalog.CommitGuard(tables, func() error { return txn.Commit(uninterrupted(ctx)) }); err != nil {
		if !errors.Is(err, kv.ErrResultUndetermined) {
			_ = txn.Rollback()
		}
		return toSQLError(err)
	}
	return nil
}

func (s *Session) rollbackTxn() {
	if s.txn != nil {
		_ = s.txn.Rollback()
	}
	s.txn, s.explicit, s.readOnlyTxn, s.txnTables, s.savepoints = nil, false, false, nil, nil
	s.destroyDroppedTemp()
}

// schema is the shared schema overlaid with the session's temporary
// tables: what the session's statements resolve names against.
func (s *Session) schema() *catalog.InfoSchema {
	return s.b.catalog.InfoSchema().WithTemp(s.temp)
}

// tempCleanupTimeout bounds queueing a dropped temporary table's rows for
// GC; one that fails stays recorded and is swept when this node restarts.
const tempCleanupTimeout = 10 * time.Second

// destroyDroppedTemp queues the rows of the temporary tables the session
// dropped for GC, once no transaction of the session is open: an open
// one may hold writes to them, which must not land after their range was
// queued.
func (s *Session) destroyDroppedTemp() {
	if s.txn != nil {
		return
	}
	dropped := s.temp.TakeDropped()
	if len(dropped) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), tempCleanupTimeout)
	defer cancel()
	for _, t := range dropped {
		if err := s.b.catalog.DropTempTable(ctx, t); err != nil {
			s.b.logger().Warn("queueing a dropped temporary table's rows for GC failed", "table_id", t.ID, "err", err)
		}
	}
}

// noteWrite records the definition of the table a statement writes (the
// first seen per table: commit checks it is still current).
func (s *Session) noteWrite(plan *planner.Statement) {
	t := writtenTable(plan)
	if t == nil || t.Temporary {
		return // a temporary table changes only through this session
	}
	if s.txnTables == nil {
		s.txnTables = map[int64]*catalog.TableInfo{}
	}
	if _, ok := s.txnTables[t.ID]; !ok {
		s.txnTables[t.ID] = t
	}
}

// writtenTable is the table a DML plan writes.
func writtenTable(plan *planner.Statement) *catalog.TableInfo {
	switch x := plan.Root.(type) {
	case *planner.Insert:
		return x.Table
	case *planner.Update:
		return x.Table
	case *planner.Delete:
		return x.Table
	}
	return nil
}

// inTxn reports whether statements run inside a multi-statement transaction.
func (s *Session) inTxn() bool { return s.txn != nil && s.explicit }

// ensureImplicitTxn opens the transaction that autocommit=0 implies.
func (s *Session) ensureImplicitTxn(ctx context.Context) error {
	if s.txn == nil && !s.autocommit() {
		return s.beginTxn(ctx, true, s.txnMode())
	}
	return nil
}

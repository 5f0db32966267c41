package session

import (
	"github.com/pingcap/tidb/pkg/parser/ast"
)

// The ledger: what shoal does with every statement kind and every option
// kind the parser can produce. Each is implemented (behaves as MySQL 8),
// refused (fails with an error naming it, 1235 unless said otherwise), or
// accepted without effect because MySQL 8 on InnoDB gives it none either.
// Nothing the parser produces may be accepted and ignored otherwise.
//
// checkLedger (ledger_check.go) consults these tables before a statement
// runs, so an entry marked refused is refused whatever the executor does;
// TestLedger (ledger_test.go) fails when the parser has a kind missing
// here, runs every refused entry's example expecting its error and every
// accepted one's expecting success. When a feature lands, flip its entry
// to impl("<the test that covers it>") and give it an example.

// support classifies one kind.
type support uint8

const (
	// implemented: behaves as MySQL 8; note names the covering test.
	implemented support = iota + 1
	// refused: fails with code (ER_NOT_SUPPORTED_YET unless set); note
	// is what the error message names.
	refused
	// noEffect: accepted and ignored, as MySQL 8 with InnoDB ignores it;
	// note says why.
	noEffect
	// notAKind: a zero value or a node the parser only builds inside
	// another one (a procedure body's parts); never seen on its own.
	notAKind
)

type ledgerEntry struct {
	support support
	note    string
	// example is a statement of this kind, run by TestLedger against
	// tables t (a INT PRIMARY KEY, b INT, s VARCHAR(20)) in database test.
	example string
	// refusedExample, for kinds accepted only with certain values
	// (ENGINE=InnoDB), is one with a value that is refused.
	refusedExample string
	// code is the error a refused kind fails with (0: 1235).
	code uint16
}

func impl(test, example string) ledgerEntry {
	return ledgerEntry{support: implemented, note: test, example: example}
}

func refuse(what, example string) ledgerEntry {
	return ledgerEntry{support: refused, note: what, example: example}
}

func ignoredAsMySQL(why, example string) ledgerEntry {
	return ledgerEntry{support: noEffect, note: why, example: example}
}

// onlyWith marks an entry accepted only for some values; other values are
// refused (refusedExample shows one).
func (e ledgerEntry) onlyWith(refusedExample string) ledgerEntry {
	e.refusedExample = refusedExample
	return e
}

func placeholder(why string) ledgerEntry { return ledgerEntry{support: notAKind, note: why} }

const (
	tSelect   = "session/testdata/select"
	tDDL      = "session/testdata/ddl"
	tKeys     = "session/testdata/keys"
	tTxn      = "session/testdata/txn"
	tAccounts = "session/testdata/accounts"
	tLedger   = "session/ledger_test.go"
	tInsert   = "session/testdata/insert"
	tUpdDel   = "session/testdata/update_delete"
	tShowVars = "session/testdata/show_vars"
	tClusterd = "session/testdata/clustered_index"
	tPrepared = "session/testdata/prepared"
	tPrivs    = "session/testdata/privileges"
	tOnline   = "session/testdata/online_ddl"
	tAlter    = "session/testdata/alter_table"
	tColl     = "session/testdata/collations"
)

// stmtLedger: the statement node types (by ast type name).
var stmtLedger = map[string]ledgerEntry{
	"SelectStmt":         impl(tSelect, "SELECT a FROM t"),
	"SetOprStmt":         impl(tSelect, "SELECT a FROM t UNION SELECT b FROM t"),
	"ExplainStmt":        impl("sql/planner/testdata", "EXPLAIN SELECT a FROM t"),
	"InsertStmt":         impl(tInsert, "INSERT INTO t VALUES (100, 1, 'x')"),
	"UpdateStmt":         impl(tUpdDel, "UPDATE t SET b = 2 WHERE a = 100"),
	"DeleteStmt":         impl(tUpdDel, "DELETE FROM t WHERE a = 100"),
	"CreateUserStmt":     impl(tAccounts, "CREATE USER ledger_u; DROP USER ledger_u"),
	"AlterUserStmt":      impl(tAccounts, "CREATE USER ledger_u; ALTER USER ledger_u IDENTIFIED BY 'x'"),
	"RenameUserStmt":     impl(tAccounts, "CREATE USER ledger_u; RENAME USER ledger_u TO ledger_v"),
	"DropUserStmt":       impl(tAccounts, "DROP USER IF EXISTS ledger_v"),
	"SetPwdStmt":         impl(tAccounts, "CREATE USER ledger_u; SET PASSWORD FOR ledger_u = 'x'"),
	"GrantStmt":          impl(tPrivs, "CREATE USER ledger_u; GRANT SELECT ON test.* TO ledger_u"),
	"RevokeStmt":         impl(tPrivs, "CREATE USER ledger_u; GRANT SELECT ON test.* TO ledger_u; REVOKE SELECT ON test.* FROM ledger_u"),
	"GrantRoleStmt":      impl(tAccounts, ""),
	"RevokeRoleStmt":     impl(tAccounts, ""),
	"SetDefaultRoleStmt": impl(tAccounts, ""),
	"SetRoleStmt":        impl(tAccounts, "SET ROLE NONE"),
	"CreateDatabaseStmt": impl(tDDL, "CREATE DATABASE IF NOT EXISTS ledger_db"),
	"DropDatabaseStmt":   impl(tDDL, "DROP DATABASE IF EXISTS ledger_db"),
	"CreateTableStmt":    impl(tDDL, "CREATE TABLE t_new (a INT)"),
	"DropTableStmt":      impl(tDDL, "DROP TABLE IF EXISTS t_none"),
	"CreateIndexStmt":    impl(tDDL, "CREATE INDEX ib ON t (b)"),
	"DropIndexStmt":      impl(tDDL, "CREATE INDEX ib ON t (b); DROP INDEX ib ON t"),
	"TruncateTableStmt":  impl(tDDL, "TRUNCATE TABLE t"),
	"AlterTableStmt":     impl(tOnline, "ALTER TABLE t ADD COLUMN c2 INT"),
	"CreateViewStmt":     impl(tDDL, "CREATE VIEW v_ledger AS SELECT a FROM t"),
	"BeginStmt":          impl(tTxn, "BEGIN"),
	"CommitStmt":         impl(tTxn, "COMMIT"),
	"RollbackStmt":       impl(tTxn, "ROLLBACK"),
	"SetStmt":            impl(tShowVars, "SET @x = 1"),
	"UseStmt":            impl(tDDL, "USE test"),
	"ShowStmt":           impl(tShowVars, "SHOW TABLES"),
	"AnalyzeTableStmt": ignoredAsMySQL("shoal keeps no statistics (plans are rule-based); ANALYZE changes no result in MySQL either",
		"ANALYZE TABLE t"),
	"AdminStmt":      impl("session/admin_check_test.go", "ADMIN CHECK TABLE t"),
	"BRIEStmt":       impl("session/brie_test.go", ""),
	"DoStmt":         impl(tSelect, "DO 1"),
	"FlushStmt":      impl(tPrivs, "FLUSH PRIVILEGES"),
	"KillStmt":       impl("session/kill_test.go", ""),
	"PrepareStmt":    impl(tPrepared, "PREPARE p1 FROM 'SELECT 1'"),
	"ExecuteStmt":    impl(tPrepared, "PREPARE p1 FROM 'SELECT 1'; EXECUTE p1"),
	"DeallocateStmt": impl(tPrepared, "PREPARE p1 FROM 'SELECT 1'; DEALLOCATE PREPARE p1"),

	"AddQueryWatchStmt":         refuse("QUERY WATCH", "QUERY WATCH ADD ACTION KILL SQL TEXT EXACT TO 'select 1'"),
	"AlterDatabaseStmt":         refuse("ALTER DATABASE", "ALTER DATABASE test CHARACTER SET utf8mb4"),
	"AlterInstanceStmt":         refuse("ALTER INSTANCE", "ALTER INSTANCE RELOAD TLS"),
	"AlterPlacementPolicyStmt":  refuse("placement policies", "ALTER PLACEMENT POLICY p PRIMARY_REGION='r1' REGIONS='r1'"),
	"AlterRangeStmt":            refuse("ALTER RANGE", "ALTER RANGE global PLACEMENT POLICY p"),
	"AlterResourceGroupStmt":    refuse("resource groups", "ALTER RESOURCE GROUP rg RU_PER_SEC=100"),
	"AlterSequenceStmt":         refuse("sequences", "ALTER SEQUENCE s INCREMENT BY 2"),
	"BinlogStmt":                refuse("BINLOG", "BINLOG 'abc'"),
	"CalibrateResourceStmt":     refuse("CALIBRATE RESOURCE", "CALIBRATE RESOURCE"),
	"CallStmt":                  refuse("stored procedures", "CALL p()"),
	"CancelDistributionJobStmt": refuse("distribution jobs", "CANCEL DISTRIBUTION JOB 1"),
	"CleanupTableLockStmt":      refuse("table locks", "ADMIN CLEANUP TABLE LOCK t"),
	"CompactTableStmt":          refuse("ALTER TABLE ... COMPACT", "ALTER TABLE t COMPACT"),
	"CreateBindingStmt":         refuse("plan bindings", "CREATE BINDING FOR SELECT 1 USING SELECT 1"),
	"CreateMaskingPolicyStmt":   refuse("masking policies", ""),
	"CreatePlacementPolicyStmt": refuse("placement policies", "CREATE PLACEMENT POLICY p PRIMARY_REGION='r1' REGIONS='r1'"),
	"CreateResourceGroupStmt":   refuse("resource groups", "CREATE RESOURCE GROUP rg RU_PER_SEC=100"),
	"CreateSequenceStmt":        refuse("sequences", "CREATE SEQUENCE s"),
	"CreateStatisticsStmt":      refuse("extended statistics", ""),
	"DistributeTableStmt":       refuse("DISTRIBUTE TABLE", ""),
	"DropBindingStmt":           refuse("plan bindings", "DROP BINDING FOR SELECT 1"),
	"DropPlacementPolicyStmt":   refuse("placement policies", "DROP PLACEMENT POLICY p"),
	"DropProcedureStmt":         refuse("stored procedures", "DROP PROCEDURE p"),
	"DropQueryWatchStmt":        refuse("QUERY WATCH", "QUERY WATCH REMOVE 1"),
	"DropResourceGroupStmt":     refuse("resource groups", "DROP RESOURCE GROUP rg"),
	"DropSequenceStmt":          refuse("sequences", "DROP SEQUENCE s"),
	"DropStatisticsStmt":        refuse("extended statistics", ""),
	"DropStatsStmt":             refuse("DROP STATS", "DROP STATS t"),
	"ExplainForStmt":            refuse("EXPLAIN FOR CONNECTION", "EXPLAIN FOR CONNECTION 1"),
	"FlashBackDatabaseStmt":     refuse("FLASHBACK", "FLASHBACK DATABASE d"),
	"FlashBackTableStmt":        refuse("FLASHBACK", "FLASHBACK TABLE t"),
	"FlashBackToTimestampStmt":  refuse("FLASHBACK", "FLASHBACK CLUSTER TO TIMESTAMP '2020-01-01 00:00:00'"),
	"GrantProxyStmt":            refuse("GRANT PROXY", "GRANT PROXY ON 'a' TO 'b'"),
	"HelpStmt":                  refuse("HELP", "HELP 'select'"),
	"ImportIntoActionStmt":      refuse("IMPORT INTO", "CANCEL IMPORT JOB 1"),
	"ImportIntoStmt":            refuse("IMPORT INTO", "IMPORT INTO t FROM '/tmp/x.csv'"),
	"LoadDataStmt":              refuse("LOAD DATA", "LOAD DATA INFILE '/tmp/x' INTO TABLE t"),
	"LoadStatsStmt":             refuse("LOAD STATS", "LOAD STATS '/tmp/x'"),
	"LockStatsStmt":             refuse("LOCK STATS", "LOCK STATS t"),
	"LockTablesStmt":            refuse("LOCK TABLES", "LOCK TABLES t READ"),
	"NonTransactionalDMLStmt":   refuse("non-transactional DML", "BATCH ON a LIMIT 10 DELETE FROM t"),
	"OptimizeTableStmt":         refuse("OPTIMIZE TABLE", "OPTIMIZE TABLE t"),
	"PlanReplayerStmt":          refuse("PLAN REPLAYER", "PLAN REPLAYER DUMP EXPLAIN SELECT 1"),
	"ProcedureInfo":             refuse("stored procedures", "CREATE PROCEDURE p() BEGIN SELECT 1; END"),
	"RecommendIndexStmt":        refuse("RECOMMEND INDEX", "RECOMMEND INDEX RUN"),
	"RecoverTableStmt":          refuse("RECOVER TABLE", "RECOVER TABLE t"),
	"RefreshStatsStmt":          refuse("REFRESH STATS", "REFRESH STATS t"),
	"ReleaseSavepointStmt":      impl("session/testdata/savepoint", ""), // outside a transaction: 1305
	"RenameTableStmt":           impl(tAlter, "RENAME TABLE t TO t_new"),
	"RepairTableStmt":           refuse("ADMIN REPAIR TABLE", "ADMIN REPAIR TABLE t CREATE TABLE t (a INT)"),
	"RestartStmt":               refuse("RESTART", "RESTART"),
	"SavepointStmt":             impl("session/testdata/savepoint", "SAVEPOINT s"),
	"SetBindingStmt":            refuse("plan bindings", "SET BINDING DISABLED FOR SELECT 1"),
	"SetConfigStmt":             refuse("SET CONFIG", "SET CONFIG tikv `log.level`='info'"),
	"SetResourceGroupStmt":      refuse("resource groups", "SET RESOURCE GROUP rg"),
	"SetSessionStatesStmt":      refuse("SET SESSION_STATES", "SET SESSION_STATES 'x'"),
	"ShutdownStmt":              refuse("SHUTDOWN", "SHUTDOWN"),
	"SplitRegionStmt":           refuse("SPLIT TABLE", "SPLIT TABLE t BETWEEN (0) AND (100) REGIONS 4"),
	"TraceStmt":                 refuse("TRACE", "TRACE SELECT 1"),
	"TrafficStmt":               refuse("TRAFFIC", ""),
	"UnlockStatsStmt":           refuse("UNLOCK STATS", "UNLOCK STATS t"),
	"UnlockTablesStmt":          refuse("LOCK TABLES", "UNLOCK TABLES"),

	"DynamicCalibrateResourceOption": placeholder("part of CALIBRATE RESOURCE"),
	"ProcedureBlock":                 placeholder("part of a procedure body"),
	"ProcedureCloseCur":              placeholder("part of a procedure body"),
	"ProcedureElseBlock":             placeholder("part of a procedure body"),
	"ProcedureElseIfBlock":           placeholder("part of a procedure body"),
	"ProcedureErrorCon":              placeholder("part of a procedure body"),
	"ProcedureErrorCondition":        placeholder("part of a procedure body"),
	"ProcedureErrorState":            placeholder("part of a procedure body"),
	"ProcedureErrorVal":              placeholder("part of a procedure body"),
	"ProcedureFetchInto":             placeholder("part of a procedure body"),
	"ProcedureIfBlock":               placeholder("part of a procedure body"),
	"ProcedureIfInfo":                placeholder("part of a procedure body"),
	"ProcedureJump":                  placeholder("part of a procedure body"),
	"ProcedureLabelBlock":            placeholder("part of a procedure body"),
	"ProcedureLabelLoop":             placeholder("part of a procedure body"),
	"ProcedureOpenCur":               placeholder("part of a procedure body"),
	"ProcedureRepeatStmt":            placeholder("part of a procedure body"),
	"ProcedureWhileStmt":             placeholder("part of a procedure body"),
	"SearchCaseStmt":                 placeholder("part of a procedure body"),
	"SearchWhenThenStmt":             placeholder("part of a procedure body"),
	"SimpleCaseStmt":                 placeholder("part of a procedure body"),
	"SimpleWhenThenStmt":             placeholder("part of a procedure body"),
	"QueryWatchOption":               placeholder("part of QUERY WATCH"),
	"SplitIndexOption":               placeholder("part of SPLIT TABLE"),
	"SplitOption":                    placeholder("part of SPLIT TABLE"),
}

// tableOptionLedger: CREATE TABLE options (ALTER TABLE takes COMMENT,
// AUTO_INCREMENT and ENGINE: AlterTableOption).
var tableOptionLedger = map[ast.TableOptionType]ledgerEntry{
	ast.TableOptionNone: placeholder("zero value"),
	// Every table is InnoDB-like; another engine is one shoal lacks, which
	// NO_ENGINE_SUBSTITUTION decides (1286, or substitution with warnings).
	ast.TableOptionEngine: impl("session/testdata/sql_mode", "CREATE TABLE t_opt (a INT) ENGINE=InnoDB"),
	ast.TableOptionCharset: impl(tLedger, "CREATE TABLE t_opt (a INT) DEFAULT CHARSET=utf8mb4").
		onlyWith("CREATE TABLE t_opt (a INT) DEFAULT CHARSET=latin1"),
	ast.TableOptionCollate: impl(tColl, "CREATE TABLE t_opt (a INT, s VARCHAR(5)) COLLATE=utf8mb4_0900_ai_ci").
		onlyWith("CREATE TABLE t_opt (a INT) COLLATE=utf8mb4_sv_0900_ai_ci"),
	ast.TableOptionAutoIncrement: impl(tLedger, "CREATE TABLE t_opt (a INT AUTO_INCREMENT PRIMARY KEY) AUTO_INCREMENT=100"),
	ast.TableOptionComment:       impl("session/testdata/show_create_quoting", "CREATE TABLE t_opt (a INT) COMMENT='c'"),
	ast.TableOptionAvgRowLength: ignoredAsMySQL("InnoDB ignores AVG_ROW_LENGTH (a MyISAM sizing hint)",
		"CREATE TABLE t_opt (a INT) AVG_ROW_LENGTH=100"),
	ast.TableOptionCheckSum: ignoredAsMySQL("InnoDB ignores CHECKSUM (MyISAM's live checksum)",
		"CREATE TABLE t_opt (a INT) CHECKSUM=1"),
	ast.TableOptionMaxRows: ignoredAsMySQL("InnoDB ignores MAX_ROWS (a MyISAM sizing hint)",
		"CREATE TABLE t_opt (a INT) MAX_ROWS=100"),
	ast.TableOptionMinRows: ignoredAsMySQL("InnoDB ignores MIN_ROWS (a MEMORY/MyISAM sizing hint)",
		"CREATE TABLE t_opt (a INT) MIN_ROWS=1"),
	ast.TableOptionDelayKeyWrite: ignoredAsMySQL("InnoDB ignores DELAY_KEY_WRITE (MyISAM only)",
		"CREATE TABLE t_opt (a INT) DELAY_KEY_WRITE=1"),
	ast.TableOptionPackKeys: ignoredAsMySQL("InnoDB ignores PACK_KEYS (MyISAM only)",
		"CREATE TABLE t_opt (a INT) PACK_KEYS=1"),
	ast.TableOptionRowFormat: ignoredAsMySQL("DEFAULT and DYNAMIC are InnoDB's default row format: a physical layout with no visible effect",
		"CREATE TABLE t_opt (a INT) ROW_FORMAT=DYNAMIC").onlyWith("CREATE TABLE t_opt (a INT) ROW_FORMAT=COMPRESSED"),
	ast.TableOptionEncryption: ignoredAsMySQL("ENCRYPTION='N' is the default: no encryption",
		"CREATE TABLE t_opt (a INT) ENCRYPTION='N'").onlyWith("CREATE TABLE t_opt (a INT) ENCRYPTION='Y'"),

	ast.TableOptionAutoIdCache:      refuse("AUTO_ID_CACHE", "CREATE TABLE t_opt (a INT) AUTO_ID_CACHE=1"),
	ast.TableOptionAutoRandomBase:   refuse("AUTO_RANDOM_BASE", "CREATE TABLE t_opt (a INT) AUTO_RANDOM_BASE=1"),
	ast.TableOptionCompression:      refuse("COMPRESSION", "CREATE TABLE t_opt (a INT) COMPRESSION='zlib'"),
	ast.TableOptionConnection:       refuse("CONNECTION", "CREATE TABLE t_opt (a INT) CONNECTION='x'"),
	ast.TableOptionPassword:         refuse("PASSWORD", "CREATE TABLE t_opt (a INT) PASSWORD='x'"),
	ast.TableOptionKeyBlockSize:     refuse("KEY_BLOCK_SIZE", "CREATE TABLE t_opt (a INT) KEY_BLOCK_SIZE=8"),
	ast.TableOptionStatsPersistent:  refuse("STATS_PERSISTENT", "CREATE TABLE t_opt (a INT) STATS_PERSISTENT=0"),
	ast.TableOptionStatsAutoRecalc:  refuse("STATS_AUTO_RECALC", "CREATE TABLE t_opt (a INT) STATS_AUTO_RECALC=0"),
	ast.TableOptionStatsSamplePages: refuse("STATS_SAMPLE_PAGES", "CREATE TABLE t_opt (a INT) STATS_SAMPLE_PAGES=10"),
	ast.TableOptionShardRowID:       refuse("SHARD_ROW_ID_BITS", "CREATE TABLE t_opt (a INT) SHARD_ROW_ID_BITS=4"),
	ast.TableOptionPreSplitRegion:   refuse("PRE_SPLIT_REGIONS", "CREATE TABLE t_opt (a INT) SHARD_ROW_ID_BITS=4 PRE_SPLIT_REGIONS=2"),
	ast.TableOptionTablespace:       refuse("TABLESPACE", "CREATE TABLE t_opt (a INT) TABLESPACE ts"),
	ast.TableOptionNodegroup:        refuse("NODEGROUP", "CREATE TABLE t_opt (a INT) NODEGROUP=1"),
	// As sql_mode says (sql/ddl/table_options.go): ignored with warning
	// 1618 under NO_DIR_IN_CREATE, else refused (the default mode).
	ast.TableOptionDataDirectory:            impl("session/testdata/sql_mode", "").onlyWith("CREATE TABLE t_opt (a INT) DATA DIRECTORY='/tmp'"),
	ast.TableOptionIndexDirectory:           impl("session/testdata/sql_mode", "").onlyWith("CREATE TABLE t_opt (a INT) INDEX DIRECTORY='/tmp'"),
	ast.TableOptionStorageMedia:             refuse("STORAGE DISK/MEMORY", "CREATE TABLE t_opt (a INT) STORAGE DISK"),
	ast.TableOptionSecondaryEngine:          refuse("SECONDARY_ENGINE", "CREATE TABLE t_opt (a INT) SECONDARY_ENGINE=rapid"),
	ast.TableOptionSecondaryEngineNull:      refuse("SECONDARY_ENGINE", "CREATE TABLE t_opt (a INT) SECONDARY_ENGINE=NULL"),
	ast.TableOptionInsertMethod:             refuse("INSERT_METHOD", "CREATE TABLE t_opt (a INT) INSERT_METHOD=LAST"),
	ast.TableOptionTableCheckSum:            refuse("TABLE_CHECKSUM", "CREATE TABLE t_opt (a INT) TABLE_CHECKSUM=1"),
	ast.TableOptionUnion:                    refuse("UNION (MERGE tables)", "CREATE TABLE t_opt (a INT) UNION=(t)"),
	ast.TableOptionTTL:                      refuse("TTL", "CREATE TABLE t_opt (a INT, d DATETIME) TTL = d + INTERVAL 1 DAY"),
	ast.TableOptionTTLEnable:                refuse("TTL", "CREATE TABLE t_opt (a INT, d DATETIME) TTL = d + INTERVAL 1 DAY TTL_ENABLE='OFF'"),
	ast.TableOptionTTLJobInterval:           refuse("TTL", "CREATE TABLE t_opt (a INT, d DATETIME) TTL = d + INTERVAL 1 DAY TTL_JOB_INTERVAL='1h'"),
	ast.TableOptionEngineAttribute:          refuse("ENGINE_ATTRIBUTE", "CREATE TABLE t_opt (a INT) ENGINE_ATTRIBUTE='{}'"),
	ast.TableOptionSecondaryEngineAttribute: refuse("SECONDARY_ENGINE_ATTRIBUTE", "CREATE TABLE t_opt (a INT) SECONDARY_ENGINE_ATTRIBUTE='{}'"),
	ast.TableOptionAutoextendSize:           refuse("AUTOEXTEND_SIZE", "CREATE TABLE t_opt (a INT) AUTOEXTEND_SIZE='4M'"),
	ast.TableOptionPageChecksum:             refuse("PAGE_CHECKSUM", "CREATE TABLE t_opt (a INT) PAGE_CHECKSUM=1"),
	ast.TableOptionPageCompressed:           refuse("PAGE_COMPRESSED", "CREATE TABLE t_opt (a INT) PAGE_COMPRESSED=1"),
	ast.TableOptionPageCompressionLevel:     refuse("PAGE_COMPRESSION_LEVEL", "CREATE TABLE t_opt (a INT) PAGE_COMPRESSION_LEVEL=1"),
	ast.TableOptionTransactional:            refuse("TRANSACTIONAL", "CREATE TABLE t_opt (a INT) TRANSACTIONAL=1"),
	ast.TableOptionIetfQuotes:               refuse("IETF_QUOTES", "CREATE TABLE t_opt (a INT) IETF_QUOTES=YES"),
	ast.TableOptionSequence:                 refuse("sequences", ""),
	ast.TableOptionAffinity:                 refuse("AFFINITY", ""),
	ast.TableOptionPlacementPolicy:          refuse("placement policies", "CREATE TABLE t_opt (a INT) PLACEMENT POLICY=p"),
	ast.TableOptionStatsBuckets:             refuse("STATS_BUCKETS", "CREATE TABLE t_opt (a INT) STATS_BUCKETS=10"),
	ast.TableOptionStatsTopN:                refuse("STATS_TOPN", "CREATE TABLE t_opt (a INT) STATS_TOPN=10"),
	ast.TableOptionStatsColsChoice:          refuse("STATS_COL_CHOICE", "CREATE TABLE t_opt (a INT) STATS_COL_CHOICE='all'"),
	ast.TableOptionStatsColList:             refuse("STATS_COL_LIST", "CREATE TABLE t_opt (a INT) STATS_COL_LIST='a'"),
	ast.TableOptionStatsSampleRate:          refuse("STATS_SAMPLE_RATE", "CREATE TABLE t_opt (a INT) STATS_SAMPLE_RATE=0.5"),
}

// columnOptionLedger: options of a column definition (CREATE TABLE and
// ALTER TABLE ... ADD COLUMN).
var columnOptionLedger = map[ast.ColumnOptionType]ledgerEntry{
	ast.ColumnOptionNoOption:      placeholder("zero value"),
	ast.ColumnOptionPrimaryKey:    impl(tKeys, "CREATE TABLE t_col (a INT PRIMARY KEY)"),
	ast.ColumnOptionNotNull:       impl(tDDL, "CREATE TABLE t_col (a INT NOT NULL)"),
	ast.ColumnOptionNull:          impl(tDDL, "CREATE TABLE t_col (a INT NULL)"),
	ast.ColumnOptionAutoIncrement: impl(tInsert, "CREATE TABLE t_col (a INT AUTO_INCREMENT KEY)"),
	ast.ColumnOptionDefaultValue:  impl(tDDL, "CREATE TABLE t_col (a INT DEFAULT 1)"),
	ast.ColumnOptionUniqKey:       impl(tKeys, "CREATE TABLE t_col (a INT UNIQUE)"),
	ast.ColumnOptionComment:       impl("session/testdata/show_create_quoting", "CREATE TABLE t_col (a INT COMMENT 'c')"),
	ast.ColumnOptionCollate:       impl(tColl, "CREATE TABLE t_col (s VARCHAR(5) COLLATE utf8mb4_0900_as_cs)"),
	ast.ColumnOptionOnUpdate:      impl("session/testdata/on_update", "CREATE TABLE t_col (d DATETIME ON UPDATE CURRENT_TIMESTAMP)"),
	ast.ColumnOptionFulltext:      refuse("FULLTEXT", ""),
	ast.ColumnOptionGenerated:     impl("session/testdata/generated_columns", "CREATE TABLE t_col (a INT, g INT AS (a + 1))"),
	ast.ColumnOptionReference:     refuse("foreign keys", "CREATE TABLE t_col (a INT REFERENCES t (a))"),
	ast.ColumnOptionCheck:         impl("session/testdata/check_constraints", "CREATE TABLE t_col (a INT CHECK (a > 0))"),
	ast.ColumnOptionColumnFormat:  refuse("COLUMN_FORMAT", "CREATE TABLE t_col (a INT COLUMN_FORMAT FIXED)"),
	ast.ColumnOptionStorage:       refuse("STORAGE", "CREATE TABLE t_col (a INT STORAGE DISK)"),
	ast.ColumnOptionAutoRandom:    refuse("AUTO_RANDOM", "CREATE TABLE t_col (a BIGINT AUTO_RANDOM PRIMARY KEY)"),
	ast.ColumnOptionSecondaryEngineAttribute: refuse("SECONDARY_ENGINE_ATTRIBUTE",
		"CREATE TABLE t_col (a INT SECONDARY_ENGINE_ATTRIBUTE '{}')"),
}

// constraintLedger: table constraints (CREATE TABLE, ALTER TABLE ... ADD).
var constraintLedger = map[ast.ConstraintType]ledgerEntry{
	ast.ConstraintNoConstraint: placeholder("zero value"),
	ast.ConstraintPrimaryKey:   impl(tKeys, "CREATE TABLE t_con (a INT, PRIMARY KEY (a))"),
	ast.ConstraintKey:          impl(tKeys, "CREATE TABLE t_con (a INT, KEY (a))"),
	ast.ConstraintIndex:        impl(tKeys, "CREATE TABLE t_con (a INT, INDEX (a))"),
	ast.ConstraintUniq:         impl(tKeys, "CREATE TABLE t_con (a INT, UNIQUE (a))"),
	ast.ConstraintUniqKey:      impl(tKeys, "CREATE TABLE t_con (a INT, UNIQUE KEY (a))"),
	ast.ConstraintUniqIndex:    impl(tKeys, "CREATE TABLE t_con (a INT, UNIQUE INDEX (a))"),
	ast.ConstraintForeignKey:   refuse("foreign keys", "CREATE TABLE t_con (a INT, FOREIGN KEY (a) REFERENCES t (a))"),
	ast.ConstraintFulltext:     refuse("FULLTEXT indexes", "CREATE TABLE t_con (s VARCHAR(5), FULLTEXT KEY (s))"),
	ast.ConstraintCheck:        impl("session/testdata/check_constraints", "CREATE TABLE t_con (a INT, CHECK (a > 0))"),
	ast.ConstraintVector:       refuse("vector indexes", ""),
	ast.ConstraintColumnar:     refuse("columnar indexes", ""),
}

// alterTableLedger: ALTER TABLE specifications.
var alterTableLedger = map[ast.AlterTableType]ledgerEntry{
	ast.AlterTableAddColumns:    impl(tOnline, "ALTER TABLE t ADD COLUMN c3 INT"),
	ast.AlterTableAddConstraint: impl(tOnline, "ALTER TABLE t ADD INDEX ic (b)"),
	ast.AlterTableDropColumn:    impl(tOnline, "ALTER TABLE t ADD COLUMN c3 INT; ALTER TABLE t DROP COLUMN c3"),
	ast.AlterTableDropIndex:     impl(tOnline, "ALTER TABLE t ADD INDEX ic (b); ALTER TABLE t DROP INDEX ic"),

	// COMMENT, AUTO_INCREMENT and ENGINE; other options are 1235 in sql/ddl.
	ast.AlterTableOption:                        impl(tAlter, "ALTER TABLE t COMMENT='x'"),
	ast.AlterTableDropPrimaryKey:                impl(tAlter, "CREATE TABLE t_new (a INT, PRIMARY KEY (a) NONCLUSTERED); ALTER TABLE t_new DROP PRIMARY KEY"),
	ast.AlterTableDropForeignKey:                refuse("foreign keys", "ALTER TABLE t DROP FOREIGN KEY fk"),
	ast.AlterTableModifyColumn:                  impl(tAlter, "ALTER TABLE t MODIFY b BIGINT"),
	ast.AlterTableChangeColumn:                  impl(tAlter, "ALTER TABLE t CHANGE b b2 INT"),
	ast.AlterTableRenameColumn:                  impl(tAlter, "ALTER TABLE t RENAME COLUMN b TO b2"),
	ast.AlterTableRenameTable:                   impl(tAlter, "ALTER TABLE t RENAME TO t_new"),
	ast.AlterTableAlterColumn:                   impl(tAlter, "ALTER TABLE t ALTER b SET DEFAULT 1"),
	ast.AlterTableLock:                          refuse("ALTER TABLE ... LOCK", "ALTER TABLE t LOCK=NONE"),
	ast.AlterTableWriteable:                     refuse("ALTER TABLE ... READ ONLY", ""),
	ast.AlterTableAlgorithm:                     refuse("ALTER TABLE ... ALGORITHM", "ALTER TABLE t ALGORITHM=INPLACE"),
	ast.AlterTableRenameIndex:                   impl(tAlter, "CREATE INDEX i ON t (b); ALTER TABLE t RENAME INDEX i TO j"),
	ast.AlterTableForce:                         refuse("ALTER TABLE ... FORCE", "ALTER TABLE t FORCE"),
	ast.AlterTableAddPartitions:                 refuse("partitions", "ALTER TABLE t ADD PARTITION (PARTITION p1 VALUES LESS THAN (10))"),
	ast.AlterTablePartitionAttributes:           refuse("partitions", ""),
	ast.AlterTablePartitionOptions:              refuse("partitions", ""),
	ast.AlterTableCoalescePartitions:            refuse("partitions", "ALTER TABLE t COALESCE PARTITION 2"),
	ast.AlterTableDropPartition:                 refuse("partitions", "ALTER TABLE t DROP PARTITION p0"),
	ast.AlterTableTruncatePartition:             refuse("partitions", "ALTER TABLE t TRUNCATE PARTITION p0"),
	ast.AlterTablePartition:                     refuse("partitions", "ALTER TABLE t PARTITION BY HASH(a) PARTITIONS 2"),
	ast.AlterTableEnableKeys:                    refuse("ALTER TABLE ... ENABLE KEYS", "ALTER TABLE t ENABLE KEYS"),
	ast.AlterTableDisableKeys:                   refuse("ALTER TABLE ... DISABLE KEYS", "ALTER TABLE t DISABLE KEYS"),
	ast.AlterTableRemovePartitioning:            refuse("partitions", "ALTER TABLE t REMOVE PARTITIONING"),
	ast.AlterTableWithValidation:                refuse("partitions", ""),
	ast.AlterTableWithoutValidation:             refuse("partitions", ""),
	ast.AlterTableSecondaryLoad:                 refuse("SECONDARY_LOAD", "ALTER TABLE t SECONDARY_LOAD"),
	ast.AlterTableSecondaryUnload:               refuse("SECONDARY_UNLOAD", "ALTER TABLE t SECONDARY_UNLOAD"),
	ast.AlterTableRebuildPartition:              refuse("partitions", "ALTER TABLE t REBUILD PARTITION p0"),
	ast.AlterTableReorganizePartition:           refuse("partitions", ""),
	ast.AlterTableCheckPartitions:               refuse("partitions", "ALTER TABLE t CHECK PARTITION p0"),
	ast.AlterTableExchangePartition:             refuse("partitions", "ALTER TABLE t EXCHANGE PARTITION p0 WITH TABLE t2"),
	ast.AlterTableOptimizePartition:             refuse("partitions", "ALTER TABLE t OPTIMIZE PARTITION p0"),
	ast.AlterTableRepairPartition:               refuse("partitions", "ALTER TABLE t REPAIR PARTITION p0"),
	ast.AlterTableImportPartitionTablespace:     refuse("partitions", "ALTER TABLE t IMPORT PARTITION p0 TABLESPACE"),
	ast.AlterTableDiscardPartitionTablespace:    refuse("partitions", "ALTER TABLE t DISCARD PARTITION p0 TABLESPACE"),
	ast.AlterTableAlterCheck:                    impl("session/testdata/check_constraints", ""),
	ast.AlterTableDropCheck:                     impl("session/testdata/check_constraints", ""),
	ast.AlterTableImportTablespace:              refuse("IMPORT TABLESPACE", "ALTER TABLE t IMPORT TABLESPACE"),
	ast.AlterTableDiscardTablespace:             refuse("DISCARD TABLESPACE", "ALTER TABLE t DISCARD TABLESPACE"),
	ast.AlterTableIndexInvisible:                refuse("invisible indexes", "ALTER TABLE t ALTER INDEX i INVISIBLE"),
	ast.AlterTableOrderByColumns:                refuse("ALTER TABLE ... ORDER BY", "ALTER TABLE t ORDER BY b"),
	ast.AlterTableSetTiFlashReplica:             refuse("TiFlash replicas", "ALTER TABLE t SET TIFLASH REPLICA 1"),
	ast.AlterTableAddStatistics:                 refuse("extended statistics", ""),
	ast.AlterTableDropStatistics:                refuse("extended statistics", ""),
	ast.AlterTableAttributes:                    refuse("ALTER TABLE ... ATTRIBUTES", "ALTER TABLE t ATTRIBUTES='x'"),
	ast.AlterTableCache:                         refuse("cached tables", "ALTER TABLE t CACHE"),
	ast.AlterTableNoCache:                       refuse("cached tables", "ALTER TABLE t NOCACHE"),
	ast.AlterTableStatsOptions:                  refuse("ALTER TABLE statistics options", ""),
	ast.AlterTableDropFirstPartition:            refuse("partitions", ""),
	ast.AlterTableAddLastPartition:              refuse("partitions", ""),
	ast.AlterTableReorganizeLastPartition:       refuse("partitions", ""),
	ast.AlterTableReorganizeFirstPartition:      refuse("partitions", ""),
	ast.AlterTableRemoveTTL:                     refuse("TTL", "ALTER TABLE t REMOVE TTL"),
	ast.AlterTableSplitIndex:                    refuse("ALTER TABLE ... SPLIT", ""),
	ast.AlterTableAddMaskingPolicy:              refuse("masking policies", ""),
	ast.AlterTableEnableMaskingPolicy:           refuse("masking policies", ""),
	ast.AlterTableDisableMaskingPolicy:          refuse("masking policies", ""),
	ast.AlterTableDropMaskingPolicy:             refuse("masking policies", ""),
	ast.AlterTableModifyMaskingPolicyExpression: refuse("masking policies", ""),
	ast.AlterTableModifyMaskingPolicyRestrictOn: refuse("masking policies", ""),
}

// columnPositionLedger: ALTER TABLE ... ADD COLUMN ... FIRST | AFTER.
var columnPositionLedger = map[ast.ColumnPositionType]ledgerEntry{
	ast.ColumnPositionNone:  impl(tOnline, "ALTER TABLE t ADD COLUMN c4 INT"),
	ast.ColumnPositionFirst: impl(tAlter, "ALTER TABLE t ADD COLUMN c5 INT FIRST"),
	ast.ColumnPositionAfter: impl(tAlter, "ALTER TABLE t ADD COLUMN c5 INT AFTER a"),
}

// databaseOptionLedger: CREATE DATABASE options.
var databaseOptionLedger = map[ast.DatabaseOptionType]ledgerEntry{
	ast.DatabaseOptionNone: placeholder("zero value"),
	ast.DatabaseOptionCharset: impl(tLedger, "CREATE DATABASE d_opt CHARACTER SET utf8mb4").
		onlyWith("CREATE DATABASE d_opt CHARACTER SET latin1"),
	ast.DatabaseOptionCollate: impl(tLedger, "CREATE DATABASE d_opt COLLATE utf8mb4_bin").
		onlyWith("CREATE DATABASE d_opt COLLATE utf8mb4_general_ci"),
	ast.DatabaseOptionEncryption: ignoredAsMySQL("ENCRYPTION='N' is the default: no encryption",
		"CREATE DATABASE d_opt ENCRYPTION='N'").onlyWith("CREATE DATABASE d_opt ENCRYPTION='Y'"),
	ast.DatabaseSetTiFlashReplica:     refuse("TiFlash replicas", ""),
	ast.DatabaseOptionPlacementPolicy: refuse("placement policies", "CREATE DATABASE d_opt PLACEMENT POLICY=p"),
}

// indexKeyTypeLedger: CREATE [UNIQUE|FULLTEXT|SPATIAL|...] INDEX.
var indexKeyTypeLedger = map[ast.IndexKeyType]ledgerEntry{
	ast.IndexKeyTypeNone:     impl(tOnline, "CREATE INDEX ik ON t (b)"),
	ast.IndexKeyTypeUnique:   impl(tOnline, "CREATE UNIQUE INDEX iku ON t (s)"),
	ast.IndexKeyTypeSpatial:  refuse("SPATIAL indexes", "CREATE SPATIAL INDEX isp ON t (s)"),
	ast.IndexKeyTypeFulltext: refuse("FULLTEXT indexes", "CREATE FULLTEXT INDEX ift ON t (s)"),
	ast.IndexKeyTypeVector:   refuse("vector indexes", ""),
	ast.IndexKeyTypeColumnar: refuse("columnar indexes", ""),
}

// indexTypeLedger: USING BTREE | HASH | ... of an index.
var indexTypeLedger = map[ast.IndexType]ledgerEntry{
	ast.IndexTypeInvalid: placeholder("zero value: no USING"),
	ast.IndexTypeBtree: ignoredAsMySQL("BTREE is the only index structure InnoDB has",
		"CREATE TABLE t_idx (a INT, KEY (a) USING BTREE)"),
	ast.IndexTypeHash: ignoredAsMySQL("InnoDB builds a BTREE instead with Note 3502, as shoal does",
		"CREATE TABLE t_idx (a INT, KEY (a) USING HASH)"),
	ast.IndexTypeRtree:    refuse("USING RTREE", "CREATE TABLE t_idx (a INT, KEY (a) USING RTREE)"),
	ast.IndexTypeHypo:     refuse("hypothetical indexes", ""),
	ast.IndexTypeVector:   refuse("vector indexes", ""),
	ast.IndexTypeInverted: refuse("inverted indexes", ""),
	ast.IndexTypeHNSW:     refuse("HNSW indexes", ""),
	ast.IndexTypeFulltext: refuse("FULLTEXT indexes", ""),
}

// indexVisibilityLedger: VISIBLE | INVISIBLE.
var indexVisibilityLedger = map[ast.IndexVisibility]ledgerEntry{
	ast.IndexVisibilityDefault:   impl(tKeys, "CREATE TABLE t_idx (a INT, KEY (a))"),
	ast.IndexVisibilityVisible:   impl(tLedger, "CREATE TABLE t_idx (a INT, KEY (a) VISIBLE)"),
	ast.IndexVisibilityInvisible: refuse("invisible indexes", "CREATE TABLE t_idx (a INT, KEY (a) INVISIBLE)"),
}

// indexOptionFieldLedger: the fields of ast.IndexOption (walked by
// reflection in the test, so a new field surfaces). Visibility and Tp
// have ledgers of their own.
var indexOptionFieldLedger = map[string]ledgerEntry{
	"Tp":           placeholder("indexTypeLedger"),
	"Visibility":   placeholder("indexVisibilityLedger"),
	"PrimaryKeyTp": impl(tClusterd, "CREATE TABLE t_idx (a INT, PRIMARY KEY (a) NONCLUSTERED)"),
	"KeyBlockSize": refuse("index KEY_BLOCK_SIZE", "CREATE TABLE t_idx (a INT, KEY (a) KEY_BLOCK_SIZE=8)"),
	"Comment":      refuse("index comments", "CREATE TABLE t_idx (a INT, KEY (a) COMMENT 'c')"),
	"ParserName":   refuse("WITH PARSER", "CREATE TABLE t_idx (a INT, KEY (a) WITH PARSER ngram)"),
	"Global":       refuse("global indexes", ""),
	"SplitOpt":     refuse("index SPLIT options", ""),
	"SecondaryEngineAttr": refuse("index SECONDARY_ENGINE_ATTRIBUTE",
		"CREATE TABLE t_idx (a INT, KEY (a) SECONDARY_ENGINE_ATTRIBUTE='{}')"),
	"AddColumnarReplicaOnDemand": refuse("columnar replicas", ""),
	"Condition":                  refuse("partial indexes", ""),
}

// indexPartLedger: the fields of ast.IndexPartSpecification (a key part).
var indexPartLedger = map[string]ledgerEntry{
	"Column": impl(tKeys, "CREATE TABLE t_idx (a INT, KEY (a))"),
	"Length": impl(tKeys, "CREATE TABLE t_idx (s VARCHAR(20), KEY (s(4)))"),
	"Desc":   refuse("descending index key parts", "CREATE TABLE t_idx (a INT, KEY (a DESC))"),
	"Expr":   refuse("expression indexes", "CREATE TABLE t_idx (a INT, KEY ((a + 1)))"),
}

// ddlLockLedger and ddlAlgorithmLedger: LOCK= and ALGORITHM= of CREATE
// INDEX / DROP INDEX.
var ddlLockLedger = map[ast.LockType]ledgerEntry{
	ast.LockTypeNone:      ignoredAsMySQL("LOCK=NONE: shoal's online index changes never block reads or writes", "CREATE INDEX il ON t (b) LOCK=NONE"),
	ast.LockTypeDefault:   ignoredAsMySQL("LOCK=DEFAULT: the least locking, which is none", "CREATE INDEX il2 ON t (b) LOCK=DEFAULT"),
	ast.LockTypeShared:    refuse("LOCK=SHARED", "CREATE INDEX il3 ON t (b) LOCK=SHARED"),
	ast.LockTypeExclusive: refuse("LOCK=EXCLUSIVE", "CREATE INDEX il3 ON t (b) LOCK=EXCLUSIVE"),
}

var ddlAlgorithmLedger = map[ast.AlgorithmType]ledgerEntry{
	ast.AlgorithmTypeDefault: impl(tOnline, "CREATE INDEX ia ON t (b) ALGORITHM=DEFAULT"),
	ast.AlgorithmTypeInplace: ignoredAsMySQL("INPLACE: shoal's online index build does not copy the table",
		"CREATE INDEX ia2 ON t (b) ALGORITHM=INPLACE"),
	ast.AlgorithmTypeCopy:    refuse("ALGORITHM=COPY", "CREATE INDEX ia3 ON t (b) ALGORITHM=COPY"),
	ast.AlgorithmTypeInstant: refuse("ALGORITHM=INSTANT", "CREATE INDEX ia3 ON t (b) ALGORITHM=INSTANT"),
}

// temporaryLedger: CREATE/DROP [TEMPORARY|GLOBAL TEMPORARY] TABLE.
var temporaryLedger = map[ast.TemporaryKeyword]ledgerEntry{
	ast.TemporaryNone:   impl(tDDL, "CREATE TABLE t_tmp (a INT)"),
	ast.TemporaryLocal:  impl("session/testdata/temporary_tables", "CREATE TEMPORARY TABLE t_tmp2 (a INT); DROP TEMPORARY TABLE t_tmp2"),
	ast.TemporaryGlobal: refuse("GLOBAL TEMPORARY tables", "CREATE GLOBAL TEMPORARY TABLE t_tmp2 (a INT) ON COMMIT DELETE ROWS"),
}

// viewAlgorithmLedger, viewSecurityLedger, viewCheckLedger: CREATE VIEW's
// clauses.
var viewAlgorithmLedger = map[ast.ViewAlgorithm]ledgerEntry{
	ast.AlgorithmUndefined: impl(tDDL, "CREATE OR REPLACE VIEW v_alg AS SELECT a FROM t"),
	ast.AlgorithmMerge: ignoredAsMySQL("MERGE or TEMPTABLE changes how MySQL evaluates a view, never its rows",
		"CREATE OR REPLACE ALGORITHM=MERGE VIEW v_alg AS SELECT a FROM t"),
	ast.AlgorithmTemptable: ignoredAsMySQL("MERGE or TEMPTABLE changes how MySQL evaluates a view, never its rows",
		"CREATE OR REPLACE ALGORITHM=TEMPTABLE VIEW v_alg AS SELECT a FROM t"),
}

var viewSecurityLedger = map[ast.ViewSecurity]ledgerEntry{
	// The parser gives every view DEFINER unless told INVOKER; reading a
	// view needs privileges on the view only, as for a DEFINER view.
	ast.SecurityDefiner: impl(tPrivs, "CREATE OR REPLACE SQL SECURITY DEFINER VIEW v_sec AS SELECT a FROM t"),
	ast.SecurityInvoker: refuse("SQL SECURITY INVOKER", "CREATE SQL SECURITY INVOKER VIEW v_sec2 AS SELECT a FROM t"),
}

// viewCheckLedger: the parser gives every view CASCADED CHECK OPTION
// unless told LOCAL, so the two cannot be told from none.
var viewCheckLedger = map[ast.ViewCheckOption]ledgerEntry{
	ast.CheckOptionCascaded: ignoredAsMySQL("shoal's views are not updatable (writes through them fail), so no check option can apply",
		"CREATE VIEW v_chk AS SELECT a FROM t WITH CASCADED CHECK OPTION"),
	ast.CheckOptionLocal: ignoredAsMySQL("shoal's views are not updatable (writes through them fail), so no check option can apply",
		"CREATE VIEW v_chk2 AS SELECT a FROM t WITH LOCAL CHECK OPTION"),
}

// selectLockLedger: FOR UPDATE / FOR SHARE and their waits.
var selectLockLedger = map[ast.SelectLockType]ledgerEntry{
	ast.SelectLockNone:                impl(tSelect, "SELECT a FROM t"),
	ast.SelectLockForUpdate:           impl(tTxn, "SELECT a FROM t FOR UPDATE"),
	ast.SelectLockForShare:            impl(tTxn, "SELECT a FROM t LOCK IN SHARE MODE"),
	ast.SelectLockForUpdateNoWait:     impl("tests/acceptance/txn_test.go", "SELECT a FROM t FOR UPDATE NOWAIT"),
	ast.SelectLockForShareNoWait:      impl(tTxn, "SELECT a FROM t FOR SHARE NOWAIT"),
	ast.SelectLockForUpdateWaitN:      impl(tTxn, "SELECT a FROM t FOR UPDATE WAIT 1"),
	ast.SelectLockForUpdateSkipLocked: refuse("SKIP LOCKED", "SELECT a FROM t FOR UPDATE SKIP LOCKED"),
	ast.SelectLockForShareSkipLocked:  refuse("SKIP LOCKED", "SELECT a FROM t FOR SHARE SKIP LOCKED"),
}

// selectIntoLedger: SELECT ... INTO (the parser accepts only INTO
// OUTFILE; the others cannot be written yet, hence no examples).
var selectIntoLedger = map[ast.SelectIntoType]ledgerEntry{
	ast.SelectIntoOutfile:  refuse("SELECT ... INTO OUTFILE", "SELECT a FROM t INTO OUTFILE '/tmp/ledger_out'"),
	ast.SelectIntoDumpfile: refuse("SELECT ... INTO DUMPFILE", ""),
	ast.SelectIntoVars:     refuse("SELECT ... INTO variables", ""),
}

// selectOptsLedger: the fields of ast.SelectStmtOpts (SELECT modifiers).
var selectOptsLedger = map[string]ledgerEntry{
	"Distinct":    impl(tSelect, "SELECT DISTINCT a FROM t"),
	"ExplicitAll": impl(tSelect, "SELECT ALL a FROM t"),
	"SQLBigResult": ignoredAsMySQL("SQL_BIG_RESULT only steers MySQL's choice of temporary table",
		"SELECT SQL_BIG_RESULT b FROM t GROUP BY b"),
	"SQLSmallResult": ignoredAsMySQL("SQL_SMALL_RESULT only steers MySQL's choice of temporary table",
		"SELECT SQL_SMALL_RESULT b FROM t GROUP BY b"),
	"SQLBufferResult": ignoredAsMySQL("SQL_BUFFER_RESULT only changes when MySQL releases table locks",
		"SELECT SQL_BUFFER_RESULT a FROM t"),
	"SQLCache": ignoredAsMySQL("MySQL 8 has no query cache; SQL_NO_CACHE warns 1681 as there",
		"SELECT SQL_NO_CACHE a FROM t"),
	"CalcFoundRows": refuse("SQL_CALC_FOUND_ROWS", "SELECT SQL_CALC_FOUND_ROWS a FROM t LIMIT 1"),
	"StraightJoin": ignoredAsMySQL("STRAIGHT_JOIN fixes MySQL's join order, never the rows",
		"SELECT STRAIGHT_JOIN t.a FROM t, t AS u"),
	"Priority": ignoredAsMySQL("HIGH_PRIORITY matters only to table-locking engines, not InnoDB",
		"SELECT HIGH_PRIORITY a FROM t"),
	"TableHints": placeholder("optimizerHintLedger"),
}

// tableNameLedger: the fields of ast.TableName beyond the name.
var tableNameLedger = map[string]ledgerEntry{
	"Schema":  impl(tSelect, "SELECT a FROM test.t"),
	"Name":    impl(tSelect, "SELECT a FROM t"),
	"IsAlias": impl(tUpdDel, ""),
	"IndexHints": ignoredAsMySQL("USE/FORCE/IGNORE INDEX steer MySQL's plan, never the rows; an unknown index is 1176 as in MySQL",
		"SELECT a FROM t USE INDEX (PRIMARY)"),
	"PartitionNames": refuse("partition selection", "SELECT a FROM t PARTITION (p0)"),
	"TableSample":    refuse("TABLESAMPLE", "SELECT a FROM t TABLESAMPLE REGIONS()"),
	"AsOf":           refuse("AS OF TIMESTAMP", "SELECT a FROM t AS OF TIMESTAMP NOW()"),
}

// clauseLedger: clauses and modifiers that are flags or values rather
// than parser enumerations (the checker's cases name them).
var clauseLedger = map[string]ledgerEntry{
	"INSERT LOW_PRIORITY": ignoredAsMySQL("LOW_PRIORITY matters only to table-locking engines, not InnoDB",
		"INSERT LOW_PRIORITY INTO t VALUES (200, 1, 'x')"),
	"INSERT HIGH_PRIORITY": ignoredAsMySQL("HIGH_PRIORITY matters only to table-locking engines, not InnoDB",
		"INSERT HIGH_PRIORITY INTO t VALUES (201, 1, 'x')"),
	"INSERT DELAYED": ignoredAsMySQL("MySQL 8 runs INSERT DELAYED as INSERT with warning 3005, as shoal does",
		"INSERT DELAYED INTO t VALUES (202, 1, 'x')"),
	"INSERT IGNORE":                        impl(tInsert, "INSERT IGNORE INTO t VALUES (202, 1, 'x')"),
	"INSERT PARTITION":                     refuse("partition selection", "INSERT INTO t PARTITION (p0) VALUES (203, 1, 'x')"),
	"UPDATE LOW_PRIORITY":                  ignoredAsMySQL("LOW_PRIORITY matters only to table-locking engines, not InnoDB", "UPDATE LOW_PRIORITY t SET b = 1 WHERE a = 200"),
	"UPDATE IGNORE":                        impl(tUpdDel, "UPDATE IGNORE t SET b = 1 WHERE a = 200"),
	"DELETE LOW_PRIORITY":                  ignoredAsMySQL("LOW_PRIORITY matters only to table-locking engines, not InnoDB", "DELETE LOW_PRIORITY FROM t WHERE a = 200"),
	"DELETE QUICK":                         ignoredAsMySQL("QUICK only changes how MyISAM merges index leaves", "DELETE QUICK FROM t WHERE a = 201"),
	"DELETE IGNORE":                        refuse("DELETE IGNORE", "DELETE IGNORE FROM t WHERE a = 202"),
	"FOR UPDATE OF":                        refuse("FOR UPDATE OF", "SELECT a FROM t FOR UPDATE OF t"),
	"EXPLAIN ANALYZE":                      refuse("EXPLAIN ANALYZE", "EXPLAIN ANALYZE SELECT a FROM t"),
	"EXPLAIN FORMAT":                       impl("sql/planner/testdata", "EXPLAIN FORMAT='row' SELECT a FROM t").onlyWith("EXPLAIN FORMAT=JSON SELECT a FROM t"),
	"EXPLAIN EXPLORE":                      refuse("EXPLAIN EXPLORE", ""),
	"optimizer hint SET_VAR":               refuse("the SET_VAR hint", "SELECT /*+ SET_VAR(sql_mode='') */ a FROM t"),
	"optimizer hints":                      ignoredAsMySQL("optimizer hints steer MySQL's plan, never the rows (MAX_EXECUTION_TIME is implemented: kill_test.go)", "SELECT /*+ NO_INDEX_MERGE(t) */ a FROM t"),
	"BEGIN AS OF":                          refuse("START TRANSACTION READ ONLY AS OF", "START TRANSACTION READ ONLY AS OF TIMESTAMP NOW()"),
	"BEGIN CAUSAL":                         refuse("causal consistency", "START TRANSACTION WITH CAUSAL CONSISTENCY ONLY"),
	"COMMIT/ROLLBACK AND CHAIN or RELEASE": refuse("AND CHAIN / RELEASE", "COMMIT AND CHAIN"),
	"CREATE TABLE PARTITION BY":            refuse("partitions", "CREATE TABLE t_part (a INT) PARTITION BY HASH (a) PARTITIONS 2"),
	"AUTO_INCREMENT=N on TEMPORARY tables": impl("session/testdata/temporary_tables",
		"CREATE TEMPORARY TABLE t_tmp3 (a INT AUTO_INCREMENT KEY) AUTO_INCREMENT=10; DROP TEMPORARY TABLE t_tmp3"),
	"SET NAMES": impl(tLedger, "SET NAMES utf8mb4").onlyWith("SET NAMES latin1"),
	"transaction isolation": impl(tLedger, "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ").
		onlyWith("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED"),
	// The parser makes SET TRANSACTION READ ONLY and SET SESSION
	// TRANSACTION READ ONLY the same tx_read_only assignment, though
	// MySQL applies the first to the next transaction only.
	"SET TRANSACTION READ ONLY": refuse("SET [SESSION] TRANSACTION READ ONLY; use START TRANSACTION READ ONLY or SET SESSION transaction_read_only = ON",
		"SET TRANSACTION READ ONLY"),
	"SET TRANSACTION READ WRITE": impl(tLedger, "SET TRANSACTION READ WRITE").
		onlyWith("SET SESSION transaction_read_only = ON; SET TRANSACTION READ WRITE"),
	"ZEROFILL":                 refuse("ZEROFILL", "CREATE TABLE t_col (a INT(5) ZEROFILL)"),
	"GROUP BY ... WITH ROLLUP": refuse("WITH ROLLUP", "SELECT b, COUNT(*) FROM t GROUP BY b WITH ROLLUP"),
	"column character set": impl(tLedger, "CREATE TABLE t_col (s VARCHAR(5) CHARACTER SET utf8mb4, v VARBINARY(5), w VARCHAR(5) CHARACTER SET binary)").
		onlyWith("CREATE TABLE t_col (s VARCHAR(5) CHARACTER SET latin1)"),
	"column collation": impl(tDDL, "CREATE TABLE t_col (s VARCHAR(5) COLLATE utf8mb4_general_ci, v VARCHAR(5) BINARY)").
		onlyWith("CREATE TABLE t_col (s VARCHAR(5) COLLATE utf8mb4_0900_as_ci)"),
	"SET NAMES ... COLLATE": impl(tLedger, "SET NAMES utf8mb4 COLLATE utf8mb4_bin").
		onlyWith("SET NAMES utf8mb4 COLLATE utf8mb4_general_ci"),
	"character set and collation variables": impl(tLedger, "SET character_set_client = utf8mb4, character_set_results = NULL, collation_connection = utf8mb4_bin").
		onlyWith("SET character_set_client = latin1"),
	"ANALYZE TABLE ... UPDATE HISTOGRAM": refuse("histograms", "ANALYZE TABLE t UPDATE HISTOGRAM ON b"),
}

// flushLedger: FLUSH kinds.
var flushLedger = map[ast.FlushStmtType]ledgerEntry{
	ast.FlushNone:       placeholder("zero value"),
	ast.FlushPrivileges: impl(tPrivs, "FLUSH PRIVILEGES"),
	ast.FlushTables: ignoredAsMySQL("shoal keeps no table cache to close; WITH READ LOCK is refused",
		"FLUSH TABLES").onlyWith("FLUSH TABLES WITH READ LOCK"),
	ast.FlushLogs:                ignoredAsMySQL("shoal has no binary, relay or file logs to rotate", "FLUSH LOGS"),
	ast.FlushHosts:               ignoredAsMySQL("shoal keeps no host cache", "FLUSH HOSTS"),
	ast.FlushStatus:              refuse("FLUSH STATUS", "FLUSH STATUS"),
	ast.FlushTiDBPlugin:          refuse("FLUSH TIDB PLUGINS", "FLUSH TIDB PLUGINS x"),
	ast.FlushClientErrorsSummary: refuse("FLUSH CLIENT_ERRORS_SUMMARY", "FLUSH CLIENT_ERRORS_SUMMARY"),
	ast.FlushStatsDelta:          refuse("FLUSH STATS_DELTA", ""),
}

// adminLedger: ADMIN kinds.
var adminLedger = map[ast.AdminStmtType]ledgerEntry{
	ast.AdminCheckTable:                  impl("session/admin_check_test.go", "ADMIN CHECK TABLE t"),
	ast.AdminShowDDL:                     refuse("ADMIN SHOW DDL", "ADMIN SHOW DDL"),
	ast.AdminShowDDLJobs:                 refuse("ADMIN SHOW DDL JOBS", "ADMIN SHOW DDL JOBS"),
	ast.AdminCancelDDLJobs:               refuse("ADMIN CANCEL DDL JOBS", "ADMIN CANCEL DDL JOBS 1"),
	ast.AdminPauseDDLJobs:                refuse("ADMIN PAUSE DDL JOBS", "ADMIN PAUSE DDL JOBS 1"),
	ast.AdminResumeDDLJobs:               refuse("ADMIN RESUME DDL JOBS", "ADMIN RESUME DDL JOBS 1"),
	ast.AdminCheckIndex:                  refuse("ADMIN CHECK INDEX", "ADMIN CHECK INDEX t i"),
	ast.AdminRecoverIndex:                refuse("ADMIN RECOVER INDEX", "ADMIN RECOVER INDEX t i"),
	ast.AdminCleanupIndex:                refuse("ADMIN CLEANUP INDEX", "ADMIN CLEANUP INDEX t i"),
	ast.AdminCheckIndexRange:             refuse("ADMIN CHECK INDEX ... range", "ADMIN CHECK INDEX t i (1,2)"),
	ast.AdminShowDDLJobQueries:           refuse("ADMIN SHOW DDL JOB QUERIES", "ADMIN SHOW DDL JOB QUERIES 1"),
	ast.AdminShowDDLJobQueriesWithRange:  refuse("ADMIN SHOW DDL JOB QUERIES LIMIT", "ADMIN SHOW DDL JOB QUERIES LIMIT 1"),
	ast.AdminChecksumTable:               refuse("ADMIN CHECKSUM TABLE", "ADMIN CHECKSUM TABLE t"),
	ast.AdminShowSlow:                    refuse("ADMIN SHOW SLOW", "ADMIN SHOW SLOW RECENT 1"),
	ast.AdminShowNextRowID:               refuse("ADMIN SHOW NEXT_ROW_ID", "ADMIN SHOW t NEXT_ROW_ID"),
	ast.AdminReloadExprPushdownBlacklist: refuse("ADMIN RELOAD EXPR_PUSHDOWN_BLACKLIST", "ADMIN RELOAD EXPR_PUSHDOWN_BLACKLIST"),
	ast.AdminReloadOptRuleBlacklist:      refuse("ADMIN RELOAD OPT_RULE_BLACKLIST", "ADMIN RELOAD OPT_RULE_BLACKLIST"),
	ast.AdminPluginDisable:               refuse("ADMIN PLUGINS DISABLE", "ADMIN PLUGINS DISABLE p"),
	ast.AdminPluginEnable:                refuse("ADMIN PLUGINS ENABLE", "ADMIN PLUGINS ENABLE p"),
	ast.AdminFlushBindings:               refuse("ADMIN FLUSH BINDINGS", "ADMIN FLUSH BINDINGS"),
	ast.AdminCaptureBindings:             refuse("ADMIN CAPTURE BINDINGS", "ADMIN CAPTURE BINDINGS"),
	ast.AdminEvolveBindings:              refuse("ADMIN EVOLVE BINDINGS", "ADMIN EVOLVE BINDINGS"),
	ast.AdminReloadBindings:              refuse("ADMIN RELOAD BINDINGS", "ADMIN RELOAD BINDINGS"),
	ast.AdminReloadStatistics:            refuse("ADMIN RELOAD STATS_EXTENDED", "ADMIN RELOAD STATS_EXTENDED"),
	ast.AdminFlushPlanCache:              refuse("ADMIN FLUSH PLAN_CACHE", "ADMIN FLUSH SESSION PLAN_CACHE"),
	ast.AdminSetBDRRole:                  refuse("ADMIN SET BDR ROLE", "ADMIN SET BDR ROLE PRIMARY"),
	ast.AdminShowBDRRole:                 refuse("ADMIN SHOW BDR ROLE", "ADMIN SHOW BDR ROLE"),
	ast.AdminUnsetBDRRole:                refuse("ADMIN UNSET BDR ROLE", "ADMIN UNSET BDR ROLE"),
	ast.AdminAlterDDLJob:                 refuse("ADMIN ALTER DDL JOBS", "ADMIN ALTER DDL JOBS 1 THREAD = 8"),
	ast.AdminWorkloadRepoCreate:          refuse("ADMIN CREATE WORKLOAD SNAPSHOT", "ADMIN CREATE WORKLOAD SNAPSHOT"),
	ast.AdminReloadClusterBindings:       refuse("ADMIN RELOAD CLUSTER BINDINGS", "ADMIN RELOAD CLUSTER BINDINGS"),
}

// showLedger: SHOW kinds (ShowStmtType's constants are untyped in the
// parser; the test reads them by name).
var showLedger = map[ast.ShowStmtType]ledgerEntry{
	ast.ShowNone:                  placeholder("zero value"),
	ast.ShowDatabases:             impl(tShowVars, "SHOW DATABASES"),
	ast.ShowTables:                impl(tShowVars, "SHOW TABLES"),
	ast.ShowColumns:               impl(tShowVars, "SHOW COLUMNS FROM t"),
	ast.ShowIndex:                 impl(tShowVars, "SHOW INDEX FROM t"),
	ast.ShowCreateTable:           impl("session/show_create_test.go", "SHOW CREATE TABLE t"),
	ast.ShowCreateView:            impl("session/show_create_test.go", ""),
	ast.ShowCreateDatabase:        impl("session/show_create_test.go", "SHOW CREATE DATABASE test"),
	ast.ShowVariables:             impl(tShowVars, "SHOW VARIABLES LIKE 'autocommit'"),
	ast.ShowStatus:                impl("session/transport_test.go", "SHOW STATUS LIKE 'Ssl_cipher'"),
	ast.ShowWarnings:              impl(tShowVars, "SHOW WARNINGS"),
	ast.ShowErrors:                impl(tShowVars, "SHOW ERRORS"),
	ast.ShowEngines:               impl(tShowVars, "SHOW ENGINES"),
	ast.ShowCharset:               impl(tShowVars, "SHOW CHARACTER SET"),
	ast.ShowCollation:             impl(tShowVars, "SHOW COLLATION"),
	ast.ShowProcessList:           impl("session/kill_test.go", "SHOW PROCESSLIST"),
	ast.ShowTableStatus:           impl(tShowVars, "SHOW TABLE STATUS"),
	ast.ShowGrants:                impl(tPrivs, "SHOW GRANTS"),
	ast.ShowTriggers:              impl(tLedger, "SHOW TRIGGERS"),
	ast.ShowProcedureStatus:       impl(tLedger, "SHOW PROCEDURE STATUS"),
	ast.ShowFunctionStatus:        impl(tLedger, "SHOW FUNCTION STATUS"),
	ast.ShowEvents:                impl(tLedger, "SHOW EVENTS"),
	ast.ShowOpenTables:            impl(tLedger, "SHOW OPEN TABLES"),
	ast.ShowPlugins:               impl(tLedger, "SHOW PLUGINS"),
	ast.ShowPrivileges:            impl(tLedger, "SHOW PRIVILEGES"),
	ast.ShowAffinity:              refuse("SHOW AFFINITY", ""),
	ast.ShowAnalyzeStatus:         refuse("SHOW ANALYZE STATUS", "SHOW ANALYZE STATUS"),
	ast.ShowBackups:               refuse("SHOW BACKUPS", "SHOW BACKUPS"),
	ast.ShowBindingCacheStatus:    refuse("SHOW BINDING_CACHE STATUS", "SHOW BINDING_CACHE STATUS"),
	ast.ShowBindings:              refuse("SHOW BINDINGS", "SHOW BINDINGS"),
	ast.ShowBinlogStatus:          refuse("SHOW BINARY LOG STATUS", "SHOW BINARY LOG STATUS"),
	ast.ShowBuiltins:              refuse("SHOW BUILTINS", "SHOW BUILTINS"),
	ast.ShowColumnStatsUsage:      refuse("SHOW COLUMN_STATS_USAGE", "SHOW COLUMN_STATS_USAGE"),
	ast.ShowConfig:                refuse("SHOW CONFIG", "SHOW CONFIG"),
	ast.ShowCreateImport:          refuse("SHOW CREATE IMPORT", ""),
	ast.ShowCreatePlacementPolicy: refuse("placement policies", "SHOW CREATE PLACEMENT POLICY p"),
	ast.ShowCreateProcedure:       refuse("stored procedures", "SHOW CREATE PROCEDURE p"),
	ast.ShowCreateResourceGroup:   refuse("resource groups", "SHOW CREATE RESOURCE GROUP rg"),
	ast.ShowCreateSequence:        refuse("sequences", "SHOW CREATE SEQUENCE s"),
	ast.ShowCreateUser:            refuse("SHOW CREATE USER", "SHOW CREATE USER root"),
	ast.ShowDistributionJobs:      refuse("SHOW DISTRIBUTION JOBS", "SHOW DISTRIBUTION JOBS"),
	ast.ShowDistributions:         refuse("SHOW TABLE ... DISTRIBUTIONS", "SHOW TABLE t DISTRIBUTIONS"),
	ast.ShowHistogramsInFlight:    refuse("SHOW HISTOGRAMS_IN_FLIGHT", "SHOW HISTOGRAMS_IN_FLIGHT"),
	ast.ShowImportGroups:          refuse("SHOW IMPORT GROUPS", "SHOW IMPORT GROUPS"),
	ast.ShowImportJobs:            refuse("SHOW IMPORT JOBS", "SHOW IMPORT JOBS"),
	ast.ShowImports:               refuse("SHOW IMPORTS", ""),
	ast.ShowMaskingPolicies:       refuse("masking policies", ""),
	ast.ShowMasterStatus:          refuse("SHOW MASTER STATUS", "SHOW MASTER STATUS"),
	ast.ShowPlacement:             refuse("placement policies", "SHOW PLACEMENT"),
	ast.ShowPlacementForDatabase:  refuse("placement policies", "SHOW PLACEMENT FOR DATABASE test"),
	ast.ShowPlacementForPartition: refuse("placement policies", "SHOW PLACEMENT FOR TABLE t PARTITION p0"),
	ast.ShowPlacementForTable:     refuse("placement policies", "SHOW PLACEMENT FOR TABLE t"),
	ast.ShowPlacementLabels:       refuse("placement policies", "SHOW PLACEMENT LABELS"),
	ast.ShowProfile:               refuse("SHOW PROFILE", "SHOW PROFILE"),
	ast.ShowProfiles:              refuse("SHOW PROFILES", "SHOW PROFILES"),
	ast.ShowRegions:               refuse("SHOW TABLE ... REGIONS", "SHOW TABLE t REGIONS"),
	ast.ShowReplicaStatus:         refuse("SHOW REPLICA STATUS", "SHOW REPLICA STATUS"),
	ast.ShowRestores:              refuse("SHOW RESTORES", "SHOW RESTORES"),
	ast.ShowSessionStates:         refuse("SHOW SESSION_STATES", "SHOW SESSION_STATES"),
	ast.ShowStatsBuckets:          refuse("SHOW STATS_BUCKETS", "SHOW STATS_BUCKETS"),
	ast.ShowStatsExtended:         refuse("SHOW STATS_EXTENDED", "SHOW STATS_EXTENDED"),
	ast.ShowStatsHealthy:          refuse("SHOW STATS_HEALTHY", "SHOW STATS_HEALTHY"),
	ast.ShowStatsHistograms:       refuse("SHOW STATS_HISTOGRAMS", "SHOW STATS_HISTOGRAMS"),
	ast.ShowStatsLocked:           refuse("SHOW STATS_LOCKED", "SHOW STATS_LOCKED"),
	ast.ShowStatsMeta:             refuse("SHOW STATS_META", "SHOW STATS_META"),
	ast.ShowStatsTopN:             refuse("SHOW STATS_TOPN", "SHOW STATS_TOPN"),
	ast.ShowTableNextRowId:        refuse("SHOW TABLE ... NEXT_ROW_ID", "SHOW TABLE t NEXT_ROW_ID"),
}

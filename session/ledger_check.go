package session

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/charset"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/sql/ddl"
	"github.com/shoaldb/shoal/types"
	"github.com/shoaldb/shoal/types/collate"
)

// checkLedger refuses a statement that uses a kind the ledger (ledger.go)
// marks refused or does not know, before anything of it runs, and adds
// the warnings MySQL 8 gives for the kinds it accepts without effect.
func (s *Session) checkLedger(node ast.StmtNode) error {
	if ddlStmt, ok := node.(ast.DDLNode); ok {
		if err := ddl.CheckDDLNames(ddlStmt); err != nil {
			return err
		}
	}
	name := reflect.TypeOf(node).Elem().Name()
	if err := lookup(stmtLedger, name, "statement"); err != nil {
		return err
	}
	c := &ledgerChecker{s: s}
	node.Accept(c)
	if c.err != nil {
		return c.err
	}
	s.addWarnings(c.warnings...)
	return nil
}

func notSupported(what string) error {
	return errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support '%s'", what)
}

// lookup fails for a refused kind or one missing from the ledger (a kind a
// newer parser added, not yet judged).
func lookup[K comparable](ledger map[K]ledgerEntry, k K, kind string) error {
	e, ok := ledger[k]
	if !ok {
		return notSupported(fmt.Sprintf("%s %v", kind, k))
	}
	if e.support == refused {
		return notSupported(e.note)
	}
	return nil
}

type ledgerChecker struct {
	s        *Session
	err      error
	warnings []error
}

func (c *ledgerChecker) fail(err error) {
	if c.err == nil && err != nil {
		c.err = err
	}
}

func (c *ledgerChecker) Leave(n ast.Node) (ast.Node, bool) { return n, c.err == nil }

func (c *ledgerChecker) Enter(n ast.Node) (ast.Node, bool) {
	if c.err != nil {
		return n, true
	}
	switch x := n.(type) {
	case *ast.CreateTableStmt:
		c.fail(lookup(temporaryLedger, x.TemporaryKeyword, "TEMPORARY"))
		if x.Partition != nil {
			c.fail(lookup(clauseLedger, "CREATE TABLE PARTITION BY", ""))
		}
		for _, o := range x.Options {
			c.fail(tableOption(o))
		}
	case *ast.ColumnDef:
		for _, o := range x.Options {
			c.fail(lookup(columnOptionLedger, o.Tp, "column option"))
			if o.Tp == ast.ColumnOptionCollate {
				c.fail(columnCollation(o.StrValue))
			}
		}
		if x.Tp != nil {
			if x.Tp.GetFlag()&mysql.ZerofillFlag != 0 {
				c.fail(lookup(clauseLedger, "ZEROFILL", ""))
			}
			c.fail(columnCharset(x.Tp.GetCharset()))
			c.fail(columnCollation(x.Tp.GetCollate()))
		}
	case *ast.GroupByClause:
		if x.Rollup {
			c.fail(lookup(clauseLedger, "GROUP BY ... WITH ROLLUP", ""))
		}
	case *ast.Constraint:
		c.fail(lookup(constraintLedger, x.Tp, "constraint"))
		c.indexOption(x.Option)
		c.keyParts(x.Keys)
	case *ast.CreateIndexStmt:
		c.fail(lookup(indexKeyTypeLedger, x.KeyType, "index kind"))
		c.indexOption(x.IndexOption)
		c.keyParts(x.IndexPartSpecifications)
		c.lockAlgorithm(x.LockAlg)
	case *ast.DropIndexStmt:
		c.lockAlgorithm(x.LockAlg)
	case *ast.AlterTableStmt:
		for _, spec := range x.Specs {
			c.fail(lookup(alterTableLedger, spec.Tp, "ALTER TABLE operation"))
			if spec.Tp == ast.AlterTableAddColumns && spec.Position != nil {
				c.fail(lookup(columnPositionLedger, spec.Position.Tp, "column position"))
			}
		}
	case *ast.CreateDatabaseStmt:
		for _, o := range x.Options {
			c.fail(databaseOption(o))
		}
	case *ast.DropTableStmt:
		c.fail(lookup(temporaryLedger, x.TemporaryKeyword, "TEMPORARY"))
	case *ast.CreateViewStmt:
		c.fail(lookup(viewAlgorithmLedger, x.Algorithm, "view algorithm"))
		c.fail(lookup(viewSecurityLedger, x.Security, "SQL SECURITY"))
		c.fail(lookup(viewCheckLedger, x.CheckOption, "check option"))
	case *ast.SelectStmt:
		c.selectStmt(x)
	case *ast.TableName:
		c.tableName(x)
	case *ast.InsertStmt:
		switch x.Priority {
		case mysql.LowPriority:
			c.fail(lookup(clauseLedger, "INSERT LOW_PRIORITY", ""))
		case mysql.HighPriority:
			c.fail(lookup(clauseLedger, "INSERT HIGH_PRIORITY", ""))
		case mysql.DelayedPriority:
			c.fail(lookup(clauseLedger, "INSERT DELAYED", ""))
			c.warnings = append(c.warnings, errno.New(errWarnLegacySyntaxConverted, "INSERT DELAYED is no longer supported. The statement was converted to INSERT."))
		}
		if len(x.PartitionNames) > 0 {
			c.fail(lookup(clauseLedger, "INSERT PARTITION", ""))
		}
		c.hints(x.TableHints)
	case *ast.UpdateStmt:
		c.hints(x.TableHints)
	case *ast.DeleteStmt:
		if x.IgnoreErr {
			c.fail(lookup(clauseLedger, "DELETE IGNORE", ""))
		}
		c.hints(x.TableHints)
	case *ast.ExplainStmt:
		if x.Analyze {
			c.fail(lookup(clauseLedger, "EXPLAIN ANALYZE", ""))
		}
		if x.Explore {
			c.fail(lookup(clauseLedger, "EXPLAIN EXPLORE", ""))
		}
		if x.Format != "" && !strings.EqualFold(x.Format, "row") { // DESC t has none
			c.fail(notSupported("EXPLAIN FORMAT=" + x.Format))
		}
	case *ast.BeginStmt:
		if x.AsOf != nil {
			c.fail(lookup(clauseLedger, "BEGIN AS OF", ""))
		}
		if x.CausalConsistencyOnly {
			c.fail(lookup(clauseLedger, "BEGIN CAUSAL", ""))
		}
	case *ast.CommitStmt:
		if x.CompletionType != ast.CompletionTypeDefault {
			c.fail(lookup(clauseLedger, "COMMIT/ROLLBACK AND CHAIN or RELEASE", ""))
		}
	case *ast.RollbackStmt:
		if x.CompletionType != ast.CompletionTypeDefault {
			c.fail(lookup(clauseLedger, "COMMIT/ROLLBACK AND CHAIN or RELEASE", ""))
		}
	case *ast.FlushStmt:
		c.fail(lookup(flushLedger, x.Tp, "FLUSH"))
		if x.ReadLock {
			c.fail(notSupported("FLUSH TABLES WITH READ LOCK"))
		}
		if x.Tp == ast.FlushLogs && x.LogType != ast.LogTypeDefault {
			c.fail(notSupported("FLUSH " + logTypeName(x.LogType) + " LOGS"))
		}
	case *ast.AdminStmt:
		c.fail(lookup(adminLedger, x.Tp, "ADMIN"))
	case *ast.ShowStmt:
		c.fail(lookup(showLedger, x.Tp, "SHOW"))
	case *ast.AnalyzeTableStmt:
		if x.HistogramOperation != ast.HistogramOperationNop {
			c.fail(lookup(clauseLedger, "ANALYZE TABLE ... UPDATE HISTOGRAM", ""))
		}
		if len(x.PartitionNames) > 0 || len(x.IndexNames) > 0 || x.IndexFlag || x.Incremental || len(x.ColumnNames) > 0 || len(x.AnalyzeOpts) > 0 {
			c.fail(notSupported("ANALYZE TABLE options"))
		}
	case *ast.SetStmt:
		for _, v := range x.Variables {
			if v.Name == ast.SetNames || v.Name == ast.SetCharset {
				c.fail(setNames(v))
			}
		}
	}
	return n, c.err != nil
}

func logTypeName(t ast.LogType) string {
	switch t {
	case ast.LogTypeBinary:
		return "BINARY"
	case ast.LogTypeEngine:
		return "ENGINE"
	case ast.LogTypeError:
		return "ERROR"
	case ast.LogTypeGeneral:
		return "GENERAL"
	case ast.LogTypeSlow:
		return "SLOW"
	}
	return "these"
}

// connectionCharsets are the character sets a client may declare with
// SET NAMES: shoal reads and writes UTF-8 throughout, of which utf8mb3
// and ASCII are subsets.
var connectionCharsets = map[string]bool{"utf8mb4": true, "utf8": true, "utf8mb3": true, "ascii": true}

func setNames(v *ast.VariableAssignment) error {
	val, ok := v.Value.(*driver.ValueExpr)
	if !ok {
		return nil // DEFAULT: the server's character set
	}
	cs := strings.ToLower(val.GetString())
	if !connectionCharsets[cs] {
		return notSupported("character set '" + cs + "' for the connection")
	}
	// shoal compares string literals by utf8mb4_bin, whatever the
	// connection's collation says.
	coll := ""
	if v.ExtendValue != nil {
		coll = strings.ToLower(v.ExtendValue.GetString())
	}
	if coll != "" && coll != "utf8mb4_bin" {
		return notSupported("collation '" + coll + "' for the connection")
	}
	return nil
}

// columnCharset and columnCollation admit the character sets and
// collations shoal stores and compares by: a column declared latin1 or
// utf8mb4_unicode_ci would hold and compare utf8mb4 text by other rules.
func columnCharset(cs string) error {
	switch strings.ToLower(cs) {
	case "", "utf8mb4", "binary":
		return nil
	}
	if err := lookup(clauseLedger, "column character set", ""); err != nil {
		return err
	}
	return notSupported("character set " + cs + " for a column")
}

func columnCollation(coll string) error {
	if coll == "" || collate.Lookup(coll) != nil {
		return nil
	}
	if err := unknownCollation(coll); err != nil {
		return err
	}
	if err := lookup(clauseLedger, "column collation", ""); err != nil {
		return err
	}
	return notSupported("collation " + coll + " for a column")
}

// unknownCollation is MySQL's 1273 for a name no MySQL collation has (the
// parser's list is MySQL's); nil for an existing one.
func unknownCollation(coll string) error {
	if _, err := charset.GetCollationByName(coll); err != nil {
		return errno.New(mysql.ErrUnknownCollation, "Unknown collation: '%s'", coll)
	}
	return nil
}

// checkCharsetVar refuses character set and collation variables set to
// anything but what shoal uses: UTF-8 text, utf8mb4 defaults for new
// databases, literals compared by utf8mb4_bin.
func checkCharsetVar(name, val string) error {
	v := strings.ToLower(val)
	ok := true
	switch name {
	case "character_set_client", "character_set_connection":
		ok = connectionCharsets[v]
	case "character_set_results":
		ok = connectionCharsets[v] || v == "" || v == "binary"
	case "character_set_server", "character_set_database":
		ok = v == "utf8mb4"
	case "collation_connection", "collation_server", "collation_database":
		ok = v == "utf8mb4_bin"
	}
	if ok {
		return nil
	}
	if err := lookup(clauseLedger, "character set and collation variables", ""); err != nil {
		return err
	}
	return notSupported(name + " = " + val)
}

func tableOption(o *ast.TableOption) error {
	if err := lookup(tableOptionLedger, o.Tp, "table option"); err != nil {
		return err
	}
	switch o.Tp {
	case ast.TableOptionCharset:
		if !strings.EqualFold(o.StrValue, "utf8mb4") {
			return notSupported("table character set " + o.StrValue)
		}
	case ast.TableOptionCollate:
		if !tableCollation(o.StrValue) {
			if err := unknownCollation(o.StrValue); err != nil {
				return err
			}
			return notSupported("table collation " + o.StrValue)
		}
	case ast.TableOptionRowFormat:
		if o.UintValue != ast.RowFormatDefault && o.UintValue != ast.RowFormatDynamic {
			return notSupported("ROW_FORMAT other than DYNAMIC")
		}
	case ast.TableOptionEncryption:
		if !strings.EqualFold(o.StrValue, "N") {
			return notSupported("ENCRYPTION='" + o.StrValue + "'")
		}
	}
	return nil
}

// tableCollation admits the table default collations CREATE TABLE applies
// to its utf8mb4 character columns: the utf8mb4 ones shoal compares by.
func tableCollation(name string) bool {
	c := collate.Lookup(name)
	return c != nil && strings.HasPrefix(c.Name(), "utf8mb4_")
}

func databaseOption(o *ast.DatabaseOption) error {
	if err := lookup(databaseOptionLedger, o.Tp, "database option"); err != nil {
		return err
	}
	switch o.Tp {
	case ast.DatabaseOptionCharset:
		if !strings.EqualFold(o.Value, "utf8mb4") {
			return notSupported("database character set " + o.Value)
		}
	case ast.DatabaseOptionCollate:
		// A database's tables take utf8mb4_bin whatever it says.
		if !strings.EqualFold(o.Value, "utf8mb4_bin") {
			return notSupported("database collation " + o.Value)
		}
	case ast.DatabaseOptionEncryption:
		if !strings.EqualFold(o.Value, "N") {
			return notSupported("ENCRYPTION='" + o.Value + "'")
		}
	}
	return nil
}

func (c *ledgerChecker) indexOption(o *ast.IndexOption) {
	if o == nil {
		return
	}
	c.fail(lookup(indexTypeLedger, o.Tp, "index type"))
	c.fail(lookup(indexVisibilityLedger, o.Visibility, "index visibility"))
	set := map[string]bool{
		"KeyBlockSize":               o.KeyBlockSize > 0,
		"Comment":                    o.Comment != "",
		"ParserName":                 o.ParserName.O != "",
		"Global":                     o.Global,
		"SplitOpt":                   o.SplitOpt != nil,
		"SecondaryEngineAttr":        o.SecondaryEngineAttr != "",
		"AddColumnarReplicaOnDemand": o.AddColumnarReplicaOnDemand != 0,
		"Condition":                  o.Condition != nil,
	}
	for field, used := range set {
		if used {
			c.fail(lookup(indexOptionFieldLedger, field, "index option"))
		}
	}
	if o.Tp == ast.IndexTypeHash {
		c.warnings = append(c.warnings, noteOf(errno.New(errUnsupportedIndexAlgorithm,
			"This storage engine does not support the HASH index algorithm, storage engine default was used instead.")))
	}
}

func (c *ledgerChecker) keyParts(parts []*ast.IndexPartSpecification) {
	for _, p := range parts {
		if p.Desc {
			c.fail(lookup(indexPartLedger, "Desc", "key part"))
		}
		if p.Expr != nil {
			c.fail(lookup(indexPartLedger, "Expr", "key part"))
		}
	}
}

func (c *ledgerChecker) lockAlgorithm(la *ast.IndexLockAndAlgorithm) {
	if la == nil {
		return
	}
	c.fail(lookup(ddlLockLedger, la.LockTp, "LOCK"))
	c.fail(lookup(ddlAlgorithmLedger, la.AlgorithmTp, "ALGORITHM"))
}

func (c *ledgerChecker) selectStmt(x *ast.SelectStmt) {
	if x.LockInfo != nil {
		c.fail(lookup(selectLockLedger, x.LockInfo.LockType, "lock clause"))
		if len(x.LockInfo.Tables) > 0 {
			c.fail(lookup(clauseLedger, "FOR UPDATE OF", ""))
		}
	}
	if x.SelectIntoOpt != nil {
		c.fail(lookup(selectIntoLedger, x.SelectIntoOpt.Tp, "SELECT INTO"))
	}
	if o := x.SelectStmtOpts; o != nil {
		if o.CalcFoundRows {
			c.fail(lookup(selectOptsLedger, "CalcFoundRows", "SELECT option"))
		}
		if !o.SQLCache {
			c.warnings = append(c.warnings, errno.New(mysql.ErrWarnDeprecatedSyntaxNoReplacement,
				"'SQL_NO_CACHE' is deprecated and will be removed in a future release."))
		}
		c.hints(o.TableHints)
	}
	c.hints(x.TableHints)
}

func (c *ledgerChecker) hints(hints []*ast.TableOptimizerHint) {
	for _, h := range hints {
		if h.HintName.L == "set_var" {
			c.fail(lookup(clauseLedger, "optimizer hint SET_VAR", ""))
		}
	}
}

// tableName refuses the partition, sampling and stale-read clauses of a
// table reference, and index hints naming an index the table lacks (1176,
// as MySQL: the hints themselves only steer the plan).
func (c *ledgerChecker) tableName(x *ast.TableName) {
	if len(x.PartitionNames) > 0 {
		c.fail(lookup(tableNameLedger, "PartitionNames", "table reference"))
	}
	if x.TableSample != nil {
		c.fail(lookup(tableNameLedger, "TableSample", "table reference"))
	}
	if x.AsOf != nil {
		c.fail(lookup(tableNameLedger, "AsOf", "table reference"))
	}
	if len(x.IndexHints) == 0 {
		return
	}
	db := x.Schema.O
	if db == "" {
		db = c.s.db
	}
	t := c.s.b.catalog.InfoSchema().Table(db, x.Name.O)
	if t == nil {
		return // the planner reports the table
	}
	for _, h := range x.IndexHints {
		for _, name := range h.IndexNames {
			if idx := t.FindIndex(name.O); idx == nil || !idx.Public() {
				c.fail(errno.NewStd(mysql.ErrKeyDoesNotExist, name.O, t.Name))
			}
		}
	}
}

// MySQL 8 codes the parser's table lacks.
const (
	errWarnLegacySyntaxConverted = 3005 // ER_WARN_LEGACY_SYNTAX_CONVERTED
	errUnsupportedIndexAlgorithm = 3502 // ER_UNSUPPORTED_INDEX_ALGORITHM
)

// checkTxReadOnly judges SET [SESSION] TRANSACTION READ ONLY | READ WRITE,
// which the parser turns into tx_read_only (a variable MySQL 8 no longer
// has) alike with or without SESSION, though without it MySQL changes the
// next transaction only: READ ONLY is refused, READ WRITE accepted only
// where both readings agree (the session is not read-only).
func (s *Session) checkTxReadOnly(val types.Datum) error {
	if v := strings.ToUpper(val.String()); v == "1" || v == "ON" || s.readOnlySession() {
		return lookup(clauseLedger, "SET TRANSACTION READ ONLY", "")
	}
	return nil
}

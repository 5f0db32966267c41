package session

import (
	"context"
	"sort"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/charset"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/sql/catalog"
	"github.com/shoaldb/shoal/sql/executor"
	"github.com/shoaldb/shoal/sql/expression"
	"github.com/shoaldb/shoal/types"
	"github.com/shoaldb/shoal/types/collate"
)

func s2d(s string) types.Datum { return types.NewString(s) }

// likeFilter returns a predicate for SHOW ... LIKE 'pattern'.
func (s *Session) likeFilter(ctx context.Context, p *ast.PatternLikeOrIlikeExpr) (func(string) bool, error) {
	if p == nil {
		return func(string) bool { return true }, nil
	}
	return s.patternFilter(ctx, p.Pattern, p.Not)
}

// patternFilter matches names against a LIKE pattern case-insensitively
// (negated with not), as SHOW ... LIKE and DESCRIBE t col do.
func (s *Session) patternFilter(ctx context.Context, pattern ast.ExprNode, not bool) (func(string) bool, error) {
	pat, st, err := buildScalar(s, pattern)
	if err != nil {
		return nil, err
	}
	ec := s.newExecContext(ctx, s.txn, st)
	pv, err := pat.Eval(ec.Eval, nil)
	if err != nil {
		return nil, err
	}
	pc := expression.NewConstant(types.NewString(strings.ToLower(pv.String())))
	return func(v string) bool {
		f, _ := expression.NewFunction("like", expression.NewConstant(types.NewString(strings.ToLower(v))), pc)
		d, _ := f.Eval(ec.Eval, nil)
		ok, _ := d.ToBool()
		return ok != not
	}, nil
}

func (s *Session) runShow(ctx context.Context, x *ast.ShowStmt) (ResultSet, error) {
	is := s.schema()
	like, err := s.likeFilter(ctx, x.Pattern)
	if err != nil {
		return nil, err
	}
	if x.Where != nil {
		return nil, errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support SHOW ... WHERE")
	}
	dbOf := func() (string, error) {
		db := x.DBName
		if db == "" && x.Table != nil {
			db = x.Table.Schema.O
		}
		if db == "" {
			db = s.db
		}
		if db == "" {
			return "", errno.NewStd(mysql.ErrNoDB)
		}
		return db, nil
	}
	tableOf := func() (string, *catalog.TableInfo, error) {
		db, err := dbOf()
		if err != nil {
			return "", nil, err
		}
		if !s.isTemporary(db, x.Table.Name.O) && !s.privs().AnyOnTable(db, x.Table.Name.O) {
			return "", nil, s.tableDenied(mysql.SelectPriv, x.Table.Name.O)
		}
		t := is.Table(db, x.Table.Name.O)
		if t == nil {
			return "", nil, errno.NewStd(mysql.ErrNoSuchTable, db, x.Table.Name.O)
		}
		return db, t, nil
	}
	var rows []types.Row
	switch x.Tp {
	case ast.ShowDatabases:
		names := []string{"information_schema"}
		for _, db := range is.DBs() {
			names = append(names, db.Name)
		}
		sort.Strings(names)
		for _, n := range names {
			if like(n) && s.maySeeDB(n) {
				rows = append(rows, types.Row{s2d(n)})
			}
		}
		return &staticResultSet{fields: stringFields("Database"), rows: rows}, nil
	case ast.ShowTables:
		db, err := dbOf()
		if err != nil {
			return nil, err
		}
		if err := s.checkUseDB(db); err != nil {
			return nil, err
		}
		if is.DB(db) == nil {
			return nil, errno.NewStd(mysql.ErrBadDB, db)
		}
		for _, t := range is.Tables(db) {
			if like(t.Name) && s.privs().AnyOnTable(db, t.Name) {
				r := types.Row{s2d(t.Name)}
				if x.Full {
					r = append(r, s2d("BASE TABLE"))
				}
				rows = append(rows, r)
			}
		}
		f := stringFields("Tables_in_" + db)
		if x.Full {
			f = stringFields("Tables_in_"+db, "Table_type")
		}
		return &staticResultSet{fields: f, rows: rows}, nil
	case ast.ShowColumns:
		_, t, err := tableOf()
		if err != nil {
			return nil, err
		}
		if x.Column != nil {
			// DESCRIBE t col: col is a LIKE pattern, as in MySQL.
			if like, err = s.patternFilter(ctx, ast.NewValueExpr(x.Column.Name.O, "", ""), false); err != nil {
				return nil, err
			}
		}
		for _, c := range t.PublicColumns() {
			if !like(c.Name) {
				continue
			}
			null := "YES"
			if c.Type.NotNull() {
				null = "NO"
			}
			def := types.Datum{}
			if c.Default != nil {
				def = s2d(*c.Default)
				if *c.Default == "CURRENT_TIMESTAMP" {
					def = s2d(executor.CurrentTimestampText(&c.Type))
				}
			}
			key := ""
			// Every column of the primary key is PRI (MySQL); other keys
			// mark their first column.
			if pk := t.PrimaryIndex(); pk != nil && pk.Public() {
				for _, ic := range pk.Columns {
					if ic.Offset == c.Offset {
						key = "PRI"
					}
				}
			}
			for _, idx := range t.PublicIndices() {
				if idx.Columns[0].Offset == c.Offset && key != "PRI" {
					switch {
					case idx.Primary:
						key = "PRI"
					case idx.Unique && key == "":
						key = "UNI"
					case key == "":
						key = "MUL"
					}
				}
			}
			extra := executor.ColumnExtra(c)
			r := types.Row{s2d(c.Name), s2d(showColumnType(&c.Type)), s2d(null), s2d(key), def, s2d(extra)}
			if x.Full {
				coll := types.Datum{}
				if c.Type.IsString() && c.Type.Charset != "binary" && c.Type.Tp != mysql.TypeNewDecimal {
					coll = s2d(c.Type.Collate)
				}
				r = types.Row{r[0], r[1], coll, r[2], r[3], r[4], r[5], s2d("select,insert,update,references"), s2d(c.Comment)}
			}
			rows = append(rows, r)
		}
		f := stringFields("Field", "Type", "Null", "Key", "Default", "Extra")
		if x.Full {
			f = stringFields("Field", "Type", "Collation", "Null", "Key", "Default", "Extra", "Privileges", "Comment")
		}
		return &staticResultSet{fields: f, rows: rows}, nil
	case ast.ShowIndex:
		_, t, err := tableOf()
		if err != nil {
			return nil, err
		}
		for _, idx := range t.PublicIndices() {
			nonUnique := int64(1)
			if idx.Unique || idx.Primary {
				nonUnique = 0
			}
			name := idx.Name
			if idx.Primary {
				name = "PRIMARY"
			}
			for j, ic := range idx.Columns {
				null := ""
				if !t.Columns[ic.Offset].Type.NotNull() {
					null = "YES"
				}
				sub := types.Datum{}
				if ic.Length > 0 {
					sub = types.NewInt(int64(ic.Length))
				}
				rows = append(rows, types.Row{s2d(t.Name), types.NewInt(nonUnique), s2d(name), types.NewInt(int64(j + 1)), s2d(ic.Name),
					s2d("A"), types.NewInt(0), sub, {}, s2d(null), s2d("BTREE"), s2d(""), s2d(""), s2d("YES"), {}})
			}
		}
		return &staticResultSet{fields: stringFields("Table", "Non_unique", "Key_name", "Seq_in_index", "Column_name", "Collation",
			"Cardinality", "Sub_part", "Packed", "Null", "Index_type", "Comment", "Index_comment", "Visible", "Expression"), rows: rows}, nil
	case ast.ShowCreateTable, ast.ShowCreateView:
		db, t, err := tableOf()
		if err != nil {
			return nil, err
		}
		return s.showCreateTableOrView(x.Tp == ast.ShowCreateView, db, t)
	case ast.ShowCreateDatabase:
		if err := s.checkUseDB(x.DBName); err != nil {
			return nil, err
		}
		return s.showCreateDatabase(is, x)
	case ast.ShowVariables:
		names := make([]string, 0, len(sysVars))
		for n := range sysVars {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			if !like(n) {
				continue
			}
			v, _ := s.getSysVar(n, x.GlobalScope)
			rows = append(rows, types.Row{s2d(n), s2d(v)})
		}
		return &staticResultSet{fields: stringFields("Variable_name", "Value"), rows: rows}, nil
	case ast.ShowStatus:
		for _, kv := range s.statusVars(x.GlobalScope) {
			if like(kv[0]) {
				rows = append(rows, types.Row{s2d(kv[0]), s2d(kv[1])})
			}
		}
		return &staticResultSet{fields: stringFields("Variable_name", "Value"), rows: rows}, nil
	case ast.ShowWarnings, ast.ShowErrors:
		errorsOnly := x.Tp == ast.ShowErrors
		if x.CountWarningsOrErrors {
			if errorsOnly {
				return &staticResultSet{fields: stringFields("@@session.error_count"), rows: []types.Row{{types.NewInt(int64(s.diag.errors))}}}, nil
			}
			return &staticResultSet{fields: stringFields("@@session.warning_count"), rows: []types.Row{{types.NewInt(int64(s.diag.total))}}}, nil
		}
		for _, c := range s.diag.conds {
			if errorsOnly && !c.error {
				continue
			}
			se := errno.ToSQLError(c.err)
			level := "Warning"
			if c.error {
				level = "Error"
			} else if _, isNote := c.err.(note); isNote || errno.IsNote(c.err) {
				level = "Note"
			}
			rows = append(rows, types.Row{s2d(level), types.NewInt(int64(se.Code)), s2d(se.Message)})
		}
		return &staticResultSet{fields: stringFields("Level", "Code", "Message"), rows: rows}, nil
	case ast.ShowEngines:
		rows = append(rows, types.Row{s2d("InnoDB"), s2d("DEFAULT"), s2d("Supports transactions, row-level locking"), s2d("YES"), s2d("YES"), s2d("YES")})
		return &staticResultSet{fields: stringFields("Engine", "Support", "Comment", "Transactions", "XA", "Savepoints"), rows: rows}, nil
	case ast.ShowCharset:
		rows = append(rows, types.Row{s2d("utf8mb4"), s2d("UTF-8 Unicode"), s2d("utf8mb4_bin"), types.NewInt(4)},
			types.Row{s2d("binary"), s2d("binary"), s2d("binary"), types.NewInt(1)})
		return &staticResultSet{fields: stringFields("Charset", "Description", "Default collation", "Maxlen"), rows: rows}, nil
	case ast.ShowCollation:
		for _, name := range collate.Names() {
			c, err := charset.GetCollationByName(name)
			if err != nil || !like(name) {
				continue
			}
			def := "" // shoal's defaults: utf8mb4_bin and binary
			if name == "utf8mb4_bin" || name == "binary" {
				def = "Yes"
			}
			rows = append(rows, types.Row{s2d(name), s2d(c.CharsetName), s2d(strconv.Itoa(c.ID)), s2d(def), s2d("Yes"), types.NewInt(1)})
		}
		return &staticResultSet{fields: stringFields("Collation", "Charset", "Id", "Default", "Compiled", "Sortlen"), rows: rows}, nil
	case ast.ShowProcessList:
		return s.showProcessList(x)
	case ast.ShowTableStatus:
		db, err := dbOf()
		if err != nil {
			return nil, err
		}
		for _, t := range is.Tables(db) {
			if like(t.Name) {
				rows = append(rows, types.Row{s2d(t.Name), s2d("InnoDB"), types.NewInt(10), s2d("Dynamic"), types.NewInt(0), types.NewInt(0),
					types.NewInt(0), types.NewInt(0), types.NewInt(0), types.NewInt(0), {}, {}, {}, {}, s2d("utf8mb4_bin"), {}, s2d(""), s2d(t.Comment)})
			}
		}
		return &staticResultSet{fields: stringFields("Name", "Engine", "Version", "Row_format", "Rows", "Avg_row_length", "Data_length",
			"Max_data_length", "Index_length", "Data_free", "Auto_increment", "Create_time", "Update_time", "Check_time", "Collation",
			"Checksum", "Create_options", "Comment"), rows: rows}, nil
	case ast.ShowGrants:
		return s.showGrants(x)
	case ast.ShowPlugins, ast.ShowTriggers, ast.ShowProcedureStatus, ast.ShowFunctionStatus, ast.ShowEvents, ast.ShowOpenTables, ast.ShowPrivileges:
		return &staticResultSet{fields: stringFields("Name", "Status"), rows: nil}, nil
	}
	return nil, errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support this SHOW statement")
}

// showColumnType prints a type as MySQL 8 does in SHOW CREATE TABLE
// (integer display widths omitted).
func showColumnType(ft *types.FieldType) string {
	s := executor.ColumnTypeString(ft)
	if ft.IsInteger() && ft.Tp != mysql.TypeBit && ft.Tp != mysql.TypeYear {
		s = executor.TypeName(ft)
		if ft.IsUnsigned() {
			s += " unsigned"
		}
	}
	return s
}

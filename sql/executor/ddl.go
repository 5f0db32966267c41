package executor

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/kv/delrange"
	"github.com/shoaldb/shoal/sql/catalog"
	"github.com/shoaldb/shoal/sql/expression"
	"github.com/shoaldb/shoal/tablecodec"
	"github.com/shoaldb/shoal/types"
)

// DDL executes schema changes through the catalog.
type DDL struct {
	Catalog   *catalog.Catalog
	CurrentDB string
	// CheckView validates a view's SELECT and returns its column names.
	CheckView ViewCheck
	// Clustering decides whether a new table's primary key without an
	// explicit CLUSTERED/NONCLUSTERED is clustered (the session's
	// tidb_enable_clustered_index; the zero value clusters every one).
	Clustering Clustering
}

// Clustering is the tidb_enable_clustered_index policy for primary keys
// declared without CLUSTERED or NONCLUSTERED.
type Clustering uint8

const (
	// ClusterAll: every primary key is the row key (ON, 1).
	ClusterAll Clustering = iota
	// ClusterIntOnly: only a single integer column is (INT_ONLY); other
	// primary keys are unique indexes over a hidden row id.
	ClusterIntOnly
	// ClusterNone: no primary key is (OFF, 0).
	ClusterNone
)

func (d *DDL) dbName(tn *ast.TableName) (string, error) {
	if tn.Schema.O != "" {
		return tn.Schema.O, nil
	}
	if d.CurrentDB == "" {
		return "", errno.NewStd(mysql.ErrNoDB)
	}
	return d.CurrentDB, nil
}

// Exec runs one DDL statement.
func (d *DDL) Exec(ctx context.Context, stmt ast.DDLNode) error {
	if err := checkDDLNames(stmt); err != nil {
		return err
	}
	switch x := stmt.(type) {
	case *ast.CreateDatabaseStmt:
		return d.createDatabase(ctx, x)
	case *ast.DropDatabaseStmt:
		return d.dropDatabase(ctx, x)
	case *ast.CreateTableStmt:
		return d.createTable(ctx, x)
	case *ast.DropTableStmt:
		return d.dropTables(ctx, x)
	case *ast.CreateIndexStmt:
		return d.createIndex(ctx, x.Table, x.IndexName, x.KeyType == ast.IndexKeyTypeUnique, x.IndexPartSpecifications, x.IfNotExists)
	case *ast.DropIndexStmt:
		return d.dropIndex(ctx, x.Table, x.IndexName, x.IfExists)
	case *ast.TruncateTableStmt:
		return d.truncate(ctx, x.Table)
	case *ast.AlterTableStmt:
		return d.alterTable(ctx, x)
	case *ast.CreateViewStmt:
		return d.createView(ctx, x)
	}
	return errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support this DDL statement")
}

func (d *DDL) createDatabase(ctx context.Context, x *ast.CreateDatabaseStmt) error {
	return d.Catalog.DDL(ctx, func(m *catalog.Mutator) error {
		if m.Schema().DB(x.Name.O) != nil {
			if x.IfNotExists {
				return nil
			}
			return errno.NewStd(mysql.ErrDBCreateExists, x.Name.O)
		}
		id, err := m.GenID()
		if err != nil {
			return err
		}
		return m.PutDB(&catalog.DBInfo{ID: id, Name: x.Name.O, Charset: "utf8mb4", Collate: "utf8mb4_bin"})
	})
}

func (d *DDL) dropDatabase(ctx context.Context, x *ast.DropDatabaseStmt) error {
	return d.Catalog.DDL(ctx, func(m *catalog.Mutator) error {
		db := m.Schema().DB(x.Name.O)
		if db == nil {
			if x.IfExists {
				return nil
			}
			return errno.NewStd(mysql.ErrDBDropExists, x.Name.O)
		}
		for i, t := range m.Schema().Tables(db.Name) {
			if err := queueTableData(m.Txn(), i, t); err != nil {
				return err
			}
			d.Catalog.ResetAutoID(t.ID)
		}
		return m.DropDB(db)
	})
}

// queueTableData queues every row and index entry of a dropped table t for
// GC to destroy (kv/delrange): the DROP stays one small transaction
// however big the table, and snapshots older than it keep reading the
// table until the GC safe point passes it.
func queueTableData(txn kv.Txn, seq int, t *catalog.TableInfo) error {
	prefix := kv.Key(tablecodec.TablePrefix(t.ID))
	return delrange.Add(txn, seq, prefix, prefix.PrefixNext())
}

func columnFieldType(col *ast.ColumnDef) types.FieldType {
	tp := col.Tp
	ft := types.FieldType{Tp: tp.GetType(), Flen: tp.GetFlen(), Decimal: tp.GetDecimal(), Flag: tp.GetFlag(),
		Charset: tp.GetCharset(), Collate: tp.GetCollate(), Elems: tp.GetElems()}
	defaultFlen := map[byte]int{mysql.TypeTiny: 4, mysql.TypeShort: 6, mysql.TypeInt24: 9, mysql.TypeLong: 11, mysql.TypeLonglong: 20,
		mysql.TypeString: 1, mysql.TypeBit: 1, mysql.TypeYear: 4}
	if ft.Flen == -1 || ft.Flen == 0 && ft.Tp != mysql.TypeVarchar && ft.Tp != mysql.TypeVarString {
		if f, ok := defaultFlen[ft.Tp]; ok {
			ft.Flen = f
			if ft.IsUnsigned() && ft.Tp != mysql.TypeLonglong {
				ft.Flen--
			}
		} else if ft.Tp == mysql.TypeNewDecimal {
			ft.Flen = 10
		} else {
			ft.Flen = 0
		}
	}
	if ft.Tp == mysql.TypeNewDecimal && ft.Decimal < 0 {
		ft.Decimal = 0
	}
	if ft.Tp == mysql.TypeVarString {
		ft.Tp = mysql.TypeVarchar
	}
	if ft.Tp == mysql.TypeFloat && ft.Flen > 24 {
		ft.Tp = mysql.TypeDouble
	}
	numeric := ft.IsInteger() || ft.Tp == mysql.TypeFloat || ft.Tp == mysql.TypeDouble || ft.Tp == mysql.TypeNewDecimal
	if numeric {
		ft.Charset, ft.Collate = "binary", "binary"
		ft.Flag |= mysql.BinaryFlag
	} else if ft.Charset == "" || (ft.Charset != "binary" && ft.Flag&mysql.BinaryFlag != 0 && ft.Charset == "") {
		ft.Charset, ft.Collate = "utf8mb4", "utf8mb4_bin"
	}
	if ft.Charset == "binary" && !numeric {
		ft.Collate = "binary"
		ft.Flag |= mysql.BinaryFlag
	}
	if ft.Collate == "" {
		ft.Collate = ft.Charset + "_bin"
		if ft.Charset == "utf8mb4" || ft.Charset == "utf8" {
			ft.Collate = "utf8mb4_bin"
		}
	}
	for _, o := range col.Options {
		if o.Tp == ast.ColumnOptionCollate {
			ft.Collate = o.StrValue
		}
	}
	if ft.Tp == mysql.TypeBlob || ft.Tp == mysql.TypeTinyBlob || ft.Tp == mysql.TypeMediumBlob || ft.Tp == mysql.TypeLongBlob {
		ft.Flag |= mysql.BlobFlag
	}
	return ft
}

// literalText evaluates a DEFAULT expression to its text; isNull when it is
// NULL.
func literalText(e ast.ExprNode) (text string, isNull bool, err error) {
	switch x := e.(type) {
	case *driver.ValueExpr:
		if x.Kind() == driver.KindNull {
			return "", true, nil
		}
		if x.Kind() == driver.KindMysqlDecimal {
			return x.GetMysqlDecimal().String(), false, nil
		}
		if x.Kind() == driver.KindBinaryLiteral {
			return string(x.GetBinaryLiteral()), false, nil
		}
		return fmt.Sprint(x.GetValue()), false, nil
	case *ast.UnaryOperationExpr:
		t, n, err := literalText(x.V)
		if err != nil || n {
			return t, n, err
		}
		if x.Op.String() == "minus" {
			if strings.HasPrefix(t, "-") {
				return t[1:], false, nil
			}
			return "-" + t, false, nil
		}
		return t, false, nil
	case *ast.FuncCallExpr:
		name := strings.ToUpper(x.FnName.O)
		if name == "CURRENT_TIMESTAMP" || name == "NOW" {
			return "CURRENT_TIMESTAMP", false, nil
		}
	}
	return "", false, errno.New(mysql.ErrInvalidDefault, "Invalid default value")
}

func (d *DDL) createTable(ctx context.Context, x *ast.CreateTableStmt) error {
	dbName, err := d.dbName(x.Table)
	if err != nil {
		return err
	}
	if x.ReferTable != nil || x.Select != nil {
		return errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support CREATE TABLE ... LIKE/SELECT")
	}
	t := &catalog.TableInfo{Name: x.Table.Name.O, Charset: "utf8mb4", Collate: "utf8mb4_bin"}
	for _, opt := range x.Options {
		if opt.Tp == ast.TableOptionComment {
			t.Comment = opt.StrValue
		}
	}
	var pk []*ast.IndexPartSpecification
	pkType := ast.PrimaryKeyTypeDefault
	type idxDef struct {
		name   string
		unique bool
		parts  []*ast.IndexPartSpecification
	}
	var indexes []idxDef
	for _, cd := range x.Cols {
		if t.FindColumn(cd.Name.Name.O) != nil {
			return errno.NewStd(mysql.ErrDupFieldName, cd.Name.Name.O)
		}
		t.MaxColumnID++
		c := &catalog.ColumnInfo{ID: t.MaxColumnID, Name: cd.Name.Name.O, Type: columnFieldType(cd)}
		for _, o := range cd.Options {
			switch o.Tp {
			case ast.ColumnOptionNotNull:
				c.Type.Flag |= mysql.NotNullFlag
			case ast.ColumnOptionNull:
				c.Type.Flag &^= mysql.NotNullFlag
			case ast.ColumnOptionAutoIncrement:
				c.AutoIncrement = true
				c.Type.Flag |= mysql.AutoIncrementFlag
			case ast.ColumnOptionDefaultValue:
				txt, isNull, err := columnDefaultText(c, o.Expr)
				if err != nil {
					return errno.NewStd(mysql.ErrInvalidDefault, c.Name)
				}
				c.HasDefault = true
				if !isNull {
					c.Default = &txt
				}
			case ast.ColumnOptionOnUpdate:
				if err := setOnUpdate(c, o.Expr); err != nil {
					return err
				}
			case ast.ColumnOptionPrimaryKey:
				if pk != nil {
					return errno.NewStd(mysql.ErrMultiplePriKey)
				}
				pk = []*ast.IndexPartSpecification{{Column: cd.Name}}
				pkType = o.PrimaryKeyTp
			case ast.ColumnOptionUniqKey:
				indexes = append(indexes, idxDef{name: c.Name, unique: true, parts: []*ast.IndexPartSpecification{{Column: cd.Name}}})
			case ast.ColumnOptionComment:
				if s, _, err := literalText(o.Expr); err == nil {
					c.Comment = s
				}
			}
		}
		if c.Default != nil && c.Type.NotNull() && c.HasDefault {
			// DEFAULT NULL on a NOT NULL column is an error in MySQL.
		} else if c.HasDefault && c.Default == nil && c.Type.NotNull() {
			return errno.NewStd(mysql.ErrInvalidDefault, c.Name)
		}
		if err := checkColumnDefault(c); err != nil {
			return err
		}
		t.Columns = append(t.Columns, c)
	}
	for _, cons := range x.Constraints {
		switch cons.Tp {
		case ast.ConstraintPrimaryKey:
			if pk != nil {
				return errno.NewStd(mysql.ErrMultiplePriKey)
			}
			pk = cons.Keys
			if cons.Option != nil {
				pkType = cons.Option.PrimaryKeyTp
			}
		case ast.ConstraintKey, ast.ConstraintIndex:
			indexes = append(indexes, idxDef{name: cons.Name, parts: cons.Keys})
		case ast.ConstraintUniq, ast.ConstraintUniqKey, ast.ConstraintUniqIndex:
			indexes = append(indexes, idxDef{name: cons.Name, unique: true, parts: cons.Keys})
		}
	}
	if pk != nil {
		idx, err := buildIndex(t, "PRIMARY", true, pk)
		if err != nil {
			return err
		}
		idx.Primary = true
		for _, ic := range idx.Columns {
			c := t.Columns[ic.Offset]
			c.Type.Flag |= mysql.NotNullFlag | mysql.PriKeyFlag
		}
		t.Indices = append(t.Indices, idx)
		intHandle := len(idx.Columns) == 1 && t.Columns[idx.Columns[0].Offset].Type.IsInteger()
		clustered := pkType == ast.PrimaryKeyTypeClustered
		if pkType == ast.PrimaryKeyTypeDefault {
			clustered = d.Clustering == ClusterAll || (d.Clustering == ClusterIntOnly && intHandle)
		}
		switch {
		case !clustered:
			// A unique index named PRIMARY over a hidden row id.
		case intHandle:
			t.PKIsHandle = true
		default:
			t.CommonHandle = true
		}
	}
	for _, def := range indexes {
		name := def.name
		if name == "" {
			name = def.parts[0].Column.Name.O
		}
		for t.FindIndex(name) != nil {
			if def.name != "" {
				return errno.NewStd(mysql.ErrDupKeyName, name)
			}
			name = fmt.Sprintf("%s_%d", def.parts[0].Column.Name.O, len(t.Indices)+1)
		}
		idx, err := buildIndex(t, name, def.unique, def.parts)
		if err != nil {
			return err
		}
		t.Indices = append(t.Indices, idx)
	}
	autoCols := 0
	for _, c := range t.Columns {
		if c.AutoIncrement {
			autoCols++
			keyed := false
			for _, idx := range t.Indices {
				if idx.Columns[0].Offset == c.Offset {
					keyed = true
				}
			}
			if !keyed {
				return errno.NewStd(mysql.ErrWrongAutoKey)
			}
		}
	}
	if autoCols > 1 {
		return errno.NewStd(mysql.ErrWrongAutoKey)
	}
	return d.Catalog.DDL(ctx, func(m *catalog.Mutator) error {
		db := m.Schema().DB(dbName)
		if db == nil {
			return errno.NewStd(mysql.ErrBadDB, dbName)
		}
		if m.Schema().Table(dbName, t.Name) != nil {
			if x.IfNotExists {
				return nil
			}
			return errno.NewStd(mysql.ErrTableExists, t.Name)
		}
		id, err := m.GenID()
		if err != nil {
			return err
		}
		t.ID = id
		return m.PutTable(db, t)
	})
}

func buildIndex(t *catalog.TableInfo, name string, unique bool, parts []*ast.IndexPartSpecification) (*catalog.IndexInfo, error) {
	t.MaxIndexID++
	idx := &catalog.IndexInfo{ID: t.MaxIndexID, Name: name, Unique: unique}
	for _, p := range parts {
		if p.Column == nil {
			return nil, errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support expression indexes")
		}
		c := t.FindColumn(p.Column.Name.O)
		if c == nil {
			return nil, errno.NewStd(mysql.ErrKeyColumnDoesNotExits, p.Column.Name.O)
		}
		length := p.Length
		if length < 0 {
			length = 0
		}
		if (c.Type.Tp == mysql.TypeBlob || c.Type.Tp == mysql.TypeTinyBlob || c.Type.Tp == mysql.TypeMediumBlob || c.Type.Tp == mysql.TypeLongBlob) && length == 0 {
			return nil, errno.NewStd(mysql.ErrBlobKeyWithoutLength, c.Name)
		}
		idx.Columns = append(idx.Columns, &catalog.IndexColumn{Name: c.Name, Offset: c.Offset, Length: length})
	}
	if len(t.Indices) == 0 && len(idx.Columns) == 1 && !unique {
		t.Columns[idx.Columns[0].Offset].Type.Flag |= mysql.MultipleKeyFlag
	}
	return idx, nil
}

func (d *DDL) tableFor(m *catalog.Mutator, tn *ast.TableName) (*catalog.DBInfo, *catalog.TableInfo, error) {
	dbName, err := d.dbName(tn)
	if err != nil {
		return nil, nil, err
	}
	db := m.Schema().DB(dbName)
	if db == nil {
		return nil, nil, errno.NewStd(mysql.ErrBadDB, dbName)
	}
	t := m.Schema().Table(dbName, tn.Name.O)
	if t == nil {
		return db, nil, errno.NewStd(mysql.ErrNoSuchTable, dbName, tn.Name.O)
	}
	// A DDL judges the table once no other schema change is under way on
	// it (an index being dropped still covers its column, for one).
	if err := m.RequireNoJob(t); err != nil {
		return db, nil, err
	}
	return db, t, nil
}

func (d *DDL) dropTables(ctx context.Context, x *ast.DropTableStmt) error {
	for _, tn := range x.Tables {
		err := d.Catalog.DDL(ctx, func(m *catalog.Mutator) error {
			db, t, err := d.tableFor(m, tn)
			if err != nil {
				if x.IfExists && t == nil {
					if se, ok := err.(*errno.SQLError); ok && (se.Code == mysql.ErrNoSuchTable || se.Code == mysql.ErrBadDB) {
						return nil
					}
				}
				if se, ok := err.(*errno.SQLError); ok && se.Code == mysql.ErrNoSuchTable {
					return errno.NewStd(mysql.ErrBadTable, tn.Schema.O+"."+tn.Name.O)
				}
				return err
			}
			if x.IsView != (t.View != "") {
				if x.IsView {
					return errno.New(mysql.ErrWrongObject, "'%s.%s' is not VIEW", db.Name, t.Name)
				}
				return errno.NewStd(mysql.ErrBadTable, db.Name+"."+t.Name)
			}
			if err := queueTableData(m.Txn(), 0, t); err != nil {
				return err
			}
			d.Catalog.ResetAutoID(t.ID)
			return m.DropTable(db, t)
		})
		if err != nil {
			if se, ok := err.(*errno.SQLError); ok && se.Code == mysql.ErrBadTable {
				name := tn.Name.O
				if dbn, _ := d.dbName(tn); dbn != "" {
					name = dbn + "." + tn.Name.O
				}
				return errno.NewStd(mysql.ErrBadTable, name)
			}
			return err
		}
	}
	return nil
}

func (d *DDL) truncate(ctx context.Context, tn *ast.TableName) error {
	return d.Catalog.DDL(ctx, func(m *catalog.Mutator) error {
		db, t, err := d.tableFor(m, tn)
		if err != nil {
			return err
		}
		if err := queueTableData(m.Txn(), 0, t); err != nil {
			return err
		}
		nt := t.Clone()
		id, err := m.GenID()
		if err != nil {
			return err
		}
		d.Catalog.ResetAutoID(t.ID)
		if err := m.DropTable(db, t); err != nil {
			return err
		}
		nt.ID = id
		return m.PutTable(db, nt)
	})
}

// createIndex adds an index online (see catalog/job.go): it appears in
// delete-only state, goes write-only once every node knows it, is
// backfilled for the rows written before, and goes public.
func (d *DDL) createIndex(ctx context.Context, tn *ast.TableName, name string, unique bool, parts []*ast.IndexPartSpecification, ifNotExists bool) error {
	return d.Catalog.DDLJob(ctx, backfillIndex, func(m *catalog.Mutator) (*catalog.SchemaJob, error) {
		db, t, err := d.tableFor(m, tn)
		if err != nil {
			return nil, err
		}
		if t.View != "" {
			return nil, errno.New(mysql.ErrWrongObject, "'%s.%s' is not BASE TABLE", db.Name, t.Name)
		}
		if name == "" {
			name = parts[0].Column.Name.O
		}
		if t.FindIndex(name) != nil {
			if ifNotExists {
				return nil, nil
			}
			return nil, errno.NewStd(mysql.ErrDupKeyName, name)
		}
		nt := t.Clone()
		idx, err := buildIndex(nt, name, unique, parts)
		if err != nil {
			return nil, err
		}
		idx.State = catalog.StateDeleteOnly
		nt.Indices = append(nt.Indices, idx)
		return m.StartJob(db, nt, catalog.JobAddIndex, idx.ID)
	})
}

// backfillBatch is how many rows one backfill transaction covers.
const backfillBatch = 256

// maxBackfillRetries bounds the retries of one batch that keeps meeting
// concurrent writes.
const maxBackfillRetries = 100

// backfillIndex writes r.Index's missing entries for the table's rows, a
// batch of rows per transaction read at a fresh snapshot, while every node
// already maintains the index for the rows it writes. Each batch locks the
// rows it covers, so a row changed meanwhile makes it (or the change)
// conflict and the batch runs again on newer data. A unique index whose
// key is taken by another row fails with 1062.
func backfillIndex(ctx context.Context, r *catalog.Reorg) error {
	prefix := kv.Key(tablecodec.RecordPrefix(r.Table.ID))
	start, end := prefix, prefix.PrefixNext()
	for start != nil {
		var next kv.Key
		err := kv.RetryWriteConflicts(ctx, maxBackfillRetries, func() (err error) {
			next, err = backfillOnce(ctx, r, start, end)
			return err
		})
		if err != nil {
			return err
		}
		start = next
	}
	return nil
}

// backfillOnce fills in the entries of the first backfillBatch rows from
// start in one transaction; it returns where the next batch starts (nil:
// the table is done).
func backfillOnce(ctx context.Context, r *catalog.Reorg, start, end kv.Key) (kv.Key, error) {
	t, idx := r.Table, r.Index
	txn, err := r.Store.Begin(ctx, kv.TxnOptions{Mode: kv.Optimistic, Enable1PC: true})
	if err != nil {
		return nil, err
	}
	defer func() {
		if txn.Valid() {
			_ = txn.Rollback()
		}
	}()
	if err := r.Check(ctx, txn); err != nil {
		return nil, err
	}
	tc := codecOf(t)
	extra := !t.PKIsHandle && !t.CommonHandle
	it, err := txn.Iter(ctx, start, end)
	if err != nil {
		return nil, err
	}
	var rowKeys, keys []kv.Key
	var vals [][]byte
	var handles []tablecodec.Handle
	var rows []types.Row
	for it.Valid() && len(rowKeys) < backfillBatch {
		_, h, err := tablecodec.DecodeRecordKey(it.Key())
		if err != nil {
			it.Close()
			return nil, err
		}
		h = h.Clone()
		row, err := tc.decodeRow(t, h, it.Value(), extra)
		if err != nil {
			it.Close()
			return nil, err
		}
		k, v := tablecodec.EncodeIndexEntry(nil, nil, t.ID, idx.ID, idx.Unique, indexValues(t, idx, row), h)
		rowKeys = append(rowKeys, append(kv.Key(nil), it.Key()...))
		keys, vals, handles, rows = append(keys, k), append(vals, v), append(handles, h), append(rows, row)
		if err := it.Next(); err != nil {
			it.Close()
			return nil, err
		}
	}
	more := it.Valid()
	it.Close()
	if len(rowKeys) == 0 {
		return nil, nil
	}
	// Rows changed after this snapshot conflict with the batch.
	if err := txn.LockKeys(ctx, kv.LockOptions{}, rowKeys...); err != nil {
		return nil, err
	}
	existing, err := txn.BatchGet(ctx, keys)
	if err != nil {
		return nil, err
	}
	seen := map[string]int{}
	for i, k := range keys {
		if v, ok := existing[string(k)]; ok {
			if !idx.Unique {
				continue // written by a write-only node
			}
			owner, err := tablecodec.DecodeIndexValue(v)
			if err != nil {
				return nil, err
			}
			if owner.Equal(handles[i]) {
				continue
			}
			return nil, ErrDupEntry(t, idx, displayValues(idx, rows[i]))
		}
		if j, ok := seen[string(k)]; ok && !handles[j].Equal(handles[i]) {
			return nil, ErrDupEntry(t, idx, displayValues(idx, rows[i]))
		}
		seen[string(k)] = i
		if err := txn.Set(k, vals[i]); err != nil {
			return nil, err
		}
	}
	if err := txn.Commit(ctx); err != nil {
		return nil, err
	}
	if !more {
		return nil, nil
	}
	return rowKeys[len(rowKeys)-1].Next(), nil
}

// dropIndex drops an index online: write-only (readers stop using it),
// delete-only, then absent with its entries queued for GC.
func (d *DDL) dropIndex(ctx context.Context, tn *ast.TableName, name string, ifExists bool) error {
	return d.Catalog.DDLJob(ctx, nil, func(m *catalog.Mutator) (*catalog.SchemaJob, error) {
		db, t, err := d.tableFor(m, tn)
		if err != nil {
			return nil, err
		}
		idx := t.FindIndex(name)
		if idx == nil || (idx.Primary && (t.PKIsHandle || t.CommonHandle)) {
			if idx == nil && ifExists {
				return nil, nil
			}
			if idx == nil {
				return nil, errno.NewStd(mysql.ErrCantDropFieldOrKey, name)
			}
			return nil, errno.New(mysql.ErrNotSupportedYet, "Unsupported drop primary key when the table is using clustered index")
		}
		nt := t.Clone()
		nt.IndexByID(idx.ID).State = catalog.StateWriteOnly
		return m.StartJob(db, nt, catalog.JobDropIndex, idx.ID)
	})
}

func (d *DDL) alterTable(ctx context.Context, x *ast.AlterTableStmt) error {
	for _, spec := range x.Specs {
		var err error
		switch spec.Tp {
		case ast.AlterTableAddConstraint:
			c := spec.Constraint
			switch c.Tp {
			case ast.ConstraintKey, ast.ConstraintIndex:
				err = d.createIndex(ctx, x.Table, c.Name, false, c.Keys, c.IfNotExists)
			case ast.ConstraintUniq, ast.ConstraintUniqKey, ast.ConstraintUniqIndex:
				err = d.createIndex(ctx, x.Table, c.Name, true, c.Keys, c.IfNotExists)
			default:
				err = errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support this ALTER TABLE constraint")
			}
		case ast.AlterTableDropIndex:
			err = d.dropIndex(ctx, x.Table, spec.Name, spec.IfExists)
		case ast.AlterTableAddColumns:
			err = d.addColumns(ctx, x.Table, spec.NewColumns)
		case ast.AlterTableDropColumn:
			err = d.dropColumn(ctx, x.Table, spec.OldColumnName.Name.O, spec.IfExists)
		default:
			err = errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support this ALTER TABLE operation")
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// addColumns appends columns online: delete-only, write-only, then
// public (existing rows read them as their default: the row codec gives a
// column missing from a row its default, so no rows are rewritten).
func (d *DDL) addColumns(ctx context.Context, tn *ast.TableName, cols []*ast.ColumnDef) error {
	return d.Catalog.DDLJob(ctx, nil, func(m *catalog.Mutator) (*catalog.SchemaJob, error) {
		db, t, err := d.tableFor(m, tn)
		if err != nil {
			return nil, err
		}
		if t.View != "" {
			return nil, errno.New(mysql.ErrWrongObject, "'%s.%s' is not BASE TABLE", db.Name, t.Name)
		}
		nt := t.Clone()
		var ids []int64
		for _, cd := range cols {
			if nt.FindColumn(cd.Name.Name.O) != nil {
				return nil, errno.NewStd(mysql.ErrDupFieldName, cd.Name.Name.O)
			}
			nt.MaxColumnID++
			c := &catalog.ColumnInfo{ID: nt.MaxColumnID, Name: cd.Name.Name.O, Type: columnFieldType(cd), State: catalog.StateDeleteOnly}
			for _, o := range cd.Options {
				switch o.Tp {
				case ast.ColumnOptionNotNull:
					c.Type.Flag |= mysql.NotNullFlag
				case ast.ColumnOptionDefaultValue:
					txt, isNull, err := columnDefaultText(c, o.Expr)
					if err != nil {
						return nil, errno.NewStd(mysql.ErrInvalidDefault, c.Name)
					}
					c.HasDefault = true
					if !isNull {
						c.Default = &txt
					}
				case ast.ColumnOptionOnUpdate:
					if err := setOnUpdate(c, o.Expr); err != nil {
						return nil, err
					}
				case ast.ColumnOptionAutoIncrement, ast.ColumnOptionPrimaryKey, ast.ColumnOptionUniqKey:
					return nil, errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support adding a key column")
				}
			}
			if err := checkColumnDefault(c); err != nil {
				return nil, err
			}
			if c.Type.NotNull() && c.Default == nil {
				def := zeroValue(c)
				s := def.String()
				c.Default = &s
			}
			if err := setOriginDefault(c); err != nil {
				return nil, err
			}
			nt.Columns = append(nt.Columns, c)
			ids = append(ids, c.ID)
		}
		return m.StartJob(db, nt, catalog.JobAddColumn, ids...)
	})
}

// setOriginDefault fixes the value the table's existing rows read for a
// column being added with DEFAULT CURRENT_TIMESTAMP: the time of the
// ALTER, once, for every old row (a literal default needs nothing: rows
// read Default, which no statement changes yet).
func setOriginDefault(c *catalog.ColumnInfo) error {
	if c.Default == nil || !isCurrentTimestamp(*c.Default) {
		return nil
	}
	ctx := &Context{Eval: &expression.Context{StmtTime: time.Now()}, StrictMode: true}
	d, err := DefaultValue(ctx, c, 0)
	if err != nil {
		return errno.NewStd(mysql.ErrInvalidDefault, c.Name)
	}
	if d.IsNull() {
		return nil
	}
	s := d.String()
	c.OriginDefault = &s
	return nil
}

// dropColumn drops a column online: write-only (readers stop seeing it,
// writers still keep its values for nodes that do), delete-only, then
// absent. Its values stay in the rows under its id, which is never
// reused, and are skipped by every reader.
func (d *DDL) dropColumn(ctx context.Context, tn *ast.TableName, name string, ifExists bool) error {
	return d.Catalog.DDLJob(ctx, nil, func(m *catalog.Mutator) (*catalog.SchemaJob, error) {
		db, t, err := d.tableFor(m, tn)
		if err != nil {
			return nil, err
		}
		c := t.FindColumn(name)
		if c == nil {
			if ifExists {
				return nil, nil
			}
			return nil, errno.NewStd(mysql.ErrCantDropFieldOrKey, name)
		}
		if len(t.PublicColumns()) == 1 {
			return nil, errno.NewStd(mysql.ErrCantRemoveAllFields)
		}
		for _, idx := range t.Indices {
			for _, ic := range idx.Columns {
				if ic.Offset == c.Offset {
					return nil, errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support dropping column '%s' that index '%s' covers; drop the index first", c.Name, idx.Name)
				}
			}
		}
		if c.AutoIncrement {
			return nil, errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support dropping an AUTO_INCREMENT column")
		}
		nt := t.Clone()
		nt.ColumnByID(c.ID).State = catalog.StateWriteOnly
		return m.StartJob(db, nt, catalog.JobDropColumn, c.ID)
	})
}

// ViewCheck plans a view's SELECT to validate it; set by the session so
// that DDL does not depend on the planner.
type ViewCheck func(sel ast.StmtNode) ([]string, error)

func (d *DDL) createView(ctx context.Context, x *ast.CreateViewStmt) error {
	var sb strings.Builder
	// Backslashes escaped: the text is parsed again on every use and by
	// SHOW CREATE VIEW's readers ('a\\b' would come back as 'ab').
	if err := x.Select.Restore(format.NewRestoreCtx(format.DefaultRestoreFlags|format.RestoreStringEscapeBackslash, &sb)); err != nil {
		return err
	}
	var cols []string
	if d.CheckView != nil {
		names, err := d.CheckView(x.Select)
		if err != nil {
			return err
		}
		cols = names
	}
	if len(x.Cols) > 0 {
		if len(x.Cols) != len(cols) {
			return errno.New(mysql.ErrViewWrongList, "View's SELECT and view's field list have different column counts")
		}
		cols = cols[:0]
		for _, c := range x.Cols {
			cols = append(cols, c.O)
		}
	}
	return d.Catalog.DDL(ctx, func(m *catalog.Mutator) error {
		dbName, err := d.dbName(x.ViewName)
		if err != nil {
			return err
		}
		db := m.Schema().DB(dbName)
		if db == nil {
			return errno.NewStd(mysql.ErrBadDB, dbName)
		}
		old := m.Schema().Table(dbName, x.ViewName.Name.O)
		if old != nil && !(x.OrReplace && old.View != "") {
			return errno.NewStd(mysql.ErrTableExists, x.ViewName.Name.O)
		}
		t := &catalog.TableInfo{Name: x.ViewName.Name.O, View: sb.String(), ViewCols: cols}
		if old != nil {
			t.ID = old.ID
		} else {
			id, err := m.GenID()
			if err != nil {
				return err
			}
			t.ID = id
		}
		return m.PutTable(db, t)
	})
}

package ddl

import (
	"context"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/sql/catalog"
	"github.com/shoaldb/shoal/sql/executor"
	"github.com/shoaldb/shoal/tablecodec"
)

// MODIFY, CHANGE and RENAME COLUMN, ALTER COLUMN SET/DROP DEFAULT: changes
// of a column's metadata that leave every stored value readable as it is
// (rows hold values by column id, with no type; see tablecodec), so they
// take effect in one schema version with no data work. A type change is
// accepted only where the stored values and index entries stay exact
// (a longer VARCHAR, a wider integer of the same signedness); others
// would need a rewrite and are refused (1235). Turning a nullable column
// NOT NULL also checks the rows (see alterInPlace).

func unknownColumn(name string, t *catalog.TableInfo) error {
	return errno.New(mysql.ErrBadField, "Unknown column '%s' in '%s'", name, t.Name)
}

// columnIndex returns the position of the public column named name in
// t.Columns, or -1.
func columnIndex(t *catalog.TableInfo, name string) int {
	for i, c := range t.Columns {
		if c.Public() && strings.EqualFold(c.Name, name) {
			return i
		}
	}
	return -1
}

// renameColumn renames the column at position pos of nt to name,
// following the name in nt's indexes (their columns are found by name).
func renameColumn(nt *catalog.TableInfo, pos int, name string) error {
	c := nt.Columns[pos]
	if strings.EqualFold(c.Name, name) {
		c.Name = name
	} else if nt.FindColumn(name) != nil {
		return errno.NewStd(mysql.ErrDupFieldName, name)
	}
	if !strings.EqualFold(c.Name, name) {
		// Expressions the table keeps name it by its name (MySQL refuses
		// too).
		if err := exprDependency(nt, c); err != nil {
			return err
		}
	}
	for _, idx := range nt.Indices {
		for _, ic := range idx.Columns {
			if strings.EqualFold(ic.Name, c.Name) {
				ic.Name = name
			}
		}
	}
	c.Name = name
	return nil
}

// moveColumn puts the column at position pos first, or right after the
// column named after (MySQL's FIRST / AFTER).
func moveColumn(nt *catalog.TableInfo, pos int, first bool, after string) error {
	if !first && after == "" {
		return nil
	}
	c := nt.Columns[pos]
	rest := append(append([]*catalog.ColumnInfo{}, nt.Columns[:pos]...), nt.Columns[pos+1:]...)
	at := 0
	if !first {
		at = -1
		// Any state: the only columns not public are those an ADD
		// COLUMN is adding (a DDL runs with no job on the table).
		for i, o := range rest {
			if strings.EqualFold(o.Name, after) {
				at = i + 1
			}
		}
		if at < 0 {
			return unknownColumn(after, nt)
		}
	}
	nt.Columns = append(append(append([]*catalog.ColumnInfo{}, rest[:at]...), c), rest[at:]...)
	for i, col := range nt.Columns {
		col.Offset = i
	}
	// Index columns point at offsets: follow the new order.
	for _, idx := range nt.Indices {
		for _, ic := range idx.Columns {
			if p := columnIndex(nt, ic.Name); p >= 0 {
				ic.Offset = p
			}
		}
	}
	return nil
}

// inPrimaryKey reports whether column c of t is part of its primary key.
func inPrimaryKey(t *catalog.TableInfo, c *catalog.ColumnInfo) bool {
	if pk := t.PrimaryIndex(); pk != nil {
		for _, ic := range pk.Columns {
			if strings.EqualFold(ic.Name, c.Name) {
				return true
			}
		}
	}
	return false
}

// modifyColumn applies CHANGE old new def / MODIFY def (old == def's
// name) to nt: the definition replaces the column's as a whole (an
// omitted DEFAULT, COMMENT or NOT NULL is gone, as in MySQL).
func modifyColumn(nt *catalog.TableInfo, at int, def *ast.ColumnDef, pos *ast.ColumnPosition) error {
	oc := nt.Columns[at]
	if oc.IsGenerated() || hasGenerated(def) {
		return errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support MODIFY/CHANGE COLUMN of a generated column")
	}
	if pos != nil {
		if after := positionAfter(pos); after != "" && (columnIndex(nt, after) < 0 || strings.EqualFold(after, oc.Name)) {
			return unknownColumn(after, nt)
		}
	}
	nc := &catalog.ColumnInfo{ID: oc.ID, Name: oc.Name, Offset: oc.Offset, Type: columnFieldType(def), State: oc.State}
	keyFlags := uint(mysql.PriKeyFlag | mysql.UniqueKeyFlag | mysql.MultipleKeyFlag)
	nc.Type.Flag |= oc.Type.Flag & keyFlags
	explicitNull := false
	for _, o := range def.Options {
		switch o.Tp {
		case ast.ColumnOptionNotNull:
			nc.Type.Flag |= mysql.NotNullFlag
		case ast.ColumnOptionNull:
			nc.Type.Flag &^= mysql.NotNullFlag
			explicitNull = true
		case ast.ColumnOptionDefaultValue:
			if isExprDefault(o.Expr) {
				return errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support giving an existing column an expression default")
			}
			txt, isNull, err := columnDefaultText(nc, o.Expr)
			if err != nil {
				return errno.NewStd(mysql.ErrInvalidDefault, def.Name.Name.O)
			}
			nc.HasDefault = true
			if !isNull {
				nc.Default = &txt
			}
		case ast.ColumnOptionOnUpdate:
			if err := setOnUpdate(nc, o.Expr); err != nil {
				return err
			}
		case ast.ColumnOptionComment:
			s, _, err := literalText(o.Expr)
			if err != nil {
				return err
			}
			nc.Comment = s
		case ast.ColumnOptionCollate:
			// columnFieldType took it.
		case ast.ColumnOptionAutoIncrement:
			if !oc.AutoIncrement {
				return errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support making a column AUTO_INCREMENT")
			}
			nc.AutoIncrement = true
			nc.Type.Flag |= mysql.AutoIncrementFlag
		case ast.ColumnOptionPrimaryKey, ast.ColumnOptionUniqKey:
			return errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support adding a key in MODIFY/CHANGE COLUMN; use ADD INDEX")
		default:
			return errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support this column option in MODIFY/CHANGE COLUMN")
		}
	}
	if inPrimaryKey(nt, oc) {
		if explicitNull {
			return errno.NewStd(mysql.ErrPrimaryCantHaveNull)
		}
		nc.Type.Flag |= mysql.NotNullFlag
	}
	if nc.HasDefault && nc.Default == nil && nc.Type.NotNull() {
		return errno.NewStd(mysql.ErrInvalidDefault, def.Name.Name.O)
	}
	if nc.AutoIncrement && nc.HasDefault {
		return errno.NewStd(mysql.ErrInvalidDefault, def.Name.Name.O)
	}
	if err := checkColumnDefault(nc); err != nil {
		return err
	}
	narrowed, err := checkTypeChange(oc, nc)
	if err != nil {
		return err
	}
	if typeChanged(oc, nc) {
		// A generated column or expression default computed from it
		// would need its values computed again.
		if err := exprDependency(&catalog.TableInfo{Name: nt.Name, Columns: nt.Columns}, oc); err != nil {
			return errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support changing the type of column '%s', which a generated column or expression default uses", oc.Name)
		}
	}
	if narrowed {
		// alterInPlace checks the rows before the type applies.
		nt := nc.Type
		nc.Pending = &nt
	}
	keepOriginDefault(oc, nc)
	nt.Columns[at] = nc
	if err := renameColumn(nt, at, def.Name.Name.O); err != nil {
		return err
	}
	if pos != nil {
		return moveColumn(nt, at, pos.Tp == ast.ColumnPositionFirst, positionAfter(pos))
	}
	return nil
}

func positionAfter(pos *ast.ColumnPosition) string {
	if pos.Tp == ast.ColumnPositionAfter && pos.RelativeColumn != nil {
		return pos.RelativeColumn.Name.O
	}
	return ""
}

// keepOriginDefault keeps what rows written before the column existed
// read for it when its default changes: the default it had then.
func keepOriginDefault(oc, nc *catalog.ColumnInfo) {
	nc.OriginDefault, nc.OriginNull = oc.OriginDefault, oc.OriginNull
	if oc.OriginDefault != nil || oc.OriginNull {
		return
	}
	switch {
	case oc.DefaultIsExpr:
		// Expression defaults come with the table (an added column
		// cannot have one): every row holds a value.
	case oc.Default == nil:
		nc.OriginNull = true
	case executor.IsCurrentTimestamp(*oc.Default):
		// An added column with this default has its OriginDefault; so
		// this one came with the table and every row holds a value.
	default:
		s := *oc.Default
		nc.OriginDefault = &s
	}
}

// intRank orders the integer types by width.
var intRank = map[byte]int{mysql.TypeTiny: 1, mysql.TypeShort: 2, mysql.TypeInt24: 3, mysql.TypeLong: 4, mysql.TypeLonglong: 5}

// checkTypeChange refuses a type change that stored values or index
// entries would not survive unchanged. narrowed: the new type holds fewer
// values (a shorter VARCHAR/CHAR, a smaller integer), so the rows must be
// checked first; those that fit are stored and indexed alike.
func checkTypeChange(oc, nc *catalog.ColumnInfo) (narrowed bool, err error) {
	o, n := &oc.Type, &nc.Type
	refuse := func() (bool, error) {
		return false, errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support changing column '%s' from %s to %s (the rows would need a rewrite)",
			oc.Name, executor.ColumnTypeString(o), executor.ColumnTypeString(n))
	}
	if o.Charset != n.Charset || o.Collate != n.Collate {
		return refuse()
	}
	if ro, ok := intRank[o.Tp]; ok {
		rn, ok := intRank[n.Tp]
		if !ok || o.IsUnsigned() != n.IsUnsigned() || o.Flag&mysql.ZerofillFlag != n.Flag&mysql.ZerofillFlag {
			return refuse()
		}
		return rn < ro, nil
	}
	if o.Tp != n.Tp {
		return refuse()
	}
	switch o.Tp {
	case mysql.TypeVarchar:
		return n.Flen < o.Flen, nil
	case mysql.TypeString:
		// CHAR values are stored without their padding; BINARY's is part
		// of the value.
		if o.Charset == "binary" && n.Flen != o.Flen {
			return refuse()
		}
		return n.Flen < o.Flen, nil
	case mysql.TypeEnum, mysql.TypeSet:
		if len(n.Elems) < len(o.Elems) {
			return refuse()
		}
		// Members are stored by value; appending keeps every old one.
		for i, e := range o.Elems {
			if n.Elems[i] != e {
				return refuse()
			}
		}
		return false, nil
	}
	if o.Flen != n.Flen || o.Decimal != n.Decimal || o.IsUnsigned() != n.IsUnsigned() || len(o.Elems) != len(n.Elems) {
		return refuse()
	}
	return false, nil
}

// alterColumnDefault applies ALTER COLUMN c SET DEFAULT v (def carries
// the default as its one option) or DROP DEFAULT (no option) to the
// column at position at of nt.
func alterColumnDefault(nt *catalog.TableInfo, at int, def *ast.ColumnDef) error {
	oc := nt.Columns[at]
	if oc.IsGenerated() {
		return errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support a default on generated column '%s'", oc.Name)
	}
	nc := *oc
	nc.Default, nc.HasDefault, nc.NoDefault, nc.DefaultIsExpr = nil, false, false, false
	if len(def.Options) == 0 {
		nc.NoDefault = true
	} else {
		if oc.AutoIncrement || isBlobType(oc.Type.Tp) {
			if isBlobType(oc.Type.Tp) {
				return errno.New(mysql.ErrBlobCantHaveDefault, "BLOB, TEXT, GEOMETRY or JSON column '%s' can't have a default value", oc.Name)
			}
			return errno.NewStd(mysql.ErrInvalidDefault, oc.Name)
		}
		if isExprDefault(def.Options[0].Expr) {
			return errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support giving an existing column an expression default")
		}
		txt, isNull, err := columnDefaultText(&nc, def.Options[0].Expr)
		if err != nil {
			return errno.NewStd(mysql.ErrInvalidDefault, oc.Name)
		}
		if isNull && oc.Type.NotNull() {
			return errno.NewStd(mysql.ErrInvalidDefault, oc.Name)
		}
		nc.HasDefault = true
		if !isNull {
			nc.Default = &txt
		}
		if err := checkColumnDefault(&nc); err != nil {
			return err
		}
	}
	keepOriginDefault(oc, &nc)
	nt.Columns[at] = &nc
	return nil
}

func isBlobType(tp byte) bool {
	return tp == mysql.TypeBlob || tp == mysql.TypeTinyBlob || tp == mysql.TypeMediumBlob || tp == mysql.TypeLongBlob || tp == mysql.TypeJSON
}

// renameIndex applies RENAME INDEX from TO to.
func renameIndex(nt *catalog.TableInfo, from, to string) error {
	if strings.EqualFold(from, "PRIMARY") {
		return errno.NewStd(mysql.ErrWrongNameForIndex, from)
	}
	if strings.EqualFold(to, "PRIMARY") {
		return errno.NewStd(mysql.ErrWrongNameForIndex, to)
	}
	idx := nt.FindIndex(from)
	if idx == nil {
		return errno.NewStd(mysql.ErrKeyDoesNotExist, from, nt.Name)
	}
	if other := nt.FindIndex(to); other != nil && other != idx {
		return errno.NewStd(mysql.ErrDupKeyName, to)
	}
	idx.Name = to
	return nil
}

// checkRows checks the rows of table tableID for columns ids, marked
// PreventNull (a NULL: 1138, as MySQL's in-place ALTER in strict mode)
// or Pending (a value the narrower type would not hold: 1265 for text,
// 1264 for numbers, at the row's position as MySQL's copy counts it).
// It reads at a fresh snapshot taken after every node refuses new misfits
// there, so none can commit behind it. Outside strict mode MySQL would
// convert the misfits; shoal does not rewrite rows yet (1235).
func (d *DDL) checkRows(ctx context.Context, tableID int64, ids []int64) error {
	t := d.Catalog.InfoSchema().TableByID(tableID)
	if t == nil {
		return catalog.ErrSchemaChanged
	}
	var cols []*catalog.ColumnInfo
	for _, id := range ids {
		c := t.ColumnByID(id)
		if c == nil || !c.PreventNull && c.Pending == nil {
			return catalog.ErrSchemaChanged
		}
		cols = append(cols, c)
	}
	store := d.Catalog.Storage()
	ts, err := store.CurrentTS(ctx)
	if err != nil {
		return err
	}
	prefix := kv.Key(tablecodec.RecordPrefix(t.ID))
	it, err := store.GetSnapshot(ts).Iter(ctx, prefix, prefix.PrefixNext())
	if err != nil {
		return err
	}
	defer it.Close()
	rowNum := 0
	for ; it.Valid(); err = it.Next() {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rowNum++
		_, h, err := tablecodec.DecodeRecordKey(it.Key())
		if err != nil {
			return err
		}
		row, err := executor.DecodeRecord(t, h, it.Value())
		if err != nil {
			return err
		}
		for _, c := range cols {
			v := row[c.Offset]
			var misfit error
			switch {
			case v.IsNull():
				if c.PreventNull {
					misfit = errno.NewStd(mysql.ErrInvalidUseOfNull)
				}
			case c.Pending != nil && executor.FitsPending(v, c, rowNum) != nil:
				if c.Type.IsInteger() {
					misfit = errno.New(mysql.ErrWarnDataOutOfRange, "Out of range value for column '%s' at row %d", c.Name, rowNum)
				} else {
					misfit = errno.New(mysql.WarnDataTruncated, "Data truncated for column '%s' at row %d", c.Name, rowNum)
				}
			}
			if misfit == nil {
				continue
			}
			if !d.SQLMode.IsStrict() {
				return errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support converting the values of column '%s' that its new definition would not hold (outside strict mode)", c.Name)
			}
			return misfit
		}
	}
	return err
}

// typeChanged: the column's type differs other than in nullability and
// key flags.
func typeChanged(oc, nc *catalog.ColumnInfo) bool {
	o, n := oc.Type, nc.Type
	mask := uint(mysql.NotNullFlag | mysql.PriKeyFlag | mysql.UniqueKeyFlag | mysql.MultipleKeyFlag | mysql.AutoIncrementFlag)
	return o.Tp != n.Tp || o.Flen != n.Flen || o.Decimal != n.Decimal || o.Flag&^mask != n.Flag&^mask ||
		o.Charset != n.Charset || o.Collate != n.Collate || len(o.Elems) != len(n.Elems)
}

// exprDependency is the error MySQL gives for renaming (or dropping)
// column c of t while a generated column, an expression default or a
// CHECK constraint names it.
func exprDependency(t *catalog.TableInfo, c *catalog.ColumnInfo) error {
	if err := columnExprDependency(t, c); err != nil {
		return err
	}
	for _, ck := range t.Checks {
		cols, err := storedExprColumns(ck.Expr)
		if err != nil {
			return err
		}
		if namesColumn(cols, c.Name) {
			return errno.NewConstraint(errno.ErrDependentByCheckConstraint, ck.Name, c.Name)
		}
	}
	return nil
}

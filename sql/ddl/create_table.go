package ddl

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/sql/catalog"
)

func (d *DDL) createTable(ctx context.Context, x *ast.CreateTableStmt) error {
	dbName, err := d.dbName(x.Table)
	if err != nil {
		return err
	}
	if x.TemporaryKeyword == ast.TemporaryGlobal {
		return errGlobalTemporary()
	}
	if x.TemporaryKeyword != ast.TemporaryNone && (x.ReferTable != nil || x.Select != nil) {
		return errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support CREATE TEMPORARY TABLE ... LIKE/SELECT")
	}
	if x.ReferTable != nil {
		return d.createTableLike(ctx, dbName, x)
	}
	if x.Select != nil && d.SelectColumns == nil {
		return errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support CREATE TABLE ... SELECT here")
	}
	if err := d.checkStorageOptions(x.Table.Name.O, x.Options); err != nil {
		return err
	}
	t := &catalog.TableInfo{Name: x.Table.Name.O, Charset: "utf8mb4", Collate: "utf8mb4_bin"}
	// autoIncStart is the AUTO_INCREMENT=N option: the first id handed out.
	var autoIncStart uint64
	for _, opt := range x.Options {
		switch opt.Tp {
		case ast.TableOptionComment:
			t.Comment = opt.StrValue
		case ast.TableOptionAutoIncrement:
			autoIncStart = opt.UintValue
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
	var pending []pendingExpr
	for _, cd := range x.Cols {
		if t.FindColumn(cd.Name.Name.O) != nil {
			return errno.NewStd(mysql.ErrDupFieldName, cd.Name.Name.O)
		}
		t.MaxColumnID++
		c := &catalog.ColumnInfo{ID: t.MaxColumnID, Name: cd.Name.Name.O, Type: columnFieldType(cd), Offset: len(t.Columns)}
		if err := checkGeneratedOptions(c, cd); err != nil {
			return err
		}
		for _, o := range cd.Options {
			if columnExprOption(c, o, &pending) {
				continue
			}
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
		} else if c.HasDefault && c.Default == nil && !c.DefaultIsExpr && c.Type.NotNull() {
			return errno.NewStd(mysql.ErrInvalidDefault, c.Name)
		}
		if err := checkColumnDefault(c); err != nil {
			return err
		}
		t.Columns = append(t.Columns, c)
	}
	// CREATE TABLE ... SELECT: a selected column named like an explicit
	// one takes its definition; the others follow in select order.
	selected := map[string]bool{}
	for _, sc := range d.SelectColumns {
		key := strings.ToLower(sc.Name)
		if selected[key] {
			return errno.NewStd(mysql.ErrDupFieldName, sc.Name)
		}
		selected[key] = true
		if t.FindColumn(sc.Name) != nil {
			continue
		}
		c := *sc
		t.MaxColumnID++
		c.ID, c.Offset = t.MaxColumnID, len(t.Columns)
		t.Columns = append(t.Columns, &c)
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
		case ast.ConstraintCheck:
			pending = append(pending, pendingExpr{kind: kindCheck, node: cons.Expr, name: cons.Name, notEnforced: !cons.Enforced})
		}
	}
	// Generated expressions and expression defaults are judged with every
	// column in place; the CHECKs again in the DDL (their names against
	// the schema's).
	if err := applyExprs(t, columnsOnly(pending), nil); err != nil {
		return err
	}
	if pk != nil {
		idx, err := buildIndex(t, "PRIMARY", true, pk)
		if err != nil {
			return err
		}
		idx.Primary = true
		for _, ic := range idx.Columns {
			c := t.Columns[ic.Offset]
			if c.IsGenerated() && !c.GeneratedStored {
				return errno.NewStd(mysql.ErrUnsupportedOnGeneratedColumn, "Defining a virtual generated column as primary key")
			}
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
	applyTableCollation(t, x)
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
	if x.TemporaryKeyword == ast.TemporaryLocal {
		// A temporary table's check names need only be unique within it
		// (MySQL keeps them out of the schema's dictionary).
		if err := applyExprs(t, checksOnly(pending), map[string]bool{}); err != nil {
			return err
		}
		return d.createTemporary(ctx, dbName, t, x.IfNotExists, autoIncStart)
	}
	exists := false
	defer func() {
		if exists {
			d.Notes = append(d.Notes, errno.NewStd(mysql.ErrTableExists, t.Name))
		}
	}()
	err = d.Catalog.DDL(ctx, func(m *catalog.Mutator) error {
		exists = false
		db := m.Schema().DB(dbName)
		if db == nil {
			return errno.NewStd(mysql.ErrBadDB, dbName)
		}
		if m.Schema().Table(dbName, t.Name) != nil {
			if x.IfNotExists {
				exists = true
				return nil
			}
			return errno.NewStd(mysql.ErrTableExists, t.Name)
		}
		nt := t.Clone()
		nt.Checks = nil
		if err := applyExprs(nt, checksOnly(pending), schemaCheckNames(m.Schema(), db.Name, nil)); err != nil {
			return err
		}
		id, err := m.GenID()
		if err != nil {
			return err
		}
		nt.ID = id
		if autoIncStart > 1 {
			if err := m.SetAutoIDMark(id, int64(min(autoIncStart, math.MaxInt64)-1)); err != nil {
				return err
			}
		}
		return m.PutTable(db, nt)
	})
	return err
}

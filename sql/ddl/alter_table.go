package ddl

import (
	"context"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/sql/catalog"
)

// alterTable runs ALTER TABLE. Specs that change only metadata (see
// inPlaceSpec) run together as one DDL: all or nothing, as MySQL. A spec
// that needs an online job (ADD/DROP INDEX or COLUMN) runs alone; mixed
// with others it is refused for now, since its job could not be undone
// with them.
func (d *DDL) alterTable(ctx context.Context, x *ast.AlterTableStmt) error {
	if len(x.Specs) == 0 {
		return nil // ALTER TABLE t: nothing to change
	}
	inPlace := 0
	for _, spec := range x.Specs {
		if inPlaceSpec(spec) {
			inPlace++
		}
	}
	if inPlace == len(x.Specs) && inPlace > 0 {
		return d.alterInPlace(ctx, x.Table, x.Specs)
	}
	// Several ADD COLUMN, or several DROP COLUMN, make one job.
	if allSpecs(x.Specs, ast.AlterTableAddColumns) {
		return d.addColumns(ctx, x.Table, x.Specs)
	}
	if allSpecs(x.Specs, ast.AlterTableDropColumn) {
		return d.dropColumns(ctx, x.Table, x.Specs)
	}
	if len(x.Specs) > 1 {
		return errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support ADD/DROP INDEX or COLUMN together with other alterations in one ALTER TABLE; run them one at a time")
	}
	spec := x.Specs[0]
	switch spec.Tp {
	case ast.AlterTableAddConstraint:
		c := spec.Constraint
		switch c.Tp {
		case ast.ConstraintKey, ast.ConstraintIndex:
			return d.createIndex(ctx, x.Table, c.Name, false, c.Keys, c.IfNotExists)
		case ast.ConstraintUniq, ast.ConstraintUniqKey, ast.ConstraintUniqIndex:
			return d.createIndex(ctx, x.Table, c.Name, true, c.Keys, c.IfNotExists)
		case ast.ConstraintCheck:
			return d.addCheck(ctx, x.Table, c)
		case ast.ConstraintPrimaryKey:
			if c.Option != nil && c.Option.PrimaryKeyTp == ast.PrimaryKeyTypeClustered {
				return errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support adding a clustered primary key to an existing table")
			}
			return d.addPrimaryKey(ctx, x.Table, c.Keys)
		}
		return errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support this ALTER TABLE constraint")
	case ast.AlterTableDropIndex:
		return d.dropIndex(ctx, x.Table, spec.Name, spec.IfExists)
	case ast.AlterTableDropPrimaryKey:
		return d.dropIndex(ctx, x.Table, "PRIMARY", false)
	case ast.AlterTableDropCheck:
		return d.dropCheck(ctx, x.Table, spec.Constraint.Name)
	case ast.AlterTableAlterCheck:
		return d.alterCheck(ctx, x.Table, spec.Constraint.Name, spec.Constraint.Enforced)
	}
	return errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support this ALTER TABLE operation")
}

func allSpecs(specs []*ast.AlterTableSpec, tp ast.AlterTableType) bool {
	for _, spec := range specs {
		if spec.Tp != tp {
			return false
		}
	}
	return len(specs) > 0
}

// inPlaceSpec reports whether spec changes only the table's metadata:
// every node may switch to it in one schema version.
func inPlaceSpec(spec *ast.AlterTableSpec) bool {
	switch spec.Tp {
	case ast.AlterTableModifyColumn, ast.AlterTableChangeColumn, ast.AlterTableRenameColumn,
		ast.AlterTableAlterColumn, ast.AlterTableRenameIndex, ast.AlterTableRenameTable:
		return true
	case ast.AlterTableOption:
		for _, o := range spec.Options {
			if o.Tp != ast.TableOptionComment && o.Tp != ast.TableOptionAutoIncrement && o.Tp != ast.TableOptionEngine {
				return false
			}
		}
		return true
	}
	return false
}

// alterInPlace applies in-place specs to a copy of the table in one DDL.
// A column turned NOT NULL or narrowed needs its rows checked first, with
// no misfit committing meanwhile: the first DDL then only marks those
// columns PreventNull / Pending (writers refuse NULL / what the new type
// would not hold), and once every node runs that version the rows are
// checked and a second DDL applies the specs (or takes the marks back
// and fails).
func (d *DDL) alterInPlace(ctx context.Context, tn *ast.TableName, specs []*ast.AlterTableSpec) error {
	// ENGINE: every table is stored alike, so InnoDB changes nothing (as
	// MySQL's rebuild shows nothing) and another engine is refused or
	// substituted as CREATE TABLE does; checked once, outside the DDL
	// (which may run again).
	for _, spec := range specs {
		if spec.Tp == ast.AlterTableOption {
			if err := d.checkStorageOptions(tn.Name.O, spec.Options); err != nil {
				return err
			}
		}
	}
	var tightened []int64
	var tableID int64
	apply := func(m *catalog.Mutator, checked bool) error {
		db, t, err := d.tableFor(m, tn)
		if err != nil {
			return err
		}
		if t.View != "" {
			return errno.New(mysql.ErrWrongObject, "'%s.%s' is not BASE TABLE", db.Name, t.Name)
		}
		tableID = t.ID
		nt := t.Clone()
		ed := &tableEdit{m: m, db: db, toDB: db, old: t, nt: nt, taken: map[int64]bool{}}
		for _, spec := range specs {
			if err := d.applyInPlace(ed, spec); err != nil {
				return err
			}
		}
		toDB, autoInc := ed.toDB, ed.autoInc
		tightened = tightened[:0]
		marked := t.Clone()
		for _, c := range nt.Columns {
			oc := t.ColumnByID(c.ID)
			notNull := c.Type.NotNull() && !oc.Type.NotNull()
			narrowed := c.Pending != nil
			if !notNull && !narrowed {
				c.PreventNull = false
				continue
			}
			if checked && (notNull && !oc.PreventNull || narrowed && (oc.Pending == nil || oc.Pending.Tp != c.Pending.Tp || oc.Pending.Flen != c.Pending.Flen)) {
				// Someone else's DDL took the mark away meanwhile.
				return catalog.ErrSchemaChanged
			}
			tightened = append(tightened, c.ID)
			mc := marked.ColumnByID(c.ID)
			mc.PreventNull, mc.Pending = notNull, c.Pending
			c.PreventNull, c.Pending = false, nil
		}
		if len(tightened) > 0 && !checked {
			return m.PutTable(db, marked)
		}
		if autoInc > 0 && autoInc > nt.AutoIncFloor {
			if err := m.RaiseAutoID(nt.ID, autoInc-1); err != nil {
				return err
			}
			nt.AutoIncFloor = autoInc
		}
		if toDB != db || !strings.EqualFold(nt.Name, t.Name) {
			return m.MoveTable(db, t, toDB, nt)
		}
		return m.PutTable(db, nt)
	}
	err := d.Catalog.DDL(ctx, func(m *catalog.Mutator) error { return apply(m, false) })
	if err != nil || len(tightened) == 0 {
		return err
	}
	ids := append([]int64(nil), tightened...)
	nullsErr := d.Catalog.WaitAllNodes(ctx)
	if nullsErr == nil {
		nullsErr = d.checkRows(ctx, tableID, ids)
	}
	if nullsErr == nil {
		nullsErr = d.Catalog.DDL(ctx, func(m *catalog.Mutator) error { return apply(m, true) })
		if nullsErr == nil {
			return nil
		}
	}
	d.unmarkColumns(ctx, tableID, ids, false)
	return nullsErr
}

// unmarkColumns takes back what a failed DDL did to columns ids of table
// tableID: their PreventNull marks, and with notNull the NOT NULL it
// gave them (best effort: a later ALTER of a column clears its mark too).
func (d *DDL) unmarkColumns(ctx context.Context, tableID int64, ids []int64, notNull bool) {
	_ = d.Catalog.DDL(context.WithoutCancel(ctx), func(m *catalog.Mutator) error {
		t := m.Schema().TableByID(tableID)
		if t == nil {
			return nil
		}
		if err := m.RequireNoJob(t); err != nil {
			return err
		}
		nt := t.Clone()
		for _, id := range ids {
			if c := nt.ColumnByID(id); c != nil {
				c.PreventNull, c.Pending = false, nil
				if notNull && !inPrimaryKey(nt, c) {
					c.Type.Flag &^= mysql.NotNullFlag | mysql.PriKeyFlag
				}
			}
		}
		return m.PutTable(m.Schema().DBByID(t.DBID), nt)
	})
}

// tableEdit is the state of an ALTER TABLE's in-place specs applied one
// by one to nt, a copy of old.
type tableEdit struct {
	m        *catalog.Mutator
	db, toDB *catalog.DBInfo // the table's database, the one it moves to
	old, nt  *catalog.TableInfo
	// taken: the columns a spec already changed. Specs name columns as
	// the table was before the statement, each at most once (MySQL).
	taken   map[int64]bool
	autoInc int64 // AUTO_INCREMENT = N, 0 if not given
}

// column finds the column a spec names (by its name before the
// statement) and returns its position in nt.
func (ed *tableEdit) column(name string) (int, error) {
	oc := ed.old.FindColumn(name)
	if oc == nil || ed.taken[oc.ID] {
		return 0, unknownColumn(name, ed.old)
	}
	ed.taken[oc.ID] = true
	for i, c := range ed.nt.Columns {
		if c.ID == oc.ID {
			return i, nil
		}
	}
	return 0, unknownColumn(name, ed.old)
}

// applyInPlace applies one in-place spec.
func (d *DDL) applyInPlace(ed *tableEdit, spec *ast.AlterTableSpec) error {
	nt := ed.nt
	switch spec.Tp {
	case ast.AlterTableModifyColumn, ast.AlterTableChangeColumn:
		def := spec.NewColumns[0]
		name := def.Name.Name.O
		if spec.Tp == ast.AlterTableChangeColumn {
			name = spec.OldColumnName.Name.O
		}
		at, err := ed.column(name)
		if err != nil {
			return err
		}
		return modifyColumn(nt, at, def, spec.Position)
	case ast.AlterTableRenameColumn:
		at, err := ed.column(spec.OldColumnName.Name.O)
		if err != nil {
			return err
		}
		return renameColumn(nt, at, spec.NewColumnName.Name.O)
	case ast.AlterTableAlterColumn:
		at, err := ed.column(spec.NewColumns[0].Name.Name.O)
		if err != nil {
			return err
		}
		return alterColumnDefault(nt, at, spec.NewColumns[0])
	case ast.AlterTableRenameIndex:
		return renameIndex(nt, spec.FromKey.O, spec.ToKey.O)
	case ast.AlterTableRenameTable:
		toDB, err := d.renameTarget(ed.m, ed.db, nt, spec.NewTable)
		if err != nil {
			return err
		}
		ed.toDB = toDB
		return nil
	case ast.AlterTableOption:
		for _, o := range spec.Options {
			switch o.Tp {
			case ast.TableOptionComment:
				nt.Comment = o.StrValue
			case ast.TableOptionAutoIncrement:
				ed.autoInc = int64(o.UintValue)
			}
		}
		return nil
	}
	return errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support this ALTER TABLE operation")
}

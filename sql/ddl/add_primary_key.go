package ddl

import (
	"context"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/sql/catalog"
)

// addPrimaryKey runs ALTER TABLE ... ADD PRIMARY KEY: a nonclustered
// primary key (the rows keep their hidden row ids as handles), built
// online like a UNIQUE index named PRIMARY. Its columns become NOT NULL,
// as in MySQL: nullable ones are first checked for NULLs the way MODIFY
// ... NOT NULL checks them (PreventNull, wait, scan: 1138), and given
// their nullability back when the index fails (a duplicate: 1062).
func (d *DDL) addPrimaryKey(ctx context.Context, tn *ast.TableName, parts []*ast.IndexPartSpecification) error {
	// Which columns are nullable, as this node sees the table; the job's
	// DDL checks again on the stored schema.
	var nullable []int64
	var tableID int64
	err := d.Catalog.DDL(ctx, func(m *catalog.Mutator) error {
		db, t, err := d.primaryKeyTable(m, tn)
		if err != nil {
			return err
		}
		tableID = t.ID
		nullable = nullable[:0]
		for _, p := range parts {
			c := t.FindColumn(p.Column.Name.O)
			if c == nil {
				return errno.NewStd(mysql.ErrKeyColumnDoesNotExits, p.Column.Name.O)
			}
			if !c.Type.NotNull() {
				nullable = append(nullable, c.ID)
			}
		}
		if len(nullable) == 0 {
			return nil
		}
		nt := t.Clone()
		for _, id := range nullable {
			nt.ColumnByID(id).PreventNull = true
		}
		return m.PutTable(db, nt)
	})
	if err != nil {
		return err
	}
	if len(nullable) > 0 {
		err = d.Catalog.WaitAllNodes(ctx)
		if err == nil {
			err = d.checkRows(ctx, tableID, nullable)
		}
		if err != nil {
			d.unmarkColumns(ctx, tableID, nullable, false)
			return err
		}
	}
	err = ddlJob(ctx, d.Catalog, backfillIndex, func(m *catalog.Mutator) (*catalog.SchemaJob, error) {
		db, t, err := d.primaryKeyTable(m, tn)
		if err != nil {
			return nil, err
		}
		nt := t.Clone()
		idx, err := buildIndex(nt, "PRIMARY", true, parts)
		if err != nil {
			return nil, err
		}
		idx.Primary, idx.State = true, catalog.StateDeleteOnly
		for _, ic := range idx.Columns {
			c := nt.Columns[ic.Offset]
			if !c.Type.NotNull() && !c.PreventNull {
				// Made nullable again since the check.
				return nil, catalog.ErrSchemaChanged
			}
			c.PreventNull = false
			c.Type.Flag |= mysql.NotNullFlag | mysql.PriKeyFlag
		}
		nt.Indices = append(nt.Indices, idx)
		return m.StartJob(db, nt, JobAddIndex, idx.ID)
	})
	if err != nil && len(nullable) > 0 {
		d.unmarkColumns(ctx, tableID, nullable, true)
	}
	return err
}

// primaryKeyTable finds the base table tn for ADD PRIMARY KEY: 1068 when
// it has one.
func (d *DDL) primaryKeyTable(m *catalog.Mutator, tn *ast.TableName) (*catalog.DBInfo, *catalog.TableInfo, error) {
	db, t, err := d.tableFor(m, tn)
	if err != nil {
		return nil, nil, err
	}
	if t.View != "" {
		return nil, nil, errno.New(mysql.ErrWrongObject, "'%s.%s' is not BASE TABLE", db.Name, t.Name)
	}
	if t.PrimaryIndex() != nil {
		return nil, nil, errno.NewStd(mysql.ErrMultiplePriKey)
	}
	return db, t, nil
}

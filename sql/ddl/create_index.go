package ddl

import (
	"context"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/sql/catalog"
)

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

// createIndex adds an index online (see job.go): it appears in
// delete-only state, goes write-only once every node knows it, is
// backfilled for the rows written before, and goes public.
func (d *DDL) createIndex(ctx context.Context, tn *ast.TableName, name string, unique bool, parts []*ast.IndexPartSpecification, ifNotExists bool) error {
	return ddlJob(ctx, d.Catalog, backfillIndex, func(m *catalog.Mutator) (*catalog.SchemaJob, error) {
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
		return m.StartJob(db, nt, JobAddIndex, idx.ID)
	})
}

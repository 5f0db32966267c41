package ddl

import (
	"context"
	"strings"
	"time"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/sql/catalog"
	"github.com/shoaldb/shoal/sql/executor"
	"github.com/shoaldb/shoal/sql/expression"
	"github.com/shoaldb/shoal/types"
)

// addColumns appends columns online: delete-only, write-only, then
// public (existing rows read them as their default: the row codec gives a
// column missing from a row its default, so no rows are rewritten).
// Each spec of specs adds its columns at its position (FIRST, AFTER c, or
// the end); all of them move through the states together.
func (d *DDL) addColumns(ctx context.Context, tn *ast.TableName, specs []*ast.AlterTableSpec) error {
	return ddlJob(ctx, d.Catalog, nil, func(m *catalog.Mutator) (*catalog.SchemaJob, error) {
		db, t, err := d.tableFor(m, tn)
		if err != nil {
			return nil, err
		}
		if t.View != "" {
			return nil, errno.New(mysql.ErrWrongObject, "'%s.%s' is not BASE TABLE", db.Name, t.Name)
		}
		nt := t.Clone()
		var ids []int64
		var pending []pendingExpr
		added := map[string]bool{}
		for _, spec := range specs {
			for _, cd := range spec.NewColumns {
				if nt.FindColumn(cd.Name.Name.O) != nil || added[strings.ToLower(cd.Name.Name.O)] {
					return nil, errno.NewStd(mysql.ErrDupFieldName, cd.Name.Name.O)
				}
				added[strings.ToLower(cd.Name.Name.O)] = true
				nt.MaxColumnID++
				c := &catalog.ColumnInfo{ID: nt.MaxColumnID, Name: cd.Name.Name.O, Type: columnFieldType(cd), State: catalog.StateDeleteOnly,
					Offset: len(nt.Columns)}
				if err := checkGeneratedOptions(c, cd); err != nil {
					return nil, err
				}
				for _, o := range cd.Options {
					switch o.Tp {
					case ast.ColumnOptionGenerated:
						// The table's rows lack it: readers compute it.
						c.GeneratedOnRead = true
						columnExprOption(c, o, &pending)
						continue
					case ast.ColumnOptionCheck:
						return nil, errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support adding a column with a CHECK constraint to an existing table; add the column, then the constraint")
					case ast.ColumnOptionDefaultValue:
						if isExprDefault(o.Expr) {
							return nil, errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support adding a column with an expression default to an existing table")
						}
					}
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
					case ast.ColumnOptionComment:
						if s, _, err := literalText(o.Expr); err == nil {
							c.Comment = s
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
				if c.Type.NotNull() && c.Default == nil && !c.IsGenerated() {
					def := executor.ZeroValue(c)
					s := def.String()
					c.Default = &s
				}
				if err := setOriginDefault(c, d.TimeZone); err != nil {
					return nil, err
				}
				nt.Columns = append(nt.Columns, c)
				ids = append(ids, c.ID)
				if pos := spec.Position; pos != nil && pos.Tp != ast.ColumnPositionNone {
					if err := moveColumn(nt, len(nt.Columns)-1, pos.Tp == ast.ColumnPositionFirst, positionAfter(pos)); err != nil {
						return nil, err
					}
				}
			}
		}
		if len(pending) > 0 {
			if err := applyExprs(nt, pending, nil); err != nil {
				return nil, err
			}
			if err := checkGeneratedRows(ctx, m.Txn(), t, nt, pending); err != nil {
				return nil, err
			}
		}
		return m.StartJob(db, nt, JobAddColumn, ids...)
	})
}

// setOriginDefault fixes the value the table's existing rows read for a
// column being added with DEFAULT CURRENT_TIMESTAMP: the time of the
// ALTER in zone, once, for every old row, in its stored form (a TIMESTAMP
// in UTC); a literal default needs nothing: rows read Default, which no
// statement changes yet.
func setOriginDefault(c *catalog.ColumnInfo, zone *types.TimeZone) error {
	if c.Default == nil || !executor.IsCurrentTimestamp(*c.Default) {
		return nil
	}
	ctx := &executor.Context{Eval: &expression.Context{StmtTime: time.Now(), TimeZone: zone}, StrictMode: true}
	d, err := executor.DefaultValue(ctx, c, 0)
	if err != nil {
		return errno.NewStd(mysql.ErrInvalidDefault, c.Name)
	}
	if d.IsNull() {
		return nil
	}
	d = executor.StoredValue(d, c, ctx.Eval.Zone())
	s := d.String()
	c.OriginDefault = &s
	return nil
}

package ddl

import (
	"context"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
)

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
			case ast.ConstraintCheck:
				err = d.addCheck(ctx, x.Table, c)
			default:
				err = errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support this ALTER TABLE constraint")
			}
		case ast.AlterTableDropCheck:
			err = d.dropCheck(ctx, x.Table, spec.Constraint.Name)
		case ast.AlterTableAlterCheck:
			err = d.alterCheck(ctx, x.Table, spec.Constraint.Name, spec.Constraint.Enforced)
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

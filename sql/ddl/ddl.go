package ddl

import (
	"context"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/sql/catalog"
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
	// TimeZone is the session's time zone: an added column's DEFAULT
	// CURRENT_TIMESTAMP gives existing rows the ALTER's time in it (nil:
	// UTC).
	TimeZone *types.TimeZone
	// Temp is the session's TEMPORARY tables (temporary.go); nil: the
	// caller has no session, and CREATE TEMPORARY TABLE is refused.
	Temp *catalog.TempTables
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
		if err := d.refuseTemporary(x.Table); err != nil {
			return err
		}
		return d.createIndex(ctx, x.Table, x.IndexName, x.KeyType == ast.IndexKeyTypeUnique, x.IndexPartSpecifications, x.IfNotExists)
	case *ast.DropIndexStmt:
		if err := d.refuseTemporary(x.Table); err != nil {
			return err
		}
		return d.dropIndex(ctx, x.Table, x.IndexName, x.IfExists)
	case *ast.TruncateTableStmt:
		return d.truncate(ctx, x.Table)
	case *ast.AlterTableStmt:
		if err := d.refuseTemporary(x.Table); err != nil {
			return err
		}
		return d.alterTable(ctx, x)
	case *ast.CreateViewStmt:
		return d.createView(ctx, x)
	}
	return errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support this DDL statement")
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

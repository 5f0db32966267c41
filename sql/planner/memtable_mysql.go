package planner

import (
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/sql/catalog"
	"github.com/shoaldb/shoal/types"
)

// The grant tables of the mysql schema are memtables too: their rows come
// from the accounts (sql/privilege) through executor.Context.PrivTableRows.
// Columns are MySQL 8's that tools read (not every one of MySQL's).

var userPrivColumns = []string{"Select_priv", "Insert_priv", "Update_priv", "Delete_priv", "Create_priv", "Drop_priv",
	"Reload_priv", "Shutdown_priv", "Process_priv", "File_priv", "Grant_priv", "References_priv", "Index_priv", "Alter_priv",
	"Show_db_priv", "Super_priv", "Create_tmp_table_priv", "Lock_tables_priv", "Execute_priv", "Repl_slave_priv",
	"Repl_client_priv", "Create_view_priv", "Show_view_priv", "Create_routine_priv", "Alter_routine_priv",
	"Create_user_priv", "Event_priv", "Trigger_priv", "Create_tablespace_priv"}

var dbPrivColumns = []string{"Select_priv", "Insert_priv", "Update_priv", "Delete_priv", "Create_priv", "Drop_priv",
	"Grant_priv", "References_priv", "Index_priv", "Alter_priv", "Create_tmp_table_priv", "Lock_tables_priv",
	"Create_view_priv", "Show_view_priv", "Create_routine_priv", "Alter_routine_priv", "Execute_priv", "Event_priv", "Trigger_priv"}

// MySQLPrivTableColumns lists the columns of each grant table.
var MySQLPrivTableColumns = map[string][]string{
	"user": append(append([]string{"Host", "User"}, userPrivColumns...), "ssl_type", "max_questions", "max_updates",
		"max_connections", "max_user_connections", "plugin", "authentication_string", "password_expired", "account_locked",
		"Create_role_priv", "Drop_role_priv"),
	"db":            append([]string{"Host", "Db", "User"}, dbPrivColumns...),
	"tables_priv":   {"Host", "Db", "User", "Table_name", "Grantor", "Table_priv", "Column_priv"},
	"columns_priv":  {"Host", "Db", "User", "Table_name", "Column_name", "Column_priv"},
	"role_edges":    {"FROM_HOST", "FROM_USER", "TO_HOST", "TO_USER", "WITH_ADMIN_OPTION"},
	"default_roles": {"HOST", "USER", "DEFAULT_ROLE_HOST", "DEFAULT_ROLE_USER"},
	"global_grants": {"USER", "HOST", "PRIV", "WITH_GRANT_OPTION"},
}

var mysqlMemTableIDs = map[string]int64{"user": -101, "db": -102, "tables_priv": -103, "columns_priv": -104,
	"role_edges": -105, "default_roles": -106, "global_grants": -107}

var intPrivColumns = map[string]bool{"max_questions": true, "max_updates": true, "max_connections": true, "max_user_connections": true}

func mysqlMemTable(name string) *catalog.TableInfo {
	cols, ok := MySQLPrivTableColumns[name]
	if !ok {
		return nil
	}
	t := &catalog.TableInfo{ID: mysqlMemTableIDs[name], Name: name}
	for i, c := range cols {
		ft := types.FieldType{Tp: mysql.TypeVarString, Flen: 255, Charset: "utf8mb4", Collate: "utf8mb4_bin"}
		if intPrivColumns[c] {
			ft = types.FieldType{Tp: mysql.TypeLonglong, Flen: 11, Flag: mysql.UnsignedFlag | mysql.NotNullFlag}
		}
		t.Columns = append(t.Columns, &catalog.ColumnInfo{ID: int64(i + 1), Name: c, Offset: i, Type: ft})
	}
	return t
}

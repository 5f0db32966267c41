package planner

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/sql/catalog"
	"github.com/shoaldb/shoal/types"
)

// information_schema tables are catalog tables with negative IDs whose rows
// the executor generates from the InfoSchema.

// MemTableColumns lists the columns of each information_schema table.
var MemTableColumns = map[string][]string{
	"schemata": {"CATALOG_NAME", "SCHEMA_NAME", "DEFAULT_CHARACTER_SET_NAME", "DEFAULT_COLLATION_NAME", "SQL_PATH"},
	"tables": {"TABLE_CATALOG", "TABLE_SCHEMA", "TABLE_NAME", "TABLE_TYPE", "ENGINE", "VERSION", "ROW_FORMAT",
		"TABLE_ROWS", "AUTO_INCREMENT", "TABLE_COLLATION", "CREATE_OPTIONS", "TABLE_COMMENT"},
	"columns": {"TABLE_CATALOG", "TABLE_SCHEMA", "TABLE_NAME", "COLUMN_NAME", "ORDINAL_POSITION", "COLUMN_DEFAULT",
		"IS_NULLABLE", "DATA_TYPE", "CHARACTER_MAXIMUM_LENGTH", "NUMERIC_PRECISION", "NUMERIC_SCALE",
		"CHARACTER_SET_NAME", "COLLATION_NAME", "COLUMN_TYPE", "COLUMN_KEY", "EXTRA", "COLUMN_COMMENT", "GENERATION_EXPRESSION"},
	"statistics": {"TABLE_CATALOG", "TABLE_SCHEMA", "TABLE_NAME", "NON_UNIQUE", "INDEX_SCHEMA", "INDEX_NAME",
		"SEQ_IN_INDEX", "COLUMN_NAME", "NULLABLE", "INDEX_TYPE"},
	"processlist":       {"ID", "USER", "HOST", "DB", "COMMAND", "TIME", "STATE", "INFO"},
	"check_constraints": {"CONSTRAINT_CATALOG", "CONSTRAINT_SCHEMA", "CONSTRAINT_NAME", "CHECK_CLAUSE"},
	"table_constraints": {"CONSTRAINT_CATALOG", "CONSTRAINT_SCHEMA", "CONSTRAINT_NAME", "TABLE_SCHEMA", "TABLE_NAME",
		"CONSTRAINT_TYPE", "ENFORCED"},
}

var memTableIDs = map[string]int64{"schemata": -1, "tables": -2, "columns": -3, "statistics": -4, "processlist": -5,
	"check_constraints": -6, "table_constraints": -7}

var intMemColumns = map[string]bool{"VERSION": true, "TABLE_ROWS": true, "AUTO_INCREMENT": true, "ORDINAL_POSITION": true,
	"CHARACTER_MAXIMUM_LENGTH": true, "NUMERIC_PRECISION": true, "NUMERIC_SCALE": true, "NON_UNIQUE": true, "SEQ_IN_INDEX": true,
	"ID": true, "TIME": true}

func memTable(name string) *catalog.TableInfo {
	cols, ok := MemTableColumns[name]
	if !ok {
		return nil
	}
	t := &catalog.TableInfo{ID: memTableIDs[name], Name: strings.ToUpper(name)}
	for i, c := range cols {
		ft := types.FieldType{Tp: mysql.TypeVarString, Flen: 64, Charset: "utf8mb4", Collate: "utf8mb4_general_ci"}
		if intMemColumns[c] {
			ft = types.FieldType{Tp: mysql.TypeLonglong, Flen: 21, Flag: mysql.UnsignedFlag}
			if c == "TIME" { // PROCESSLIST.TIME is a signed int in MySQL
				ft = types.FieldType{Tp: mysql.TypeLong, Flen: 7}
			}
		}
		t.Columns = append(t.Columns, &catalog.ColumnInfo{ID: int64(i + 1), Name: c, Offset: i, Type: ft})
	}
	return t
}

// IsMemTable reports whether t is an information_schema table.
func IsMemTable(t *catalog.TableInfo) bool { return t.ID < 0 }

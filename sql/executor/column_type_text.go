package executor

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/sql/catalog"
	"github.com/shoaldb/shoal/types"
)

// columnKey is COLUMN_KEY as MySQL shows it: PRI for every column of the
// primary key, else UNI or MUL for the first column of another key.
func columnKey(t *catalog.TableInfo, c *catalog.ColumnInfo) string {
	for _, idx := range t.PublicIndices() {
		if idx.Primary {
			for _, ic := range idx.Columns {
				if ic.Offset == c.Offset {
					return "PRI"
				}
			}
		}
	}
	for _, idx := range t.PublicIndices() {
		if len(idx.Columns) == 0 || idx.Columns[0].Offset != c.Offset {
			continue
		}
		switch {
		case idx.Primary:
			return "PRI"
		case idx.Unique && len(idx.Columns) == 1:
			return "UNI"
		default:
			return "MUL"
		}
	}
	return ""
}

// ColumnExtra is a column's EXTRA (information_schema.COLUMNS, SHOW
// COLUMNS) as MySQL 8 words it.
func ColumnExtra(c *catalog.ColumnInfo) string {
	switch {
	case c.AutoIncrement:
		return "auto_increment"
	case c.IsGenerated() && c.GeneratedStored:
		return "STORED GENERATED"
	case c.IsGenerated():
		return "VIRTUAL GENERATED"
	}
	var parts []string
	if c.DefaultIsExpr || c.Default != nil && *c.Default == "CURRENT_TIMESTAMP" {
		parts = append(parts, "DEFAULT_GENERATED")
	}
	if c.OnUpdate {
		parts = append(parts, "on update "+CurrentTimestampText(&c.Type))
	}
	return strings.Join(parts, " ")
}

// CurrentTimestampText is a CURRENT_TIMESTAMP default or ON UPDATE clause
// of a column as MySQL prints it: at the column's precision.
func CurrentTimestampText(ft *types.FieldType) string {
	if ft.Decimal > 0 {
		return fmt.Sprintf("CURRENT_TIMESTAMP(%d)", ft.Decimal)
	}
	return "CURRENT_TIMESTAMP"
}

// TypeName is the bare SQL type name of a column type (DATA_TYPE).
func TypeName(ft *types.FieldType) string {
	switch ft.Tp {
	case mysql.TypeTiny:
		return "tinyint"
	case mysql.TypeShort:
		return "smallint"
	case mysql.TypeInt24:
		return "mediumint"
	case mysql.TypeLong:
		return "int"
	case mysql.TypeLonglong:
		return "bigint"
	case mysql.TypeFloat:
		return "float"
	case mysql.TypeDouble:
		return "double"
	case mysql.TypeNewDecimal:
		return "decimal"
	case mysql.TypeVarchar, mysql.TypeVarString:
		if ft.IsBinary() {
			return "varbinary"
		}
		return "varchar"
	case mysql.TypeString:
		if ft.IsBinary() {
			return "binary"
		}
		return "char"
	case mysql.TypeTinyBlob:
		return textOrBlob(ft, "tiny")
	case mysql.TypeBlob:
		return textOrBlob(ft, "")
	case mysql.TypeMediumBlob:
		return textOrBlob(ft, "medium")
	case mysql.TypeLongBlob:
		return textOrBlob(ft, "long")
	case mysql.TypeDate:
		return "date"
	case mysql.TypeDatetime:
		return "datetime"
	case mysql.TypeTimestamp:
		return "timestamp"
	case mysql.TypeDuration:
		return "time"
	case mysql.TypeYear:
		return "year"
	case mysql.TypeBit:
		return "bit"
	case mysql.TypeEnum:
		return "enum"
	case mysql.TypeSet:
		return "set"
	case mysql.TypeJSON:
		return "json"
	}
	return "unknown"
}

func textOrBlob(ft *types.FieldType, size string) string {
	if ft.IsBinary() {
		return size + "blob"
	}
	return size + "text"
}

// ColumnTypeString is the full column type as SHOW CREATE TABLE prints it.
func ColumnTypeString(ft *types.FieldType) string {
	name := TypeName(ft)
	s := name
	switch ft.Tp {
	case mysql.TypeTiny, mysql.TypeShort, mysql.TypeInt24, mysql.TypeLong, mysql.TypeLonglong:
		if ft.Flen > 0 {
			s = fmt.Sprintf("%s(%d)", name, ft.Flen)
		}
		if ft.IsUnsigned() {
			s += " unsigned"
		}
	case mysql.TypeVarchar, mysql.TypeVarString, mysql.TypeString, mysql.TypeBit:
		s = fmt.Sprintf("%s(%d)", name, ft.Flen)
	case mysql.TypeNewDecimal:
		s = fmt.Sprintf("%s(%d,%d)", name, ft.Flen, max(ft.Decimal, 0))
	case mysql.TypeDouble, mysql.TypeFloat:
		if ft.Flen > 0 && ft.Decimal > 0 {
			s = fmt.Sprintf("%s(%d,%d)", name, ft.Flen, ft.Decimal)
		}
		if ft.IsUnsigned() {
			s += " unsigned"
		}
	case mysql.TypeTimestamp, mysql.TypeDatetime, mysql.TypeDuration:
		if ft.Decimal > 0 {
			s = fmt.Sprintf("%s(%d)", name, ft.Decimal)
		}
	case mysql.TypeEnum, mysql.TypeSet:
		quoted := make([]string, len(ft.Elems))
		for i, e := range ft.Elems {
			quoted[i] = QuoteString(e)
		}
		s = fmt.Sprintf("%s(%s)", name, strings.Join(quoted, ","))
	}
	return s
}

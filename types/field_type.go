package types

import "github.com/pingcap/tidb/pkg/parser/mysql"

// FieldType describes a column or expression type in MySQL's terms. The type
// codes and flags are MySQL's own (parser/mysql), so the protocol layer can
// send them unchanged in column definitions.
type FieldType struct {
	Tp      byte // mysql.TypeLong, mysql.TypeVarchar, ...
	Flag    uint // mysql.NotNullFlag, mysql.UnsignedFlag, ...
	Flen    int  // display width or maximum length in characters
	Decimal int  // fractional digits, where it applies
	Charset string
	Collate string
	Elems   []string // ENUM/SET members
}

// IsUnsigned reports whether the UNSIGNED flag is set.
func (ft *FieldType) IsUnsigned() bool { return ft.Flag&mysql.UnsignedFlag != 0 }

// NotNull reports whether the NOT NULL flag is set.
func (ft *FieldType) NotNull() bool { return ft.Flag&mysql.NotNullFlag != 0 }

// IsInteger reports whether the type is one of MySQL's integer types.
func (ft *FieldType) IsInteger() bool {
	switch ft.Tp {
	case mysql.TypeTiny, mysql.TypeShort, mysql.TypeInt24, mysql.TypeLong, mysql.TypeLonglong, mysql.TypeYear, mysql.TypeBit:
		return true
	}
	return false
}

// IsString reports whether values of the type are kept as strings.
func (ft *FieldType) IsString() bool {
	switch ft.Tp {
	case mysql.TypeVarchar, mysql.TypeVarString, mysql.TypeString, mysql.TypeBlob,
		mysql.TypeTinyBlob, mysql.TypeMediumBlob, mysql.TypeLongBlob, mysql.TypeEnum, mysql.TypeSet,
		mysql.TypeDate, mysql.TypeDatetime, mysql.TypeTimestamp, mysql.TypeDuration, mysql.TypeNewDecimal, mysql.TypeJSON:
		return true
	}
	return false
}

// IsBinary reports whether the type holds bytes rather than characters.
func (ft *FieldType) IsBinary() bool { return ft.Charset == "binary" }

// IsTime reports DATE, DATETIME and TIMESTAMP (KindTime values).
func (ft *FieldType) IsTime() bool {
	switch ft.Tp {
	case mysql.TypeDate, mysql.TypeNewDate, mysql.TypeDatetime, mysql.TypeTimestamp:
		return true
	}
	return false
}

// IsDecimal reports DECIMAL (KindDecimal values).
func (ft *FieldType) IsDecimal() bool { return ft.Tp == mysql.TypeNewDecimal }

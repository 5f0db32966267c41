package server

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/session"
	"github.com/shoaldb/shoal/types"
)

const binaryCollationID = 63

// appendColumnDef appends a ColumnDefinition41 payload for f.
func appendColumnDef(b []byte, f *session.Field) []byte {
	ft := &f.Type
	b = append(b, 3, 'd', 'e', 'f')
	b = appendLenEncString(b, f.DBName)
	b = appendLenEncString(b, f.Table)
	b = appendLenEncString(b, f.OrgTable)
	b = appendLenEncString(b, f.Name)
	b = appendLenEncString(b, f.OrgName)
	b = append(b, 0x0c)
	coll, maxLen := columnCollation(ft)
	b = appendUint16(b, coll)
	b = appendUint32(b, columnLength(ft, maxLen))
	tp := ft.Tp
	if tp == mysql.TypeVarchar {
		// MySQL never sends VARCHAR in result metadata; clients expect
		// VAR_STRING.
		tp = mysql.TypeVarString
	}
	b = append(b, tp)
	flag := uint16(ft.Flag)
	if coll == binaryCollationID {
		flag |= uint16(mysql.BinaryFlag)
	}
	if isBlobType(ft.Tp) {
		flag |= uint16(mysql.BlobFlag)
	}
	b = appendUint16(b, flag)
	b = append(b, columnDecimals(ft))
	return append(b, 0, 0)
}

// appendParamDef appends the definition of a '?' parameter of a prepared
// statement; MySQL describes them generically.
func appendParamDef(b []byte) []byte {
	b = append(b, 3, 'd', 'e', 'f', 0, 0, 0, 1, '?', 0, 0x0c)
	b = appendUint16(b, binaryCollationID)
	b = appendUint32(b, 0)
	b = append(b, mysql.TypeVarString)
	b = appendUint16(b, uint16(mysql.BinaryFlag))
	return append(b, 0, 0, 0)
}

func isBlobType(tp byte) bool {
	switch tp {
	case mysql.TypeTinyBlob, mysql.TypeBlob, mysql.TypeMediumBlob, mysql.TypeLongBlob:
		return true
	}
	return false
}

// hasCharset reports whether values of tp are character strings with a
// collation (as opposed to numbers, temporal values and the like, which
// MySQL labels binary).
func hasCharset(tp byte) bool {
	switch tp {
	case mysql.TypeVarchar, mysql.TypeVarString, mysql.TypeString, mysql.TypeTinyBlob,
		mysql.TypeBlob, mysql.TypeMediumBlob, mysql.TypeLongBlob, mysql.TypeEnum, mysql.TypeSet:
		return true
	}
	return false
}

// columnCollation returns the collation id sent for a column and the maximum
// bytes per character of its character set.
func columnCollation(ft *types.FieldType) (uint16, int) {
	if !hasCharset(ft.Tp) || ft.Charset == "binary" || ft.Collate == "binary" {
		return binaryCollationID, 1
	}
	switch ft.Collate {
	case "utf8mb4_bin":
		return 46, 4
	case "utf8mb4_general_ci":
		return 45, 4
	case "utf8mb4_0900_ai_ci":
		return 255, 4
	case "utf8mb4_unicode_ci":
		return 224, 4
	case "utf8_bin", "utf8mb3_bin":
		return 83, 3
	case "utf8_general_ci", "utf8mb3_general_ci":
		return 33, 3
	case "latin1_bin":
		return 47, 1
	case "latin1_swedish_ci":
		return 8, 1
	case "ascii_bin":
		return 65, 1
	case "":
		switch ft.Charset {
		case "", "utf8mb4":
			return defaultCollationID, 4
		default:
			id := mysql.CharsetNameToID(ft.Charset)
			if id == 0 {
				return defaultCollationID, 4
			}
			return uint16(id), charsetMaxLen(ft.Charset)
		}
	}
	// Other collations: the default collation of their character set.
	cs := ft.Collate
	if i := strings.IndexByte(cs, '_'); i > 0 {
		cs = cs[:i]
	}
	if id := mysql.CharsetNameToID(cs); id != 0 {
		return uint16(id), charsetMaxLen(cs)
	}
	return defaultCollationID, 4
}

func charsetMaxLen(cs string) int {
	switch cs {
	case "utf8mb4", "utf16", "utf32", "gb18030":
		return 4
	case "utf8", "utf8mb3", "ujis", "eucjpms":
		return 3
	case "ucs2", "big5", "gbk", "gb2312", "sjis", "cp932", "euckr", "utf16le":
		return 2
	}
	return 1
}

// defaultFlen is the display width MySQL reports for a type whose length
// is unspecified.
func defaultFlen(tp byte) int {
	switch tp {
	case mysql.TypeTiny:
		return 4
	case mysql.TypeShort:
		return 6
	case mysql.TypeInt24:
		return 9
	case mysql.TypeLong:
		return 11
	case mysql.TypeLonglong:
		return 20
	case mysql.TypeFloat:
		return 12
	case mysql.TypeDouble:
		return 22
	case mysql.TypeNewDecimal:
		return 11
	case mysql.TypeYear:
		return 4
	case mysql.TypeDate, mysql.TypeNewDate:
		return 10
	case mysql.TypeDuration:
		return 10
	case mysql.TypeDatetime, mysql.TypeTimestamp:
		return 19
	case mysql.TypeBit:
		return 1
	case mysql.TypeTinyBlob:
		return 255
	case mysql.TypeBlob:
		return 65535
	case mysql.TypeMediumBlob:
		return 1<<24 - 1
	case mysql.TypeLongBlob, mysql.TypeJSON, mysql.TypeGeometry:
		return 1<<32 - 1
	case mysql.TypeVarchar, mysql.TypeVarString, mysql.TypeString:
		return 255
	}
	return 0
}

// columnLength is the column length in bytes: the width in characters
// times the bytes per character for strings, capped at 2^32-1.
func columnLength(ft *types.FieldType, maxLen int) uint32 {
	flen := ft.Flen
	if flen <= 0 {
		flen = defaultFlen(ft.Tp)
		switch ft.Tp {
		case mysql.TypeDatetime, mysql.TypeTimestamp, mysql.TypeDuration:
			if ft.Decimal > 0 && ft.Decimal <= 6 {
				flen += 1 + ft.Decimal // fractional seconds
			}
		}
	}
	n := uint64(flen)
	if hasCharset(ft.Tp) {
		n *= uint64(maxLen)
	}
	if n > 1<<32-1 {
		n = 1<<32 - 1
	}
	return uint32(n)
}

func columnDecimals(ft *types.FieldType) byte {
	d := ft.Decimal
	switch {
	case d < 0:
		switch ft.Tp {
		case mysql.TypeFloat, mysql.TypeDouble, mysql.TypeNewDecimal:
			return 0x1f
		}
		return 0
	case d > 0x1f:
		return 0x1f
	}
	return byte(d)
}

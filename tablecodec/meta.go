package tablecodec

import (
	"fmt"

	"github.com/shoaldb/shoal/tablecodec/codec"
)

// Catalog (meta) keys live under the one-byte prefix 'm', which sorts apart
// from table data ('t'). IDs are 8-byte memcomparable ints, so iterating a
// prefix yields ascending IDs:
//
//	m "G:" name                 global scalar (schema version, ID counters, ...)
//	m "DB:" dbID                a database's definition
//	m "DB:" dbID "T:" tableID   a table's definition, contiguous per database
//
// What is stored under each key is the catalog's business.
const MetaPrefix byte = 'm'

var (
	metaGlobal = []byte("G:")
	metaDB     = []byte("DB:")
	metaTable  = []byte("T:")
)

// Well-known global meta names (use with AppendMetaGlobalKey).
const (
	MetaSchemaVersion = "SchemaVersion"
	MetaNextGlobalID  = "NextGlobalID"
)

// AppendMetaGlobalKey appends m "G:" name.
func AppendMetaGlobalKey(buf []byte, name string) []byte {
	buf = append(append(buf, MetaPrefix), metaGlobal...)
	return append(buf, name...)
}

// MetaDBPrefix returns m "DB:": the prefix of all database and table
// definitions.
func MetaDBPrefix() []byte { return append([]byte{MetaPrefix}, metaDB...) }

// AppendMetaDBKey appends m "DB:" dbID.
func AppendMetaDBKey(buf []byte, dbID int64) []byte {
	buf = append(append(buf, MetaPrefix), metaDB...)
	return codec.AppendInt(buf, dbID)
}

// AppendMetaTablePrefix appends m "DB:" dbID "T:": the prefix of a
// database's table definitions.
func AppendMetaTablePrefix(buf []byte, dbID int64) []byte {
	return append(AppendMetaDBKey(buf, dbID), metaTable...)
}

// AppendMetaTableKey appends m "DB:" dbID "T:" tableID.
func AppendMetaTableKey(buf []byte, dbID, tableID int64) []byte {
	return codec.AppendInt(AppendMetaTablePrefix(buf, dbID), tableID)
}

const (
	metaDBKeyLen    = 1 + 3 + 8
	metaTableKeyLen = metaDBKeyLen + 2 + 8
)

// DecodeMetaKey parses a database key (tableID = 0, isTable false) or a
// table key (isTable true).
func DecodeMetaKey(key []byte) (dbID, tableID int64, isTable bool, err error) {
	if len(key) < metaDBKeyLen || key[0] != MetaPrefix || string(key[1:4]) != string(metaDB) {
		return 0, 0, false, fmt.Errorf("tablecodec: %q is not a database meta key", key)
	}
	dbID, _, _ = codec.DecodeInt(key[4:])
	switch {
	case len(key) == metaDBKeyLen:
		return dbID, 0, false, nil
	case len(key) == metaTableKeyLen && string(key[metaDBKeyLen:metaDBKeyLen+2]) == string(metaTable):
		tableID, _, _ = codec.DecodeInt(key[metaDBKeyLen+2:])
		return dbID, tableID, true, nil
	}
	return 0, 0, false, fmt.Errorf("tablecodec: %q is not a database or table meta key", key)
}

package server

import (
	"testing"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/session"
	"github.com/shoaldb/shoal/types"
)

func TestColumnDef(t *testing.T) {
	cases := []struct {
		ft       types.FieldType
		coll     uint16
		length   uint32
		tp       byte
		flagMask uint16
		decimals byte
	}{
		{types.FieldType{Tp: mysql.TypeVarchar, Flen: 10, Charset: "utf8mb4", Collate: "utf8mb4_bin"}, 46, 40, mysql.TypeVarString, 0, 0},
		{types.FieldType{Tp: mysql.TypeString, Flen: 10, Charset: "utf8mb4", Collate: "utf8mb4_general_ci"}, 45, 40, mysql.TypeString, 0, 0},
		{types.FieldType{Tp: mysql.TypeVarchar, Flen: 10}, 46, 40, mysql.TypeVarString, 0, 0},
		{types.FieldType{Tp: mysql.TypeVarchar, Flen: 10, Charset: "latin1", Collate: "latin1_swedish_ci"}, 8, 10, mysql.TypeVarString, 0, 0},
		{types.FieldType{Tp: mysql.TypeVarchar, Flen: 10, Charset: "utf8mb4", Collate: "utf8mb4_0900_ai_ci"}, 255, 40, mysql.TypeVarString, 0, 0},
		{types.FieldType{Tp: mysql.TypeBlob, Charset: "binary", Collate: "binary"}, 63, 65535, mysql.TypeBlob, uint16(mysql.BinaryFlag | mysql.BlobFlag), 0},
		{types.FieldType{Tp: mysql.TypeBlob, Charset: "utf8mb4", Collate: "utf8mb4_bin"}, 46, 262140, mysql.TypeBlob, uint16(mysql.BlobFlag), 0},
		{types.FieldType{Tp: mysql.TypeLongBlob, Charset: "utf8mb4"}, 46, 1<<32 - 1, mysql.TypeLongBlob, 0, 0},
		{types.FieldType{Tp: mysql.TypeLong, Flag: mysql.NotNullFlag | mysql.UnsignedFlag}, 63, 11, mysql.TypeLong, uint16(mysql.BinaryFlag | mysql.NotNullFlag | mysql.UnsignedFlag), 0},
		{types.FieldType{Tp: mysql.TypeDouble, Decimal: -1}, 63, 22, mysql.TypeDouble, 0, 0x1f},
		{types.FieldType{Tp: mysql.TypeNewDecimal, Flen: 10, Decimal: 2}, 63, 10, mysql.TypeNewDecimal, 0, 2},
		{types.FieldType{Tp: mysql.TypeDatetime, Decimal: 3}, 63, 23, mysql.TypeDatetime, 0, 3},
	}
	for i, c := range cases {
		f := &session.Field{DBName: "db", Table: "t", OrgTable: "t", Name: "c", OrgName: "c", Type: c.ft}
		b := appendColumnDef(nil, f)
		r := newReader(b)
		for _, want := range []string{"def", "db", "t", "t", "c", "c"} {
			if got := string(r.lenEncBytes()); got != want {
				t.Fatalf("case %d: %q, want %q", i, got, want)
			}
		}
		if r.byte1() != 0x0c {
			t.Fatalf("case %d: fixed length", i)
		}
		coll, length, tp, flag, dec := r.uint16(), r.uint32(), r.byte1(), r.uint16(), r.byte1()
		if !r.ok || len(r.b) != 2 {
			t.Fatalf("case %d: bad layout", i)
		}
		if coll != c.coll || length != c.length || tp != c.tp || flag&c.flagMask != c.flagMask || dec != c.decimals {
			t.Errorf("case %d: coll %d len %d tp %d flag %#x dec %d", i, coll, length, tp, flag, dec)
		}
	}
}

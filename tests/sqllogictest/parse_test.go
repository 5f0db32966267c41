package sqllogictest

import (
	"database/sql"
	"strings"
	"testing"
)

const sample = `hash-threshold 8

# a comment
statement ok
CREATE TABLE t1(a INTEGER, b VARCHAR(8))

skipif mysql # not for us
statement ok
CREATE INDEX x ON t1(a) WHERE a > 0

onlyif mysql
statement error
SELECT * FROM nowhere

query IT rowsort label-1
SELECT a,
       b FROM t1
----
1
x
2
(empty)

query I nosort
SELECT a FROM t1
----
30 values hashing to 3c13dee48d9356ae19af2515e05e6b54

onlyif sqlite
halt

halt
`

func TestParse(t *testing.T) {
	recs, err := Parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 8 {
		t.Fatalf("got %d records", len(recs))
	}
	if recs[0].Kind != KindHashThreshold || recs[0].Threshold != 8 {
		t.Fatalf("rec0 %+v", recs[0])
	}
	if recs[1].Kind != KindStatement || recs[1].ExpectError || !strings.HasPrefix(recs[1].SQL, "CREATE TABLE") {
		t.Fatalf("rec1 %+v", recs[1])
	}
	if recs[2].Applies("mysql") || !recs[2].Applies("sqlite") {
		t.Fatalf("rec2 conditions %+v", recs[2])
	}
	if !recs[3].ExpectError || !recs[3].Applies("mysql") || recs[3].Applies("postgresql") {
		t.Fatalf("rec3 %+v", recs[3])
	}
	q := recs[4]
	if q.Kind != KindQuery || q.Types != "IT" || q.SortMode != "rowsort" || q.Label != "label-1" ||
		q.SQL != "SELECT a,\n       b FROM t1" || strings.Join(q.Expected, ",") != "1,x,2,(empty)" {
		t.Fatalf("rec4 %+v", q)
	}
	if !recs[5].IsHash || recs[5].HashCount != 30 || recs[5].Hash != "3c13dee48d9356ae19af2515e05e6b54" {
		t.Fatalf("rec5 %+v", recs[5])
	}
	if recs[6].Kind != KindHalt || recs[6].Applies("mysql") {
		t.Fatalf("rec6 %+v", recs[6])
	}
	if recs[7].Kind != KindHalt || !recs[7].Applies("mysql") {
		t.Fatalf("rec7 %+v", recs[7])
	}
}

func TestFormatValue(t *testing.T) {
	ns := func(s string) sql.NullString { return sql.NullString{String: s, Valid: true} }
	cases := []struct {
		t    byte
		v    sql.NullString
		want string
	}{
		{'I', sql.NullString{}, "NULL"},
		{'T', sql.NullString{}, "NULL"},
		{'I', ns("42"), "42"},
		{'I', ns("-7"), "-7"},
		{'I', ns("3.9"), "3"},
		{'I', ns("-3.9"), "-3"},
		{'I', ns("abc"), "0"},
		{'R', ns("1.5"), "1.500"},
		{'R', ns("-0.0001"), "-0.000"},
		{'R', ns("2"), "2.000"},
		{'R', ns("1e3"), "1000.000"},
		{'T', ns(""), "(empty)"},
		{'T', ns("a\tb"), "a@b"},
		{'T', ns("héllo"), "h@@llo"},
		{'T', ns("table tn7 row 51"), "table tn7 row 51"},
	}
	for _, c := range cases {
		if got := FormatValue(c.t, c.v); got != c.want {
			t.Errorf("FormatValue(%c, %q) = %q, want %q", c.t, c.v.String, got, c.want)
		}
	}
}

func TestHashAndSort(t *testing.T) {
	// md5("1\n2\n3\n")
	if got := HashValues([]string{"1", "2", "3"}); got != "c0710d6b4f15dfa88f600b0e6b624077" {
		t.Fatalf("hash %s", got)
	}
	rec := &Record{Types: "II", SortMode: "rowsort"}
	got := sortValues(rec, []string{"2", "1", "10", "5", "1", "9"})
	if strings.Join(got, ",") != "1,9,10,5,2,1" {
		t.Fatalf("rowsort %v", got)
	}
	rec.SortMode = "valuesort"
	got = sortValues(rec, []string{"2", "1", "10"})
	if strings.Join(got, ",") != "1,10,2" {
		t.Fatalf("valuesort %v", got)
	}
	ok, _, _ := compare(&Record{Types: "I", SortMode: "nosort", IsHash: true, HashCount: 3, Hash: "c0710d6b4f15dfa88f600b0e6b624077"}, []string{"1", "2", "3"}, 0)
	if !ok {
		t.Fatal("hash compare failed")
	}
}

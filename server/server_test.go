package server

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"math"
	"math/rand"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/types"
)

// logCapture records error-level log messages (recovered panics).
type logCapture struct {
	mu   sync.Mutex
	msgs []string
}

func (l *logCapture) Enabled(_ context.Context, lv slog.Level) bool { return lv >= slog.LevelError }
func (l *logCapture) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs = append(l.msgs, r.Message)
	return nil
}
func (l *logCapture) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logCapture) WithGroup(string) slog.Handler      { return l }
func (l *logCapture) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.msgs)
}

type testEnv struct {
	srv  *Server
	b    *fakeBackend
	addr string
	logs *logCapture
}

func startServer(tb testing.TB, cfg Config) *testEnv {
	tb.Helper()
	env := &testEnv{b: &fakeBackend{}, logs: &logCapture{}}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(env.logs)
	}
	env.srv = New(cfg, env.b)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	env.addr = ln.Addr().String()
	done := make(chan error, 1)
	go func() { done <- env.srv.Serve(ln) }()
	tb.Cleanup(func() {
		env.srv.Close()
		if err := <-done; !errors.Is(err, ErrServerClosed) {
			tb.Errorf("Serve: %v", err)
		}
	})
	return env
}

func (env *testEnv) open(tb testing.TB, userPass, db, params string) *sql.DB {
	tb.Helper()
	db1, err := sql.Open("mysql", userPass+"@tcp("+env.addr+")/"+db+"?"+params)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db1.Close() })
	return db1
}

func mysqlErr(t *testing.T, err error, code uint16, state string) *gomysql.MySQLError {
	t.Helper()
	var me *gomysql.MySQLError
	if !errors.As(err, &me) {
		t.Fatalf("want MySQL error %d, got %v", code, err)
	}
	if me.Number != code || string(me.SQLState[:]) != state {
		t.Fatalf("want %d (%s), got %d (%s): %s", code, state, me.Number, me.SQLState, me.Message)
	}
	return me
}

func TestTextQuery(t *testing.T) {
	env := startServer(t, Config{})
	db := env.open(t, "root", "", "")
	var v int
	if err := db.QueryRow("select 1").Scan(&v); err != nil || v != 1 {
		t.Fatalf("select 1: %v %d", err, v)
	}
	res, err := db.Exec("insert")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 3 {
		t.Fatalf("affected %d", n)
	}
	if id, _ := res.LastInsertId(); id != 42 {
		t.Fatalf("last insert id %d", id)
	}
	if err := db.Ping(); err != nil {
		t.Fatal(err)
	}
}

func checkTypesRow(t *testing.T, rows *sql.Rows) {
	t.Helper()
	defer rows.Close()
	cols, _ := rows.ColumnTypes()
	if len(cols) != len(typesCols) {
		t.Fatalf("%d columns", len(cols))
	}
	if !rows.Next() {
		t.Fatalf("no row: %v", rows.Err())
	}
	dest := make([]sql.NullString, len(typesCols))
	ptrs := make([]any, len(dest))
	for i := range dest {
		ptrs[i] = &dest[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		t.Fatal(err)
	}
	for i, c := range typesCols {
		got := dest[i].String
		if !dest[i].Valid {
			got = ""
		}
		if got != c.want || dest[i].Valid != (c.want != "") {
			t.Errorf("column %s: got %q (valid %v), want %q", c.f.Name, got, dest[i].Valid, c.want)
		}
		if cols[i].Name() != c.f.Name {
			t.Errorf("column %d name %q", i, cols[i].Name())
		}
	}
	if rows.Next() {
		t.Fatal("extra row")
	}
}

func TestTypesTextAndBinary(t *testing.T) {
	env := startServer(t, Config{})
	db := env.open(t, "root", "", "")
	rows, err := db.Query("select types")
	if err != nil {
		t.Fatal(err)
	}
	checkTypesRow(t, rows)

	st, err := db.Prepare("select types")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for range 2 {
		rows, err := st.Query()
		if err != nil {
			t.Fatal(err)
		}
		checkTypesRow(t, rows)
	}
	// Column metadata as the driver reports it.
	rows, err = db.Query("select types")
	if err != nil {
		t.Fatal(err)
	}
	cts, _ := rows.ColumnTypes()
	rows.Close()
	wantDB := map[string]string{"tiny": "TINYINT", "ushort": "UNSIGNED SMALLINT", "ubig": "UNSIGNED BIGINT",
		"str": "VARCHAR", "blob": "BLOB", "dt6": "DATETIME", "time": "TIME", "dec": "DECIMAL", "json": "JSON"}
	for _, ct := range cts {
		if w, ok := wantDB[ct.Name()]; ok && ct.DatabaseTypeName() != w {
			t.Errorf("%s: type %s, want %s", ct.Name(), ct.DatabaseTypeName(), w)
		}
	}
}

func TestPreparedParamsDriver(t *testing.T) {
	env := startServer(t, Config{})
	db := env.open(t, "root", "", "")
	db.SetMaxOpenConns(1)
	st, err := db.Prepare("select ?, ?, ?, ?, ?, ?, ?, ?")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var (
		i  int64
		u  uint64
		f  float64
		s  string
		bs []byte
		n  sql.NullString
		b  int64
		f2 float64
	)
	err = st.QueryRow(int64(-7), uint64(1<<63+5), 2.5, "héllo", []byte{1, 0, 2}, nil, true, float32(0.5)).
		Scan(&i, &u, &f, &s, &bs, &n, &b, &f2)
	if err != nil {
		t.Fatal(err)
	}
	if i != -7 || u != 1<<63+5 || f != 2.5 || s != "héllo" || string(bs) != "\x01\x00\x02" || n.Valid || b != 1 || f2 != 0.5 {
		t.Fatalf("echo: %v %v %v %q %q %v %v %v", i, u, f, s, bs, n, b, f2)
	}
	p := env.b.lastSession().params()
	want := []types.Datum{types.NewInt(-7), types.NewUint(1<<63 + 5), types.NewFloat(2.5), types.NewString("héllo"),
		types.NewString("\x01\x00\x02"), types.NewNull(), types.NewInt(1), types.NewFloat(0.5)}
	checkParams(t, p, want)

	res, err := db.Exec("insert ?, ?", 1, "x")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 2 {
		t.Fatalf("affected %d", n)
	}
	if _, err := db.Prepare("error ?"); err == nil {
		t.Fatal("prepare error expected")
	} else {
		mysqlErr(t, err, 1146, "42S02")
	}
}

func mustTime(t *testing.T, s string, tp byte, fsp int) types.Datum {
	d, err := types.ParseTime(s, tp, fsp)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func checkParams(t *testing.T, got, want []types.Datum) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d params, want %d: %v", len(got), len(want), got)
	}
	for i := range want {
		if got[i].Kind() != want[i].Kind() || got[i].String() != want[i].String() {
			t.Errorf("param %d: got %v (kind %d), want %v (kind %d)", i, got[i], got[i].Kind(), want[i], want[i].Kind())
		}
	}
}

// rawPrepare prepares sql on rc (classic EOF flow) and returns the id.
func rawPrepare(t *testing.T, rc *rawClient, sql string, wantParams int) uint32 {
	t.Helper()
	rc.command(append([]byte{mysql.ComStmtPrepare}, sql...))
	p := rc.mustRead()
	if p[0] != 0 {
		t.Fatalf("prepare: %q", p)
	}
	id := binary.LittleEndian.Uint32(p[1:])
	cols := int(binary.LittleEndian.Uint16(p[5:]))
	params := int(binary.LittleEndian.Uint16(p[7:]))
	if params != wantParams {
		t.Fatalf("%d params", params)
	}
	deprecate := rc.caps&mysql.ClientDeprecateEOF != 0
	for _, n := range []int{params, cols} {
		if n == 0 {
			continue
		}
		for range n {
			rc.mustRead()
		}
		if !deprecate {
			if p := rc.mustRead(); p[0] != 0xfe {
				t.Fatalf("want EOF, got %q", p)
			}
		}
	}
	return id
}

type rawParam struct {
	tp       byte
	unsigned bool
	null     bool
	long     bool
	val      []byte
}

func executePayload(id uint32, bound bool, ps []rawParam) []byte {
	b := []byte{mysql.ComStmtExecute}
	b = binary.LittleEndian.AppendUint32(b, id)
	b = append(b, 0)
	b = binary.LittleEndian.AppendUint32(b, 1)
	nulls := make([]byte, (len(ps)+7)/8)
	for i, p := range ps {
		if p.null {
			nulls[i/8] |= 1 << (i % 8)
		}
	}
	b = append(b, nulls...)
	if bound {
		b = append(b, 1)
		for _, p := range ps {
			fl := byte(0)
			if p.unsigned {
				fl = 0x80
			}
			b = append(b, p.tp, fl)
		}
	} else {
		b = append(b, 0)
	}
	for _, p := range ps {
		if !p.null && !p.long {
			b = append(b, p.val...)
		}
	}
	return b
}

func le16(v uint16) []byte { return binary.LittleEndian.AppendUint16(nil, v) }
func le32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
func le64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }
func lenenc(s string) []byte {
	return appendLenEncString(nil, s)
}

func TestPreparedParamsRaw(t *testing.T) {
	env := startServer(t, Config{})
	rc := dialRaw(t, env.addr)
	rc.login()
	ps := []rawParam{
		{tp: mysql.TypeTiny, val: []byte{0xff}},
		{tp: mysql.TypeTiny, unsigned: true, val: []byte{0xff}},
		{tp: mysql.TypeShort, val: le16(0x8000)},
		{tp: mysql.TypeYear, unsigned: true, val: le16(2024)},
		{tp: mysql.TypeInt24, val: le32(uint32(0xfffffffb))},
		{tp: mysql.TypeLong, unsigned: true, val: le32(0xffffffff)},
		{tp: mysql.TypeLonglong, val: le64(math.MaxUint64)},
		{tp: mysql.TypeLonglong, unsigned: true, val: le64(math.MaxUint64)},
		{tp: mysql.TypeFloat, val: le32(math.Float32bits(1.5))},
		{tp: mysql.TypeDouble, val: le64(math.Float64bits(-0.25))},
		{tp: mysql.TypeDate, val: []byte{4, 0xe8, 0x07, 2, 29}},
		{tp: mysql.TypeDatetime, val: append([]byte{11, 0xe8, 0x07, 2, 29, 13, 14, 15}, le32(123)...)},
		{tp: mysql.TypeTimestamp, val: []byte{7, 0xd1, 0x07, 2, 3, 4, 5, 6}},
		{tp: mysql.TypeDatetime, val: []byte{0}},
		{tp: mysql.TypeDuration, val: append([]byte{12, 1, 1, 0, 0, 0, 2, 3, 4}, le32(5)...)},
		{tp: mysql.TypeDuration, val: []byte{0}},
		{tp: mysql.TypeNewDecimal, val: lenenc("123.45")},
		{tp: mysql.TypeBlob, val: lenenc("\x00\x01")},
		{tp: mysql.TypeVarchar, val: lenenc("abc")},
		{tp: mysql.TypeLonglong, null: true},
		{tp: mysql.TypeNull},
		{tp: mysql.TypeEnum, val: lenenc("x")},
		{tp: mysql.TypeBlob, long: true},
		{tp: mysql.TypeDate, val: []byte{0}},
		{tp: mysql.TypeString, long: true},
		{tp: mysql.TypeVarString, val: lenenc(strings.Repeat("z", 300))},
	}
	want := []types.Datum{
		types.NewInt(-1), types.NewUint(255), types.NewInt(-32768), types.NewUint(2024), types.NewInt(-5),
		types.NewUint(4294967295), types.NewInt(-1), types.NewUint(math.MaxUint64), types.NewFloat(1.5),
		types.NewFloat(-0.25), mustTime(t, "2024-02-29", mysql.TypeDate, 0), mustTime(t, "2024-02-29 13:14:15.000123", mysql.TypeDatetime, 6),
		mustTime(t, "2001-02-03 04:05:06", mysql.TypeDatetime, 0), mustTime(t, "0000-00-00 00:00:00", mysql.TypeDatetime, 0),
		types.NewDuration(-(26*3600+3*60+4)*1000000-5, 6), types.NewDuration(0, 0), types.NewDecimalFromCoef(12345, 2),
		types.NewBytes([]byte("\x00\x01")), types.NewString("abc"), types.NewNull(), types.NewNull(),
		types.NewString("x"), types.NewBytes([]byte("hello world")), mustTime(t, "0000-00-00", mysql.TypeDate, 0),
		types.NewString(""), types.NewString(strings.Repeat("z", 300)),
	}
	sql := "select " + strings.TrimSuffix(strings.Repeat("?,", len(ps)), ",")
	id := rawPrepare(t, rc, sql, len(ps))

	for _, chunk := range []string{"hello ", "world"} {
		b := []byte{mysql.ComStmtSendLongData}
		b = binary.LittleEndian.AppendUint32(b, id)
		b = binary.LittleEndian.AppendUint16(b, 22)
		rc.command(append(b, chunk...))
	}
	b := []byte{mysql.ComStmtSendLongData}
	b = binary.LittleEndian.AppendUint32(b, id)
	b = binary.LittleEndian.AppendUint16(b, 24)
	rc.command(b) // empty long data

	rc.command(executePayload(id, true, ps))
	if n := rc.drainResult(); n < 4 {
		t.Fatalf("execute: %d packets", n)
	}
	checkParams(t, env.b.lastSession().params(), want)

	// Re-execute without new-params-bound: types come from the last
	// execution, long data was cleared.
	id2 := rawPrepare(t, rc, "select ?, ?", 2)
	ps2 := []rawParam{{tp: mysql.TypeLonglong, val: le64(5)}, {tp: mysql.TypeVarchar, val: lenenc("a")}}
	rc.command(executePayload(id2, true, ps2))
	rc.drainResult()
	ps2 = []rawParam{{tp: mysql.TypeLonglong, val: le64(6)}, {tp: mysql.TypeVarchar, null: true}}
	rc.command(executePayload(id2, false, ps2))
	rows, final := rc.readBinaryFinal()
	if rows != 1 || final[0] != 0xfe {
		t.Fatalf("re-execute: %d rows, %q", rows, final)
	}
	checkParams(t, env.b.lastSession().params(), []types.Datum{types.NewInt(6), types.NewNull()})

	// COM_STMT_RESET, COM_STMT_CLOSE, then executing the closed statement.
	rc.command(binary.LittleEndian.AppendUint32([]byte{mysql.ComStmtReset}, id2))
	if p := rc.mustRead(); p[0] != 0 {
		t.Fatalf("reset: %q", p)
	}
	rc.command(binary.LittleEndian.AppendUint32([]byte{mysql.ComStmtClose}, id2))
	rc.command(executePayload(id2, false, ps2))
	if p := rc.mustRead(); errCode(p) != mysql.ErrUnknownStmtHandler {
		t.Fatalf("closed stmt: %q", p)
	}
	rc.command(binary.LittleEndian.AppendUint32([]byte{mysql.ComStmtReset}, id2))
	if p := rc.mustRead(); errCode(p) != mysql.ErrUnknownStmtHandler {
		t.Fatalf("reset closed stmt: %q", p)
	}
	// Executing without ever binding types is malformed.
	id3 := rawPrepare(t, rc, "select ?", 1)
	rc.command(executePayload(id3, false, []rawParam{{tp: mysql.TypeLonglong, val: le64(1)}}))
	if p := rc.mustRead(); errCode(p) != mysql.ErrMalformedPacket {
		t.Fatalf("unbound types: %q", p)
	}
}

// readBinaryFinal reads a binary result set in the classic EOF flow and
// returns the number of rows and the final packet.
func (rc *rawClient) readBinaryFinal() (int, []byte) {
	first := rc.mustRead()
	if first[0] == 0 || first[0] == 0xff {
		return 0, append([]byte(nil), first...)
	}
	r := newReader(first)
	n, _ := r.lenEncInt()
	for range n {
		rc.mustRead()
	}
	rc.mustRead() // EOF
	rows := 0
	for {
		p := rc.mustRead()
		if p[0] != 0 {
			return rows, append([]byte(nil), p...)
		}
		rows++
	}
}

func TestMultiStatements(t *testing.T) {
	env := startServer(t, Config{})
	db := env.open(t, "root", "", "multiStatements=true")
	rows, err := db.Query("select 1; insert; select 2")
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for {
		for rows.Next() {
			var v int
			if err := rows.Scan(&v); err != nil {
				t.Fatal(err)
			}
			got = append(got, v)
		}
		if !rows.NextResultSet() {
			break
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	if len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Fatalf("got %v", got)
	}

	rows, err = db.Query("select 1; error; select 2")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
	}
	if rows.NextResultSet() {
		t.Fatal("result after error")
	}
	mysqlErr(t, rows.Err(), 1146, "42S02")
	rows.Close()
	// The connection is still usable.
	var v int
	if err := db.QueryRow("select 2").Scan(&v); err != nil || v != 2 {
		t.Fatal(err, v)
	}

	// Without CLIENT_MULTI_STATEMENTS a second statement is a syntax error,
	// a trailing ';' is not.
	db2 := env.open(t, "root", "", "")
	if _, err := db2.Exec("insert; insert"); err == nil {
		t.Fatal("multi statement accepted")
	} else {
		mysqlErr(t, err, 1064, "42000")
	}
	if err := db2.QueryRow("select 1 ;  ").Scan(&v); err != nil {
		t.Fatal(err)
	}

	// Raw client, classic EOF: SERVER_MORE_RESULTS_EXISTS on all but the last.
	rc := dialRaw(t, env.addr)
	rc.login()
	rc.command([]byte{mysql.ComSetOption, 0, 0})
	if p := rc.mustRead(); p[0] != 0xfe {
		t.Fatalf("set option: %q", p)
	}
	rc.command(append([]byte{mysql.ComQuery}, "select 1; insert; select 2"...)) //
	_, end := rc.readTextResult()
	if binary.LittleEndian.Uint16(end[3:])&mysql.ServerMoreResultsExists == 0 {
		t.Fatalf("first end packet %q lacks MORE_RESULTS", end)
	}
	ok := rc.mustRead()
	if ok[0] != 0 || ok[1] != 3 || ok[2] != 42 || binary.LittleEndian.Uint16(ok[3:])&mysql.ServerMoreResultsExists == 0 {
		t.Fatalf("insert OK %q", ok)
	}
	rows2, end := rc.readTextResult()
	if len(rows2) != 1 || rows2[0][0] != "2" || binary.LittleEndian.Uint16(end[3:])&mysql.ServerMoreResultsExists != 0 {
		t.Fatalf("last result %v %q", rows2, end)
	}
	rc.command([]byte{mysql.ComSetOption, 1, 0})
	rc.mustRead()
	rc.command(append([]byte{mysql.ComQuery}, "select 1; select 2"...))
	if p := rc.mustRead(); errCode(p) != mysql.ErrParse {
		t.Fatalf("multi after SET_OPTION off: %q", p)
	}
}

func TestSecondStatement(t *testing.T) {
	cases := []struct {
		sql  string
		want bool
	}{
		{"select 1", false},
		{"select 1;", false},
		{"select 1; ;  \n", false},
		{"select 1; -- c\n", false},
		{"select 1; # c", false},
		{"select 1; /* c */", false},
		{"select ';' from t", false},
		{`select "a;b", 'it''s;', 'x\';y' from t`, false},
		{"select `a;b` from t", false},
		{"select /* ; */ 1", false},
		{"select 1; select 2", true},
		{"select 1;select 2", true},
		{"select 'a'; 'b'", true},
		{"select 1 -- x ; y\n; drop", true},
	}
	for _, c := range cases {
		if _, got := secondStatement(c.sql, false); got != c.want {
			t.Errorf("%q: %v", c.sql, got)
		}
	}
	if _, got := secondStatement(`select 'a\'; select 1`, true); !got {
		t.Error("NO_BACKSLASH_ESCAPES: backslash must not escape")
	}
}

func TestLargeResultStreams(t *testing.T) {
	env := startServer(t, Config{})
	db := env.open(t, "root", "", "")
	db.SetMaxOpenConns(1)
	const n = 100000
	rows, err := db.Query("select rows 100000")
	if err != nil {
		t.Fatal(err)
	}
	count := 0
	for rows.Next() {
		var id int
		var name string
		if err := rows.Scan(&id, &name); err != nil {
			t.Fatal(err)
		}
		if id != count || name != "row-"+itoa(count) {
			t.Fatalf("row %d: %d %q", count, id, name)
		}
		count++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	if count != n {
		t.Fatalf("%d rows", count)
	}
	if b := env.b.lastSession().lastGen.batches; b < n/128 {
		t.Fatalf("only %d batches: result not streamed", b)
	}

	// An error while streaming ends the set with an ERR packet.
	rows, err = db.Query("select fail")
	if err != nil {
		t.Fatal(err)
	}
	count = 0
	for rows.Next() {
		count++
	}
	mysqlErr(t, rows.Err(), 1317, "70100")
	rows.Close()
	if count != 20 {
		t.Fatalf("%d rows before the error", count)
	}
	var v int
	if err := db.QueryRow("select 1").Scan(&v); err != nil {
		t.Fatal(err)
	}
}

func itoa(i int) string { return types.NewInt(int64(i)).String() }

func TestHugePackets(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	env := startServer(t, Config{})
	db := env.open(t, "root", "", "")
	db.SetMaxOpenConns(1)
	// Rows whose payload is > 16 MiB and exactly 16 MiB - 1 (which needs a
	// trailing empty packet).
	for _, n := range []int{17 << 20, maxPayload - 4} {
		var b []byte
		if err := db.QueryRow("select big " + itoa(n)).Scan(&b); err != nil {
			t.Fatal(n, err)
		}
		if len(b) != n || b[n-1] != 'a'+byte((n-1)%26) {
			t.Fatalf("big %d: got %d bytes", n, len(b))
		}
	}
	// Queries > 16 MiB and of exactly 16 MiB - 1 payload bytes.
	for _, n := range []int{17 << 20, maxPayload - 1} {
		q := "select len " + strings.Repeat("x", n-len("select len "))
		var l int
		if err := db.QueryRow(q).Scan(&l); err != nil {
			t.Fatal(err)
		}
		if l != n {
			t.Fatalf("len %d, want %d", l, n)
		}
	}
}

func TestErrors(t *testing.T) {
	env := startServer(t, Config{})
	db := env.open(t, "root", "", "")
	_, err := db.Exec("error")
	me := mysqlErr(t, err, 1146, "42S02")
	if me.Message != "Table 'test.t' doesn't exist" {
		t.Fatalf("message %q", me.Message)
	}
	_, err = db.Exec("plain error")
	if me := mysqlErr(t, err, 1105, "HY000"); me.Message != "boom" {
		t.Fatalf("message %q", me.Message)
	}

	rc := dialRaw(t, env.addr)
	rc.login()
	rc.command([]byte{mysql.ComBinlogDumpGtid, 1, 2, 3})
	p := rc.mustRead()
	if errCode(p) != mysql.ErrUnknownCom || string(p[3:9]) != "#08S01" {
		t.Fatalf("unknown command: %q", p)
	}
	rc.command([]byte{mysql.ComPing})
	if p := rc.mustRead(); p[0] != 0 {
		t.Fatalf("ping: %q", p)
	}

	// A panic in the session ends that connection only. It runs on a pool
	// of its own: the client reads the error packet and may reuse the
	// connection before the server's close reaches it, and this test is
	// about the other connection, which must keep working.
	_, err = env.open(t, "root", "", "").Exec("panic")
	if err == nil {
		t.Fatal("panic: no error")
	}
	if env.logs.count() != 1 {
		t.Fatalf("%d error logs", env.logs.count())
	}
	var v int
	if err := db.QueryRow("select 1").Scan(&v); err != nil {
		t.Fatal(err)
	}
}

func TestAuth(t *testing.T) {
	env := startServer(t, Config{})
	var v int
	if err := env.open(t, "alice:secret", "", "").QueryRow("select 1").Scan(&v); err != nil {
		t.Fatal(err)
	}
	err := env.open(t, "alice:wrong", "", "").Ping()
	me := mysqlErr(t, err, 1045, "28000")
	if me.Message != "Access denied for user 'alice'@'127.0.0.1' (using password: YES)" {
		t.Fatalf("message %q", me.Message)
	}
	err = env.open(t, "alice", "", "").Ping()
	if me := mysqlErr(t, err, 1045, "28000"); !strings.Contains(me.Message, "using password: NO") {
		t.Fatalf("message %q", me.Message)
	}
	mysqlErr(t, env.open(t, "bob:x", "", "").Ping(), 1045, "28000")
	mysqlErr(t, env.open(t, "root:x", "", "").Ping(), 1045, "28000")
	mysqlErr(t, env.open(t, "root", "nodb", "").Ping(), 1049, "42000")

	// CLIENT_CONNECT_WITH_DB.
	db := env.open(t, "alice:secret", "mydb", "")
	if err := db.Ping(); err != nil {
		t.Fatal(err)
	}
	if s := env.b.lastSession(); s.db != "mydb" || s.user != "alice" || s.connID == 0 {
		t.Fatalf("session %q %q %d", s.db, s.user, s.connID)
	}

	// A client that asks for caching_sha2_password is switched to
	// mysql_native_password.
	rc := dialRaw(t, env.addr)
	if p := rc.handshake("alice", "secret", "", mysql.AuthCachingSha2Password, rawCaps); p[0] != 0 {
		t.Fatalf("auth switch login: %q", p)
	}
	rc = dialRaw(t, env.addr)
	if p := rc.handshake("alice", "nope", "", mysql.AuthCachingSha2Password, rawCaps); errCode(p) != mysql.ErrAccessDenied {
		t.Fatalf("auth switch bad password: %q", p)
	}
	rc = dialRaw(t, env.addr)
	if p := rc.handshake("root", "", "", mysql.AuthCachingSha2Password, rawCaps); p[0] != 0 {
		t.Fatalf("auth switch empty password: %q", p)
	}
	// Without CLIENT_CONNECT_ATTRS or CLIENT_PLUGIN_AUTH_LENENC.
	rc = dialRaw(t, env.addr)
	if p := rc.handshake("alice", "secret", "", mysql.AuthNativePassword, mysql.ClientProtocol41|mysql.ClientSecureConnection); p[0] != 0 {
		t.Fatalf("minimal login: %q", p)
	}
}

func TestMiscCommands(t *testing.T) {
	env := startServer(t, Config{})
	rc := dialRaw(t, env.addr)
	rc.login()

	rc.command([]byte{mysql.ComQuery, 's', 'e', 'l', 'e', 'c', 't', ' ', '1'})
	rows, end := rc.readTextResult()
	if len(rows) != 1 || rows[0][0] != "1" || end[0] != 0xfe || len(end) != 5 {
		t.Fatalf("classic EOF select: %v %q", rows, end)
	}
	rc.command(append([]byte{mysql.ComInitDB}, "db2"...))
	if p := rc.mustRead(); p[0] != 0 {
		t.Fatalf("init db: %q", p)
	}
	if env.b.lastSession().db != "db2" {
		t.Fatal("db not switched")
	}
	rc.command(append([]byte{mysql.ComInitDB}, "nodb"...))
	if p := rc.mustRead(); errCode(p) != mysql.ErrBadDB {
		t.Fatalf("init bad db: %q", p)
	}
	rc.command(append([]byte{mysql.ComFieldList}, "t\x00"...))
	for i := 0; ; i++ {
		p := rc.mustRead()
		if p[0] == 0xfe {
			if i != 2 {
				t.Fatalf("%d fields", i)
			}
			break
		}
		if p[len(p)-1] != 0xfb {
			t.Fatalf("field list default: %q", p)
		}
	}
	rc.command(append([]byte{mysql.ComFieldList}, "nope\x00"...))
	if p := rc.mustRead(); errCode(p) != mysql.ErrNoSuchTable {
		t.Fatalf("field list: %q", p)
	}
	rc.command([]byte{mysql.ComStatistics})
	if p := rc.mustRead(); !strings.HasPrefix(string(p), "Uptime: ") {
		t.Fatalf("statistics: %q", p)
	}
	rc.command(append([]byte{mysql.ComQuery}, "begin"...))
	if p := rc.mustRead(); p[0] != 0 || binary.LittleEndian.Uint16(p[3:])&mysql.ServerStatusInTrans == 0 {
		t.Fatalf("begin: %q", p)
	}
	before := env.b.closed.Load()
	rc.command([]byte{mysql.ComResetConnection})
	if p := rc.mustRead(); p[0] != 0 || binary.LittleEndian.Uint16(p[3:])&mysql.ServerStatusInTrans != 0 {
		t.Fatalf("reset connection: %q", p)
	}
	if env.b.closed.Load() != before+1 || env.b.lastSession().db != "db2" {
		t.Fatal("reset connection did not replace the session")
	}
	rc.command([]byte{mysql.ComQuit})
	if _, err := rc.readPacket(); err == nil {
		t.Fatal("connection open after COM_QUIT")
	}
}

func changeUserPayload(salt []byte, user, pass, db, plugin string) []byte {
	b := []byte{mysql.ComChangeUser}
	b = append(b, user...)
	b = append(b, 0)
	var auth []byte
	if plugin == mysql.AuthNativePassword {
		auth = scrambleNativePassword(salt, pass)
	} else {
		auth = make([]byte, 32)
	}
	b = append(b, byte(len(auth)))
	b = append(b, auth...)
	b = append(b, db...)
	b = append(b, 0, 45, 0)
	b = append(b, plugin...)
	return append(b, 0)
}

func TestChangeUser(t *testing.T) {
	env := startServer(t, Config{})
	rc := dialRaw(t, env.addr)
	rc.login()
	rawPrepare(t, rc, "select ?", 1)
	rc.command(changeUserPayload(rc.salt, "alice", "secret", "x", mysql.AuthNativePassword))
	if p := rc.mustRead(); p[0] != 0 {
		t.Fatalf("change user: %q", p)
	}
	if s := env.b.lastSession(); s.user != "alice" || s.db != "x" {
		t.Fatalf("session %q %q", s.user, s.db)
	}
	// Statements of the old session are gone.
	rc.command(executePayload(1, true, []rawParam{{tp: mysql.TypeLonglong, val: le64(1)}}))
	if p := rc.mustRead(); errCode(p) != mysql.ErrUnknownStmtHandler {
		t.Fatalf("old statement: %q", p)
	}
	// Via an auth switch.
	rc.command(changeUserPayload(rc.salt, "root", "", "", mysql.AuthCachingSha2Password))
	p := rc.mustRead()
	if p[0] != 0xfe {
		t.Fatalf("want auth switch, got %q", p)
	}
	if err := rc.writePacket(nil); err != nil {
		t.Fatal(err)
	}
	if p := rc.mustRead(); p[0] != 0 {
		t.Fatalf("change user after switch: %q", p)
	}
	// A wrong password ends the connection.
	rc.command(changeUserPayload(rc.salt, "alice", "nope", "", mysql.AuthNativePassword))
	if last := expectClosed(t, rc); errCode(last) != mysql.ErrAccessDenied {
		t.Fatalf("bad change user: %q", last)
	}
}

// expectClosed reads until the server closes rc and returns the last packet
// it sent, if any.
func expectClosed(t *testing.T, rc *rawClient) []byte {
	t.Helper()
	_ = rc.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var last []byte
	for {
		p, err := rc.readLoose()
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatal("connection not closed")
			}
			return last
		}
		last = append(last[:0], p...)
	}
}

func TestMalformedPackets(t *testing.T) {
	env := startServer(t, Config{})
	rng := rand.New(rand.NewSource(1))

	// Broken handshakes.
	for i, raw := range [][]byte{
		{3, 0, 0, 1, 1, 2, 3},                            // 3-byte handshake response
		{5, 0, 0, 7, 0, 0, 0, 0, 0},                      // wrong sequence id
		{0xff, 0xff, 0xff, 1, 1, 2, 3},                   // length beyond the data, then EOF
		append([]byte{64, 0, 0, 1}, make([]byte, 64)...), // no PROTOCOL_41
	} {
		rc := dialRaw(t, env.addr)
		rc.mustRead() // greeting
		if _, err := rc.c.Write(raw); err != nil {
			t.Fatal(err)
		}
		if i == 2 {
			rc.c.(*net.TCPConn).CloseWrite()
		}
		last := expectClosed(t, rc)
		if i != 2 && (len(last) == 0 || last[0] != 0xff) {
			t.Fatalf("case %d: last packet %q", i, last)
		}
	}
	// Garbage right away.
	rc := dialRaw(t, env.addr)
	garbage := make([]byte, 1000)
	rng.Read(garbage)
	rc.c.Write(garbage)
	expectClosed(t, rc)

	// Broken commands after login.
	cases := [][]byte{
		{},
		{mysql.ComStmtExecute, 1, 0},
		{mysql.ComStmtSendLongData, 1},
		{mysql.ComSetOption},
		{mysql.ComStmtClose, 1},
		{mysql.ComStmtReset},
	}
	for i, cmd := range cases {
		rc := dialRaw(t, env.addr)
		rc.login()
		rc.command(cmd)
		if last := expectClosed(t, rc); errCode(last) != mysql.ErrMalformedPacket {
			t.Fatalf("case %d: last %q", i, last)
		}
	}
	// Truncated parameter blocks and absurd lengths.
	execCases := [][]byte{
		{0, 1, mysql.TypeLonglong},                                 // types cut short
		{0, 1, mysql.TypeLonglong, 0, mysql.TypeLonglong, 0, 1, 2}, // value cut short
		append([]byte{0, 1, mysql.TypeVarchar, 0, mysql.TypeVarchar, 0, 0xfe}, le64(1<<62)...),
		{0, 1, mysql.TypeVarchar, 0, mysql.TypeVarchar, 0, 0xff},
		{0, 1, 0x42, 0, 0x42, 0, 1, 2, 3}, // unknown type
		{0, 1, mysql.TypeDate, 0, mysql.TypeDate, 0, 200, 1},
	}
	for i, params := range execCases {
		rc := dialRaw(t, env.addr)
		rc.login()
		id := rawPrepare(t, rc, "select ?, ?", 2)
		b := []byte{mysql.ComStmtExecute}
		b = binary.LittleEndian.AppendUint32(b, id)
		b = append(b, 0, 1, 0, 0, 0)
		rc.command(append(b, params...))
		if last := expectClosed(t, rc); errCode(last) != mysql.ErrMalformedPacket {
			t.Fatalf("exec case %d: last %q", i, last)
		}
	}

	// Random command payloads must never panic the server.
	cmds := []byte{mysql.ComQuery, mysql.ComStmtExecute, mysql.ComStmtSendLongData, mysql.ComStmtClose,
		mysql.ComStmtReset, mysql.ComFieldList, mysql.ComSetOption, mysql.ComInitDB, mysql.ComStmtPrepare, 0x42}
	ping := []byte{0, 0, 0, 2, 0, 0, 0}
	for range 30 {
		rc := dialRaw(t, env.addr)
		rc.login()
		id := rawPrepare(t, rc, "select ?, ?, ?", 3)
	commands:
		for range 20 {
			b := make([]byte, 1+rng.Intn(40))
			rng.Read(b)
			b[0] = cmds[rng.Intn(len(cmds))]
			if b[0] >= mysql.ComStmtExecute && b[0] <= mysql.ComStmtReset && len(b) >= 5 && rng.Intn(2) == 0 {
				binary.LittleEndian.PutUint32(b[1:], id)
			}
			// The command, then a ping whose OK marks the end of its
			// response (which may be empty).
			rc.seq = 0
			if rc.writePacket(b) != nil {
				break
			}
			rc.seq = 0
			if rc.writePacket([]byte{mysql.ComPing}) != nil {
				break
			}
			for {
				p, err := rc.readLoose()
				if err != nil {
					break commands
				}
				if string(p) == string(ping) {
					break
				}
			}
		}
	}
	if n := env.logs.count(); n != 0 {
		t.Fatalf("%d panics logged: %v", n, env.logs.msgs)
	}

	// The server still works.
	var v int
	if err := env.open(t, "root", "", "").QueryRow("select 1").Scan(&v); err != nil {
		t.Fatal(err)
	}
}

func TestOversizedPacket(t *testing.T) {
	env := startServer(t, Config{MaxAllowedPacket: 1024})
	rc := dialRaw(t, env.addr)
	rc.login()
	q := append([]byte{mysql.ComQuery}, "select len "...)
	q = append(q, strings.Repeat("x", 1024)...)
	rc.command(q)
	last := expectClosed(t, rc)
	if errCode(last) != mysql.ErrNetPacketTooLarge || string(last[3:9]) != "#08S01" {
		t.Fatalf("last %q", last)
	}
	// Exactly at the limit is fine.
	db := env.open(t, "root", "", "")
	var l int
	q2 := "select len " + strings.Repeat("x", 1023-len("select len "))
	if err := db.QueryRow(q2).Scan(&l); err != nil || l != 1023 {
		t.Fatal(err, l)
	}
	_, err := db.Exec("select len " + strings.Repeat("x", 2000))
	mysqlErr(t, err, 1153, "08S01")
}

func TestServerClose(t *testing.T) {
	b := &fakeBackend{}
	s := New(Config{Addr: "127.0.0.1:0", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, b)
	done := make(chan error, 1)
	go func() { done <- s.ListenAndServe() }()
	for s.Addr() == nil {
		time.Sleep(time.Millisecond)
	}
	rc := dialRaw(t, s.Addr().String())
	rc.login()
	for s.ConnCount() != 1 {
		time.Sleep(time.Millisecond)
	}
	s.Close()
	if err := <-done; !errors.Is(err, ErrServerClosed) {
		t.Fatal(err)
	}
	if _, err := rc.readPacket(); err == nil {
		t.Fatal("connection survived Close")
	}
	if b.closed.Load() != 1 {
		t.Fatal("session not closed")
	}
	if _, err := net.Dial("tcp", s.Addr().String()); err == nil {
		t.Fatal("still accepting")
	}
}

func BenchmarkTextQuery(b *testing.B) {
	env := startServer(b, Config{})
	rc := dialRaw(b, env.addr)
	resp := rc.handshake("root", "", "", mysql.AuthNativePassword, rawCaps|mysql.ClientDeprecateEOF)
	if resp[0] != 0 {
		b.Fatal("login")
	}
	q := append([]byte{mysql.ComQuery}, "select point"...)
	_ = rc.c.SetDeadline(time.Time{})
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		rc.command(q)
		if rc.drainResult() != 4 {
			b.Fatal("bad response")
		}
	}
}

func BenchmarkPreparedPointSelect(b *testing.B) {
	env := startServer(b, Config{})
	rc := dialRaw(b, env.addr)
	resp := rc.handshake("root", "", "", mysql.AuthNativePassword, rawCaps|mysql.ClientDeprecateEOF)
	if resp[0] != 0 {
		b.Fatal("login")
	}
	rc.command(append([]byte{mysql.ComStmtPrepare}, "select point where id=?"...))
	p := rc.mustRead()
	id := binary.LittleEndian.Uint32(p[1:])
	rc.mustRead() // param
	rc.mustRead() // column
	q := executePayload(id, true, []rawParam{{tp: mysql.TypeLonglong, val: le64(42)}})
	_ = rc.c.SetDeadline(time.Time{})
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		rc.command(q)
		if rc.drainResult() != 4 {
			b.Fatal("bad response")
		}
	}
}

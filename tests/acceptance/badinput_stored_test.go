package acceptance

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/shoaldb/shoal/tests/testserver"
)

// Bad input is refused, never stored: values sent through the binary
// protocol meet the literal's checks, names follow MySQL's rules, SHOW
// CREATE output replayed by the mysql client recreates the object and runs
// nothing else, and BACKUP/RESTORE stay in the allowed directories.

// binaryDB opens a pool whose statements with arguments are server-side
// prepared (COM_STMT_EXECUTE), never interpolated by the driver.
func binaryDB(t *testing.T, s *testserver.Server, db string) *sql.DB {
	t.Helper()
	cfg, err := mysql.ParseDSN(s.DSN(db))
	if err != nil {
		t.Fatal(err)
	}
	cfg.InterpolateParams = false
	pool, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pool.Close() })
	return pool
}

// wantSQLErr checks err is the MySQL error code (and message part).
func wantSQLErr(t *testing.T, what string, err error, code uint16, msgPart string) {
	t.Helper()
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != code || !strings.Contains(me.Message, msgPart) {
		t.Errorf("%s: got %v, want error %d containing %q", what, err, code, msgPart)
	}
}

// rawPrepare prepares sql on a raw connection and returns its id, reading
// the parameter and column definitions that follow.
func (c *rawConn) rawPrepare(t *testing.T, sql string) uint32 {
	t.Helper()
	resp, err := c.command(append([]byte{0x16}, sql...))
	if err != nil || len(resp) < 12 || resp[0] != 0 {
		t.Fatalf("prepare %s: %x %v", sql, resp, err)
	}
	id := binary.LittleEndian.Uint32(resp[1:])
	cols, params := binary.LittleEndian.Uint16(resp[5:]), binary.LittleEndian.Uint16(resp[7:])
	for _, n := range []uint16{params, cols} {
		if n == 0 {
			continue
		}
		for i := 0; i <= int(n); i++ { // definitions, then EOF
			if _, err := c.readPacket(); err != nil {
				t.Fatal(err)
			}
		}
	}
	return id
}

// rawParam is one binary-protocol parameter: its type and encoded value.
type rawParam struct {
	tp    byte
	value []byte
}

func rawInt(v int64) rawParam {
	return rawParam{0x08, binary.LittleEndian.AppendUint64(nil, uint64(v))}
}

func rawTime(neg bool, days uint32, h, m, s byte) rawParam {
	v := []byte{8, 0, 0, 0, 0, 0, h, m, s}
	if neg {
		v[1] = 1
	}
	binary.LittleEndian.PutUint32(v[2:], days)
	return rawParam{0x0b, v}
}

func rawDatetime(year uint16, month, day, h, m, s byte) rawParam {
	return rawParam{0x0c, []byte{7, byte(year), byte(year >> 8), month, day, h, m, s}}
}

// rawExecute runs a prepared statement and returns the first response
// packet: an OK (0x00) or an ERR (0xff) packet.
func (c *rawConn) rawExecute(t *testing.T, id uint32, params ...rawParam) []byte {
	t.Helper()
	var p bytes.Buffer
	p.WriteByte(0x17)
	binary.Write(&p, binary.LittleEndian, id)
	p.WriteByte(0)                                   // no cursor
	binary.Write(&p, binary.LittleEndian, uint32(1)) // iteration count
	p.Write(make([]byte, (len(params)+7)/8))         // no NULLs
	p.WriteByte(1)                                   // types follow
	for _, rp := range params {
		p.Write([]byte{rp.tp, 0})
	}
	for _, rp := range params {
		p.Write(rp.value)
	}
	resp, err := c.command(p.Bytes())
	if err != nil {
		t.Fatalf("execute: %v", err)
	}
	return resp
}

// errPacket decodes an ERR packet: code, SQLSTATE, message.
func errPacket(resp []byte) (uint16, string, string, bool) {
	if len(resp) < 9 || resp[0] != 0xff || resp[3] != '#' {
		return 0, "", "", false
	}
	return binary.LittleEndian.Uint16(resp[1:]), string(resp[4:9]), string(resp[9:]), true
}

// Shoal only: MySQL 8 and MariaDB clip a binary TIME beyond 838:59:59
// silently and MariaDB stores a DATETIME of month 13 as a zero date; shoal
// gives these parameters the literal's checks instead (1292 when strict).
func TestBadInputBinaryParamsAreRefused(t *testing.T) {
	needShoal(t)
	s := startServer(t)
	db := binaryDB(t, s, "")
	mustExecCtx(t, db, time.Minute, "CREATE DATABASE IF NOT EXISTS test")
	mustExecCtx(t, db, time.Minute, "CREATE TABLE test.bad (id BIGINT PRIMARY KEY, t TIME, dt DATETIME, d DATE, ti TINYINT, dc DECIMAL(5,2))")

	c := dialRaw(t, s)
	defer c.nc.Close()
	if err := c.login(); err != nil {
		t.Fatal(err)
	}
	insTime := c.rawPrepare(t, "INSERT INTO test.bad (id, t) VALUES (?, ?)")
	insDatetime := c.rawPrepare(t, "INSERT INTO test.bad (id, dt) VALUES (?, ?)")
	for i, tc := range []struct {
		what  string
		param rawParam
		want  string // "" for OK, else the error message
	}{
		{"TIME of 100000 days", rawTime(false, 100000, 0, 0, 0), "Incorrect time value: '2400000:00:00' for column 't' at row 1"},
		{"TIME of -100000 days", rawTime(true, 100000, 0, 0, 0), "Incorrect time value: '-2400000:00:00' for column 't' at row 1"},
		{"TIME with minute 60", rawTime(false, 0, 1, 60, 0), "Incorrect time value: '01:60:00' for column 't' at row 1"},
		{"TIME 838:59:59", rawTime(false, 34, 22, 59, 59), ""},
		{"DATETIME month 13", rawDatetime(2024, 13, 1, 0, 0, 0), "Incorrect datetime value: '2024-13-01 00:00:00' for column 'dt' at row 1"},
		{"DATETIME day 32", rawDatetime(2024, 1, 32, 0, 0, 0), "Incorrect datetime value: '2024-01-32 00:00:00' for column 'dt' at row 1"},
		{"DATETIME Feb 30", rawDatetime(2024, 2, 30, 0, 0, 0), "Incorrect datetime value: '2024-02-30 00:00:00' for column 'dt' at row 1"},
		{"DATETIME hour 25", rawDatetime(2024, 1, 1, 25, 0, 0), "Incorrect datetime value: '2024-01-01 25:00:00' for column 'dt' at row 1"},
		{"DATETIME valid", rawDatetime(2024, 12, 31, 23, 59, 59), ""},
	} {
		id := insTime
		if tc.param.tp == 0x0c {
			id = insDatetime
		}
		resp := c.rawExecute(t, id, rawInt(int64(i+1)), tc.param)
		code, state, msg, isErr := errPacket(resp)
		switch {
		case tc.want == "" && isErr:
			t.Errorf("%s: refused: %d %s", tc.what, code, msg)
		case tc.want != "" && (!isErr || code != 1292 || state != "22007" || msg != tc.want):
			t.Errorf("%s: got %x (%d %s %q), want 1292 22007 %q", tc.what, resp, code, state, msg, tc.want)
		}
	}

	// Through go-sql-driver's binary protocol: integers, decimals and
	// dates as strings.
	_, err := db.Exec("INSERT INTO test.bad (id, ti) VALUES (?, ?)", 100, 300)
	wantSQLErr(t, "TINYINT 300", err, 1264, "Out of range value for column 'ti' at row 1")
	_, err = db.Exec("INSERT INTO test.bad (id, dc) VALUES (?, ?)", 101, "1000.00")
	wantSQLErr(t, "DECIMAL(5,2) 1000.00", err, 1264, "Out of range value for column 'dc' at row 1")
	_, err = db.Exec("INSERT INTO test.bad (id, d) VALUES (?, ?)", 102, "2024-04-31")
	wantSQLErr(t, "DATE 2024-04-31", err, 1292, "Incorrect date value: '2024-04-31' for column 'd' at row 1")
	_, err = db.Exec("UPDATE test.bad SET t = ? WHERE id = ?", "2400000:00:00", 4)
	wantSQLErr(t, "UPDATE TIME 2400000:00:00", err, 1292, "Incorrect time value")

	// Not strict: the TIME is clipped with a warning, like the literal.
	if resp, err := c.command(append([]byte{0x03}, "SET sql_mode = ''"...)); err != nil || resp[0] != 0 {
		t.Fatalf("SET sql_mode: %x %v", resp, err)
	}
	resp := c.rawExecute(t, insTime, rawInt(200), rawTime(false, 100000, 0, 0, 0))
	if len(resp) < 7 || resp[0] != 0 {
		t.Fatalf("non-strict TIME of 100000 days: %x", resp)
	}
	// OK packet: header, affected rows, insert id (1-byte lenenc each
	// here), status flags, then the warning count.
	if warnings := binary.LittleEndian.Uint16(resp[5:]); warnings != 1 {
		t.Errorf("non-strict TIME of 100000 days: %d warnings, want 1", warnings)
	}

	// The table reads back whole.
	rows, err := db.Query("SELECT id, COALESCE(CAST(t AS CHAR), ''), COALESCE(CAST(dt AS CHAR), '') FROM test.bad ORDER BY id")
	if err != nil {
		t.Fatalf("table unreadable after bad input: %v", err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var id int64
		var tm, dt string
		if err := rows.Scan(&id, &tm, &dt); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%d %s %s", id, tm, dt))
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("table unreadable after bad input: %v", err)
	}
	want := []string{"4 838:59:59 ", "9  2024-12-31 23:59:59", "200 838:59:59 "}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("rows: %q, want %q", got, want)
	}
	if _, err := db.Exec("ADMIN CHECK TABLE test.bad"); err != nil {
		t.Errorf("ADMIN CHECK TABLE: %v", err)
	}
}

// Shoal only: MariaDB answers 1102/1103 for over-long database and table
// names where MySQL 8 answers 1059, and allows longer aliases.
func TestBadInputIdentifiers(t *testing.T) {
	needShoal(t)
	s := startServer(t)
	mustExecCtx(t, binaryDB(t, s, ""), time.Minute, "CREATE DATABASE idents")
	db := binaryDB(t, s, "idents")
	long := strings.Repeat("n", 65)
	for _, tc := range []struct {
		sql  string
		code uint16
		msg  string
	}{
		{"CREATE DATABASE " + long, 1059, "Identifier name '" + long + "' is too long"},
		{"CREATE DATABASE ``", 1102, "Incorrect database name ''"},
		{"CREATE DATABASE `d `", 1102, "Incorrect database name 'd '"},
		{"CREATE TABLE " + long + " (id INT)", 1059, "Identifier name '" + long + "' is too long"},
		{"CREATE TABLE `` (id INT)", 1103, "Incorrect table name ''"},
		{"CREATE TABLE `t ` (id INT)", 1103, "Incorrect table name 't '"},
		{"CREATE TABLE t (" + long + " INT)", 1059, "Identifier name '" + long + "' is too long"},
		{"CREATE TABLE t (`` INT)", 1166, "Incorrect column name ''"},
		{"CREATE TABLE t (`c ` INT)", 1166, "Incorrect column name 'c '"},
		{"CREATE TABLE t (c INT, KEY " + long + " (c))", 1059, "Identifier name '" + long + "' is too long"},
		{"CREATE VIEW " + long + " AS SELECT 1", 1059, "Identifier name '" + long + "' is too long"},
		{"SELECT 1 AS " + strings.Repeat("a", 257), 1059, "is too long"},
	} {
		_, err := db.Exec(tc.sql)
		wantSQLErr(t, tc.sql, err, tc.code, tc.msg)
	}
	mustExecCtx(t, db, time.Minute, "CREATE TABLE "+strings.Repeat("n", 64)+" ("+strings.Repeat("c", 64)+" INT)")
	var alias string
	if err := db.QueryRow("SELECT 1 AS " + strings.Repeat("a", 256)).Scan(&alias); err != nil {
		t.Errorf("a 256-character alias: %v", err)
	}
}

// showCreate returns the second column of a SHOW CREATE statement.
func showCreate(t *testing.T, db *sql.DB, q string) string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	vals := make([]sql.RawBytes, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if !rows.Next() {
		t.Fatalf("%s: no row (%v)", q, rows.Err())
	}
	if err := rows.Scan(ptrs...); err != nil {
		t.Fatal(err)
	}
	return string(vals[1])
}

// Shoal only: the text compared is shoal's (MariaDB's SHOW CREATE VIEW
// names a definer its replay cannot resolve here).
func TestShowCreateReplaysThroughMySQLClient(t *testing.T) {
	needShoal(t)
	bin := requireTool(t, "mysql")
	s := startServer(t)
	db := binaryDB(t, s, "")
	for _, q := range []string{
		"CREATE DATABASE src", "CREATE DATABASE dst",
		"CREATE TABLE dst.t (id INT PRIMARY KEY)",
		"CREATE TABLE src.`a``b` (`x`` INT); DROP TABLE t; --` VARCHAR(30) DEFAULT 'q''\\\\''; DROP TABLE t; -- ' " +
			"COMMENT 'c\\'); DROP TABLE t; --\\n', `select` INT PRIMARY KEY, `1` ENUM('it''s', 'b\\\\s'), " +
			"KEY `k``); DROP TABLE t; --` (`x`` INT); DROP TABLE t; --`(5))) COMMENT 'tab''le\\\\'",
		"CREATE VIEW src.`v``); DROP TABLE t; --` AS SELECT `select` AS `s``q`, 'x''\\\\y' AS lit FROM src.`a``b`",
	} {
		mustExecCtx(t, db, time.Minute, q)
	}
	table := showCreate(t, db, "SHOW CREATE TABLE src.`a``b`")
	view := showCreate(t, db, "SHOW CREATE VIEW src.`v``); DROP TABLE t; --`")
	// The view refers to its table without a database: it is replayed in dst.
	view = strings.ReplaceAll(view, "`src`.", "")
	database := showCreate(t, db, "SHOW CREATE DATABASE src")

	replay := func(script string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, "--no-defaults", "-h", "127.0.0.1", "-P", strconv.Itoa(s.Port), "-u", "root", "--protocol=TCP", "--batch")
		cmd.Stdin = strings.NewReader(script)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("mysql client replaying:\n%s\n%v\n%s", script, err, out)
		}
	}
	replay("USE dst;\n" + table + ";\n" + view + ";\n")
	if got := showCreate(t, db, "SHOW CREATE TABLE dst.`a``b`"); got != table {
		t.Errorf("replayed table:\n%s\nwant\n%s", got, table)
	}
	if got := showCreate(t, db, "SHOW CREATE VIEW dst.`v``); DROP TABLE t; --`"); got != view {
		t.Errorf("replayed view:\n%s\nwant\n%s", got, view)
	}
	mustExecCtx(t, db, time.Minute, "INSERT INTO dst.`a``b` (`select`) VALUES (1)")
	var lit, def string
	if err := db.QueryRow("SELECT lit, (SELECT `x`` INT); DROP TABLE t; --` FROM dst.`a``b`) FROM dst.`v``); DROP TABLE t; --`").Scan(&lit, &def); err != nil {
		t.Fatal(err)
	}
	if lit != `x'\y` || def != `q'\'; DROP TABLE t; -- ` {
		t.Errorf("literal %q, default %q", lit, def)
	}
	mustExecCtx(t, db, time.Minute, "DROP DATABASE src")
	replay(database + ";\n")
	if got := showCreate(t, db, "SHOW CREATE DATABASE src"); got != database {
		t.Errorf("replayed database:\n%s\nwant\n%s", got, database)
	}
	// Nothing else ran: dst.t is still there.
	if _, err := db.Exec("SELECT * FROM dst.t"); err != nil {
		t.Errorf("dst.t after the replays: %v", err)
	}
}

func TestBackupDestinationsMustBeAllowed(t *testing.T) {
	needShoal(t)
	allowed := t.TempDir()
	outside := t.TempDir()
	s := startServer(t, "--backup-dirs", allowed)
	db := binaryDB(t, s, "")
	mustExecCtx(t, db, time.Minute, "CREATE DATABASE bd")
	mustExecCtx(t, db, time.Minute, "CREATE TABLE bd.t (id INT PRIMARY KEY)")
	if err := os.Symlink(outside, filepath.Join(allowed, "link-out")); err != nil {
		t.Fatal(err)
	}
	for _, dest := range []string{
		filepath.Join(outside, "b"),
		allowed + "/../" + filepath.Base(outside) + "/b",
		filepath.Join(allowed, "link-out", "b"),
		"/",
	} {
		_, err := db.Exec("BACKUP DATABASE bd TO 'local://" + dest + "'")
		wantSQLErr(t, "BACKUP to "+dest, err, 8124, "not in an allowed backup directory (allowed: "+allowed+")")
		_, err = db.Exec("RESTORE DATABASE bd FROM 'local://" + dest + "'")
		wantSQLErr(t, "RESTORE from "+dest, err, 8125, "not in an allowed backup directory")
	}
	if entries, err := os.ReadDir(outside); err != nil || len(entries) != 0 {
		t.Errorf("refused backups wrote outside the allowed directory: %v %v", entries, err)
	}
	mustExecCtx(t, db, 2*time.Minute, "BACKUP DATABASE bd TO 'local://"+filepath.Join(allowed, "ok")+"'")
	mustExecCtx(t, db, time.Minute, "DROP DATABASE bd")
	mustExecCtx(t, db, 2*time.Minute, "RESTORE DATABASE bd FROM 'local://"+filepath.Join(allowed, "ok")+"'")
	mustExecCtx(t, db, time.Minute, "SELECT * FROM bd.t")
}

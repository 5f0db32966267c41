package server

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/session"
	"github.com/shoaldb/shoal/sql/privilege"
	"github.com/shoaldb/shoal/types"
)

// fakeBackend serves canned answers; it knows users root (no password) and
// alice (password "secret").
type fakeBackend struct {
	mu       sync.Mutex
	sessions []*fakeSession
	closed   atomic.Int64
}

// carolHash is carol's caching_sha2_password hash of "sha2pw" (made once:
// the crypt takes 5000 rounds).
var carolHash = privilege.HashPassword(mysql.AuthCachingSha2Password, "sha2pw")

func (b *fakeBackend) LookupAccount(user, host string) (session.LoginAccount, bool) {
	switch user {
	case "root":
		return session.LoginAccount{User: "root", Host: "%", Plugin: mysql.AuthNativePassword}, true
	case "alice":
		return session.LoginAccount{User: "alice", Host: "%", Plugin: mysql.AuthNativePassword,
			AuthString: privilege.HashPassword(mysql.AuthNativePassword, "secret")}, true
	case "carol": // caching_sha2_password
		return session.LoginAccount{User: "carol", Host: "%", Plugin: mysql.AuthCachingSha2Password, AuthString: carolHash}, true
	case "locked":
		return session.LoginAccount{User: "locked", Host: "%", Plugin: mysql.AuthNativePassword,
			AuthString: privilege.HashPassword(mysql.AuthNativePassword, "pw"), Locked: true}, true
	}
	return session.LoginAccount{}, false
}

func (b *fakeBackend) NewSession(ctx context.Context, user, host, db string) (Session, error) {
	if db == "nodb" {
		return nil, errno.NewStd(mysql.ErrBadDB, db)
	}
	s := &fakeSession{b: b, user: user, db: db, status: mysql.ServerStatusAutocommit, stmts: map[uint32]string{},
		transport: session.TransportOf(ctx)}
	s.pointFields = []*session.Field{{Table: "sbtest1", Name: "c", OrgName: "c", Type: types.FieldType{Tp: mysql.TypeString, Flen: 120, Charset: "utf8mb4", Collate: "utf8mb4_bin", Flag: mysql.NotNullFlag}}}
	s.pointRow = []types.Row{{types.NewString(strings.Repeat("12345678901-", 10))}}
	s.pointRS = &sliceRS{fields: s.pointFields}
	s.pointRes = []session.ResultSet{s.pointRS}
	b.mu.Lock()
	b.sessions = append(b.sessions, s)
	b.mu.Unlock()
	return s, nil
}

func (b *fakeBackend) lastSession() *fakeSession {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sessions[len(b.sessions)-1]
}

type fakeSession struct {
	b         *fakeBackend
	user, db  string
	connID    uint64
	transport session.Transport // as the protocol layer passed it

	affected, lastID uint64
	warnings         uint16
	status           uint16

	stmts    map[uint32]string
	nextStmt uint32

	mu         sync.Mutex
	lastParams []types.Datum

	lastGen  *genRS
	outcomes []outcome

	pointFields []*session.Field
	pointRow    []types.Row
	pointRS     *sliceRS
	pointRes    []session.ResultSet
}

// sliceRS returns canned rows, at most cap(*rows) per batch.
type sliceRS struct {
	fields []*session.Field
	rows   []types.Row
	pos    int
	closed bool
}

func (r *sliceRS) Fields() []*session.Field { return r.fields }
func (r *sliceRS) Next(ctx context.Context, rows *[]types.Row) error {
	*rows = (*rows)[:0]
	n := max(cap(*rows), 1)
	for r.pos < len(r.rows) && len(*rows) < n {
		*rows = append(*rows, r.rows[r.pos])
		r.pos++
	}
	return nil
}
func (r *sliceRS) Close() error { r.closed = true; return nil }

// genRS generates n rows lazily: (i, "row-i"), reusing its row buffers.
type genRS struct {
	fields  []*session.Field
	n, i    int
	failAt  int // if > 0, Next fails once i reaches it
	batches int
	buf     []types.Datum
	text    []byte
}

func (r *genRS) Fields() []*session.Field { return r.fields }
func (r *genRS) Next(ctx context.Context, rows *[]types.Row) error {
	*rows = (*rows)[:0]
	if r.failAt > 0 && r.i >= r.failAt {
		return errno.New(mysql.ErrQueryInterrupted, "Query execution was interrupted")
	}
	n := max(cap(*rows), 16)
	if cap(r.text) < 24*n {
		r.text = make([]byte, 0, 24*n)
	}
	if cap(r.buf) < 2*n {
		r.buf = make([]types.Datum, 0, 2*n)
	}
	r.buf = r.buf[:0]
	r.text = r.text[:0]
	for r.i < r.n && len(*rows) < n && (r.failAt == 0 || r.i < r.failAt) {
		start := len(r.text)
		r.text = append(r.text, "row-"...)
		r.text = strconv.AppendInt(r.text, int64(r.i), 10)
		r.buf = append(r.buf, types.NewInt(int64(r.i)), types.NewStringBytes(r.text[start:]))
		*rows = append(*rows, r.buf[len(r.buf)-2:])
		r.i++
	}
	if len(*rows) > 0 {
		r.batches++
	}
	return nil
}
func (r *genRS) Close() error { return nil }

func intField(name string) *session.Field {
	return &session.Field{Name: name, OrgName: name, Type: types.FieldType{Tp: mysql.TypeLonglong, Flen: 20}}
}

func strField(name string) *session.Field {
	return &session.Field{Name: name, OrgName: name, Type: types.FieldType{Tp: mysql.TypeVarchar, Flen: 64, Charset: "utf8mb4", Collate: "utf8mb4_bin"}}
}

func ftField(name string, tp byte, flag uint, decimal int, cs string) *session.Field {
	ft := types.FieldType{Tp: tp, Flag: flag, Decimal: decimal, Charset: cs}
	if cs == "utf8mb4" {
		ft.Collate = "utf8mb4_general_ci"
	}
	return &session.Field{Name: name, OrgName: name, Type: ft}
}

// typesRow is one row holding a value of every column type, with the
// string a client reads for it.
var typesCols = []struct {
	f    *session.Field
	d    types.Datum
	want string // "" means NULL
}{
	{ftField("tiny", mysql.TypeTiny, 0, 0, "binary"), types.NewInt(-5), "-5"},
	{ftField("ushort", mysql.TypeShort, mysql.UnsignedFlag, 0, "binary"), types.NewUint(65535), "65535"},
	{ftField("int24", mysql.TypeInt24, 0, 0, "binary"), types.NewInt(-8388608), "-8388608"},
	{ftField("long", mysql.TypeLong, 0, 0, "binary"), types.NewInt(2147483647), "2147483647"},
	{ftField("ubig", mysql.TypeLonglong, mysql.UnsignedFlag, 0, "binary"), types.NewUint(18446744073709551615), "18446744073709551615"},
	{ftField("big", mysql.TypeLonglong, 0, 0, "binary"), types.NewInt(-9223372036854775808), "-9223372036854775808"},
	{ftField("float", mysql.TypeFloat, 0, -1, "binary"), types.NewFloat(float64(float32(1.1))), "1.1"},
	{ftField("double", mysql.TypeDouble, 0, -1, "binary"), types.NewFloat(3.25), "3.25"},
	{ftField("dec", mysql.TypeNewDecimal, 0, 3, "binary"), types.NewString("-12.345"), "-12.345"},
	{ftField("str", mysql.TypeVarchar, 0, 0, "utf8mb4"), types.NewString("héllo"), "héllo"},
	{ftField("blob", mysql.TypeBlob, 0, 0, "binary"), types.NewBytes([]byte{0, 1, 2, 255}), "\x00\x01\x02\xff"},
	{ftField("date", mysql.TypeDate, 0, 0, "binary"), types.NewString("2024-02-29"), "2024-02-29"},
	{ftField("dt6", mysql.TypeDatetime, 0, 6, "binary"), types.NewString("2024-02-29 13:14:15.123456"), "2024-02-29 13:14:15.123456"},
	{ftField("ts", mysql.TypeTimestamp, 0, 0, "binary"), types.NewString("2001-01-01 00:00:00"), "2001-01-01 00:00:00"},
	{ftField("time", mysql.TypeDuration, 0, 0, "binary"), types.NewString("-838:59:59"), "-838:59:59"},
	{ftField("time2", mysql.TypeDuration, 0, 0, "binary"), types.NewString("01:02:03"), "01:02:03"},
	{ftField("year", mysql.TypeYear, mysql.UnsignedFlag, 0, "binary"), types.NewInt(2024), "2024"},
	{ftField("null", mysql.TypeVarchar, 0, 0, "utf8mb4"), types.NewNull(), ""},
	{ftField("bit", mysql.TypeBit, mysql.UnsignedFlag, 0, "binary"), types.NewBytes([]byte{5}), "\x05"},
	{ftField("json", mysql.TypeJSON, 0, 0, "binary"), types.NewString(`{"a": 1}`), `{"a": 1}`},
	{ftField("enum", mysql.TypeEnum, 0, 0, "utf8mb4"), types.NewString("b"), "b"},
	{ftField("zerodate", mysql.TypeDate, 0, 0, "binary"), types.NewString("0000-00-00"), "0000-00-00"},
}

func typesRS() *sliceRS {
	rs := &sliceRS{}
	row := make(types.Row, len(typesCols))
	for i, c := range typesCols {
		rs.fields = append(rs.fields, c.f)
		row[i] = c.d
	}
	rs.rows = []types.Row{row}
	return rs
}

func (s *fakeSession) runStmt(sql string) (session.ResultSet, error) {
	s.affected, s.lastID, s.warnings = 0, 0, 0
	switch {
	case sql == "select 1":
		return &sliceRS{fields: []*session.Field{intField("1")}, rows: []types.Row{{types.NewInt(1)}}}, nil
	case sql == "select 2":
		return &sliceRS{fields: []*session.Field{intField("2")}, rows: []types.Row{{types.NewInt(2)}}}, nil
	case sql == "select point":
		s.pointRS.pos = 0
		s.pointRS.rows = s.pointRow
		return s.pointRS, nil
	case sql == "select types":
		return typesRS(), nil
	case strings.HasPrefix(sql, "select rows "):
		n, _ := strconv.Atoi(strings.TrimPrefix(sql, "select rows "))
		s.lastGen = &genRS{fields: []*session.Field{intField("id"), strField("name")}, n: n}
		return s.lastGen, nil
	case sql == "select fail":
		return &genRS{fields: []*session.Field{intField("id"), strField("name")}, n: 100, failAt: 20}, nil
	case strings.HasPrefix(sql, "select big "):
		n, _ := strconv.Atoi(strings.TrimPrefix(sql, "select big "))
		big := make([]byte, n)
		for i := range big {
			big[i] = 'a' + byte(i%26)
		}
		return &sliceRS{fields: []*session.Field{ftField("b", mysql.TypeLongBlob, 0, 0, "binary")}, rows: []types.Row{{types.NewBytes(big)}}}, nil
	case strings.HasPrefix(sql, "select len "):
		return &sliceRS{fields: []*session.Field{intField("len")}, rows: []types.Row{{types.NewInt(int64(len(sql)))}}}, nil
	case sql == "insert":
		s.affected, s.lastID, s.warnings = 3, 42, 1
		return nil, nil
	case sql == "begin":
		s.status |= mysql.ServerStatusInTrans
		return nil, nil
	case sql == "commit":
		s.status &^= mysql.ServerStatusInTrans
		return nil, nil
	case sql == "error":
		return nil, errno.NewStd(mysql.ErrNoSuchTable, "test", "t")
	case sql == "plain error":
		return nil, errors.New("boom")
	case sql == "panic":
		panic("fake session panic")
	}
	return nil, errno.New(mysql.ErrParse, "You have an error in your SQL syntax near '%s'", sql)
}

func (s *fakeSession) Execute(ctx context.Context, sql string) ([]session.ResultSet, error) {
	if sql == "select point" {
		s.pointRS.pos = 0
		s.pointRS.rows = s.pointRow
		return s.pointRes, nil
	}
	var out []session.ResultSet
	s.outcomes = s.outcomes[:0]
	defer func() {
		s.outcomes = append(s.outcomes, outcome{s.affected, s.lastID, s.warnings})
	}()
	for _, part := range strings.Split(sql, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if len(out) > 0 {
			s.outcomes = append(s.outcomes, outcome{s.affected, s.lastID, s.warnings})
		}
		rs, err := s.runStmt(part)
		if err != nil {
			return out, err
		}
		out = append(out, rs)
	}
	return out, nil
}

func (s *fakeSession) Prepare(ctx context.Context, sql string) (*session.PreparedInfo, error) {
	if strings.HasPrefix(sql, "error") {
		return nil, errno.NewStd(mysql.ErrNoSuchTable, "test", "t")
	}
	s.nextStmt++
	id := s.nextStmt
	s.stmts[id] = sql
	info := &session.PreparedInfo{ID: id, NumParams: strings.Count(sql, "?")}
	switch {
	case strings.HasPrefix(sql, "select point"):
		info.Fields = s.pointFields
	case sql == "select types":
		info.Fields = typesRS().fields
	case strings.HasPrefix(sql, "select"):
		for range info.NumParams {
			info.Fields = append(info.Fields, strField("p"))
		}
	}
	return info, nil
}

func (s *fakeSession) params() []types.Datum {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastParams
}

func (s *fakeSession) ExecutePrepared(ctx context.Context, id uint32, params []types.Datum) (session.ResultSet, error) {
	sql, ok := s.stmts[id]
	if !ok {
		return nil, errno.NewStd(mysql.ErrUnknownStmtHandler, strconv.Itoa(int(id)), "EXECUTE")
	}
	switch {
	case strings.HasPrefix(sql, "select point"):
		s.pointRS.pos = 0
		s.pointRS.rows = s.pointRow
		return s.pointRS, nil
	case sql == "select types":
		return typesRS(), nil
	}
	cp := make([]types.Datum, len(params))
	for i, p := range params {
		cp[i] = p.Clone()
	}
	s.mu.Lock()
	s.lastParams = cp
	s.mu.Unlock()
	if strings.HasPrefix(sql, "insert") {
		s.affected, s.lastID = uint64(len(params)), 7
		return nil, nil
	}
	// Echo the parameters back, typed by their kind.
	rs := &sliceRS{rows: []types.Row{cp}}
	for _, p := range cp {
		switch p.Kind() {
		case types.KindInt64:
			rs.fields = append(rs.fields, ftField("p", mysql.TypeLonglong, 0, 0, "binary"))
		case types.KindUint64:
			rs.fields = append(rs.fields, ftField("p", mysql.TypeLonglong, mysql.UnsignedFlag, 0, "binary"))
		case types.KindFloat64:
			rs.fields = append(rs.fields, ftField("p", mysql.TypeDouble, 0, -1, "binary"))
		case types.KindBytes:
			rs.fields = append(rs.fields, ftField("p", mysql.TypeBlob, 0, 0, "binary"))
		default:
			rs.fields = append(rs.fields, strField("p"))
		}
	}
	return rs, nil
}

type outcome struct {
	affected, lastID uint64
	warnings         uint16
}

func (s *fakeSession) StatementOutcome(i int) (uint64, uint64, uint16) {
	if i >= len(s.outcomes) {
		return 0, 0, 0
	}
	o := s.outcomes[i]
	return o.affected, o.lastID, o.warnings
}

func (s *fakeSession) ClosePrepared(id uint32) { delete(s.stmts, id) }
func (s *fakeSession) UseDB(ctx context.Context, db string) error {
	if db == "nodb" {
		return errno.NewStd(mysql.ErrBadDB, db)
	}
	s.db = db
	return nil
}
func (s *fakeSession) FieldList(ctx context.Context, table string) ([]*session.Field, error) {
	if table != "t" {
		return nil, errno.NewStd(mysql.ErrNoSuchTable, "test", table)
	}
	return []*session.Field{intField("id"), strField("name")}, nil
}
func (s *fakeSession) AffectedRows() uint64      { return s.affected }
func (s *fakeSession) LastInsertID() uint64      { return s.lastID }
func (s *fakeSession) WarningCount() uint16      { return s.warnings }
func (s *fakeSession) Status() uint16            { return s.status }
func (s *fakeSession) CurrentDB() string         { return s.db }
func (s *fakeSession) SetConnectionID(id uint64) { s.connID = id }
func (s *fakeSession) Close()                    { s.b.closed.Add(1) }

package server

import (
	"context"
	"math"
	"strconv"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/session"
	"github.com/shoaldb/shoal/types"
)

// stmt is the protocol-side state of a prepared statement.
type stmt struct {
	id        uint32
	sql       string // for SHOW PROCESSLIST
	numParams int
	fields    []*session.Field

	// paramTypes holds the (type, flags) pairs of the last execution that
	// bound them; an execution without new-params-bound reuses them.
	paramTypes []byte

	// Long data (COM_STMT_SEND_LONG_DATA) per parameter, until the next
	// execution or reset.
	longData    [][]byte
	hasLongData []bool
	longSize    int
	longDataErr error

	params []types.Datum // reused across executions
	arena  []byte        // text forms of temporal parameters
}

func (st *stmt) resetLongData() {
	for i := range st.hasLongData {
		st.hasLongData[i] = false
		if cap(st.longData[i]) > keepBufSize {
			st.longData[i] = nil
		} else {
			st.longData[i] = st.longData[i][:0]
		}
	}
	st.longSize = 0
	st.longDataErr = nil
}

func (c *conn) handleStmtPrepare(ctx context.Context, sql string) error {
	info, err := c.sess.Prepare(ctx, sql)
	if err != nil {
		return c.writeError(err)
	}
	if info.NumParams > math.MaxUint16 || len(info.Fields) > math.MaxUint16 {
		c.sess.ClosePrepared(info.ID)
		return c.writeError(errno.NewStd(mysql.ErrPsManyParam))
	}
	st := &stmt{id: info.ID, sql: sql, numParams: info.NumParams, fields: info.Fields}
	c.stmts[info.ID] = st

	p := c.pkt
	start := p.startPacket()
	b := append(p.wbuf, 0)
	b = appendUint32(b, info.ID)
	b = appendUint16(b, uint16(len(info.Fields)))
	b = appendUint16(b, uint16(info.NumParams))
	b = append(b, 0)
	b = appendUint16(b, c.sess.WarningCount())
	p.wbuf = b
	if err := p.endPacket(start); err != nil {
		return err
	}
	status := c.sess.Status()
	if info.NumParams > 0 {
		for range info.NumParams {
			start := p.startPacket()
			p.wbuf = appendParamDef(p.wbuf)
			if err := p.endPacket(start); err != nil {
				return err
			}
		}
		if !c.deprecateEOF() {
			if err := c.writeEOF(status, 0); err != nil {
				return err
			}
		}
	}
	if len(info.Fields) > 0 {
		for _, f := range info.Fields {
			start := p.startPacket()
			p.wbuf = appendColumnDef(p.wbuf, f)
			if err := p.endPacket(start); err != nil {
				return err
			}
		}
		if !c.deprecateEOF() {
			if err := c.writeEOF(status, 0); err != nil {
				return err
			}
		}
	}
	return nil
}

func (c *conn) handleStmtExecute(ctx context.Context, body []byte) error {
	r := newReader(body)
	id := r.uint32()
	r.byte1()  // flags (cursor type): results are always sent in full
	r.uint32() // iteration count, always 1
	if !r.ok {
		return errMalformed
	}
	st := c.stmts[id]
	if st == nil {
		return c.writeError(errno.NewStd(mysql.ErrUnknownStmtHandler, strconv.FormatUint(uint64(id), 10), "mysqld_stmt_execute"))
	}
	defer st.resetLongData()
	if st.longDataErr != nil {
		return c.writeError(st.longDataErr)
	}
	params, err := decodeParams(st, r.b)
	if err != nil {
		return err
	}
	rs, err := c.sess.ExecutePrepared(ctx, id, params)
	if err != nil {
		return c.writeError(err)
	}
	if rs == nil {
		return c.writeOK()
	}
	_, ioErr := c.writeResultSet(ctx, rs, true, 0)
	rs.Close()
	return ioErr
}

// decodeParams decodes the parameter block of COM_STMT_EXECUTE into
// st.params. String values alias data (or the statement's long data).
func decodeParams(st *stmt, data []byte) ([]types.Datum, error) {
	n := st.numParams
	params := st.params[:0]
	if n == 0 {
		return params, nil
	}
	r := newReader(data)
	nulls := r.bytes((n + 7) / 8)
	bound := r.byte1()
	if !r.ok {
		return nil, errMalformed
	}
	if bound == 1 {
		tps := r.bytes(2 * n)
		if !r.ok {
			return nil, errMalformed
		}
		st.paramTypes = append(st.paramTypes[:0], tps...)
	} else if len(st.paramTypes) != 2*n {
		return nil, errMalformed
	}
	st.arena = st.arena[:0]
	for i := range n {
		tp, flags := st.paramTypes[2*i], st.paramTypes[2*i+1]
		if i < len(st.hasLongData) && st.hasLongData[i] {
			params = append(params, stringDatum(tp, st.longData[i]))
			continue
		}
		if nulls[i/8]&(1<<(i%8)) != 0 || tp == mysql.TypeNull {
			params = append(params, types.NewNull())
			continue
		}
		d, ok := decodeParam(&r, st, tp, flags&0x80 != 0)
		if !ok || !r.ok {
			return nil, errMalformed
		}
		params = append(params, d)
	}
	st.params = params
	return params, nil
}

// stringDatum wraps the bytes of a string-like parameter: blobs, BIT and
// GEOMETRY as bytes, everything else as a character string.
func stringDatum(tp byte, b []byte) types.Datum {
	switch tp {
	case mysql.TypeTinyBlob, mysql.TypeBlob, mysql.TypeMediumBlob, mysql.TypeLongBlob,
		mysql.TypeGeometry, mysql.TypeBit:
		return types.NewBytes(b)
	}
	return types.NewStringBytes(b)
}

func decodeParam(r *reader, st *stmt, tp byte, unsigned bool) (types.Datum, bool) {
	switch tp {
	case mysql.TypeTiny:
		v := r.byte1()
		if unsigned {
			return types.NewUint(uint64(v)), true
		}
		return types.NewInt(int64(int8(v))), true
	case mysql.TypeShort, mysql.TypeYear:
		v := r.uint16()
		if unsigned {
			return types.NewUint(uint64(v)), true
		}
		return types.NewInt(int64(int16(v))), true
	case mysql.TypeInt24, mysql.TypeLong:
		v := r.uint32()
		if unsigned {
			return types.NewUint(uint64(v)), true
		}
		return types.NewInt(int64(int32(v))), true
	case mysql.TypeLonglong:
		v := r.uint64()
		if unsigned {
			return types.NewUint(v), true
		}
		return types.NewInt(int64(v)), true
	case mysql.TypeFloat:
		return types.NewFloat(float64(math.Float32frombits(r.uint32()))), true
	case mysql.TypeDouble:
		return types.NewFloat(math.Float64frombits(r.uint64())), true
	case mysql.TypeDate, mysql.TypeNewDate, mysql.TypeDatetime, mysql.TypeTimestamp:
		b := r.bytes(int(r.byte1()))
		if !r.ok {
			return types.Datum{}, false
		}
		return binaryDateTimeDatum(tp, b), true
	case mysql.TypeDuration:
		b := r.bytes(int(r.byte1()))
		if !r.ok {
			return types.Datum{}, false
		}
		return binaryDurationDatum(b), true
	case mysql.TypeVarchar, mysql.TypeVarString, mysql.TypeString, mysql.TypeNewDecimal,
		mysql.TypeEnum, mysql.TypeSet, mysql.TypeJSON, mysql.TypeTinyBlob, mysql.TypeBlob,
		mysql.TypeMediumBlob, mysql.TypeLongBlob, mysql.TypeGeometry, mysql.TypeBit,
		0 /* DECIMAL */ :
		n, isNull := r.lenEncInt()
		if !r.ok || n > uint64(len(r.b)) {
			return types.Datum{}, false
		}
		if isNull {
			return types.NewNull(), true
		}
		b := r.bytes(int(n))
		if tp == mysql.TypeNewDecimal || tp == 0 {
			if d, err := types.ParseDecimal(string(b)); err == nil {
				return d, true
			}
		}
		return stringDatum(tp, b), true
	}
	return types.Datum{}, false
}

func appendPadded(b []byte, v, width int) []byte {
	var tmp [20]byte
	s := strconv.AppendInt(tmp[:0], int64(v), 10)
	for i := len(s); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}

// appendDateTimeText renders a binary DATE/DATETIME/TIMESTAMP value
// (without its length byte) in MySQL's text form.
func appendDateTimeText(b []byte, tp byte, v []byte) []byte {
	var year, month, day, hour, minute, sec, micro int
	if len(v) >= 4 {
		year = int(v[0]) | int(v[1])<<8
		month, day = int(v[2]), int(v[3])
	}
	if len(v) >= 7 {
		hour, minute, sec = int(v[4]), int(v[5]), int(v[6])
	}
	if len(v) >= 11 {
		micro = int(uint32(v[7]) | uint32(v[8])<<8 | uint32(v[9])<<16 | uint32(v[10])<<24)
	}
	b = appendPadded(b, year, 4)
	b = append(b, '-')
	b = appendPadded(b, month, 2)
	b = append(b, '-')
	b = appendPadded(b, day, 2)
	if tp == mysql.TypeDate || tp == mysql.TypeNewDate {
		return b
	}
	b = append(b, ' ')
	b = appendPadded(b, hour, 2)
	b = append(b, ':')
	b = appendPadded(b, minute, 2)
	b = append(b, ':')
	b = appendPadded(b, sec, 2)
	if micro != 0 {
		b = append(b, '.')
		b = appendPadded(b, micro, 6)
	}
	return b
}

// appendDurationText renders a binary TIME value (without its length byte)
// as "[-]HH:MM:SS[.ffffff]", days folded into the hours.
func appendDurationText(b []byte, v []byte) []byte {
	var neg bool
	var days, hour, minute, sec, micro int
	if len(v) >= 8 {
		neg = v[0] == 1
		days = int(uint32(v[1]) | uint32(v[2])<<8 | uint32(v[3])<<16 | uint32(v[4])<<24)
		hour, minute, sec = int(v[5]), int(v[6]), int(v[7])
	}
	if len(v) >= 12 {
		micro = int(uint32(v[8]) | uint32(v[9])<<8 | uint32(v[10])<<16 | uint32(v[11])<<24)
	}
	if neg {
		b = append(b, '-')
	}
	b = appendPadded(b, days*24+hour, 2)
	b = append(b, ':')
	b = appendPadded(b, minute, 2)
	b = append(b, ':')
	b = appendPadded(b, sec, 2)
	if micro != 0 {
		b = append(b, '.')
		b = appendPadded(b, micro, 6)
	}
	return b
}

func (c *conn) handleStmtSendLongData(body []byte) error {
	r := newReader(body)
	id := r.uint32()
	param := int(r.uint16())
	if !r.ok {
		return errMalformed
	}
	// No response, as in MySQL; problems surface at execution.
	st := c.stmts[id]
	if st == nil || param >= st.numParams {
		return nil
	}
	if st.hasLongData == nil {
		st.hasLongData = make([]bool, st.numParams)
		st.longData = make([][]byte, st.numParams)
	}
	st.longSize += len(r.b)
	if st.longSize > c.pkt.maxPacket {
		st.longDataErr = errno.NewStd(mysql.ErrNetPacketTooLarge)
		return nil
	}
	st.hasLongData[param] = true
	st.longData[param] = append(st.longData[param], r.b...)
	return nil
}

func (c *conn) handleStmtClose(body []byte) error {
	r := newReader(body)
	id := r.uint32()
	if !r.ok {
		return errMalformed
	}
	if _, ok := c.stmts[id]; ok {
		delete(c.stmts, id)
		c.sess.ClosePrepared(id)
	}
	return nil
}

func (c *conn) handleStmtReset(body []byte) error {
	r := newReader(body)
	id := r.uint32()
	if !r.ok {
		return errMalformed
	}
	st := c.stmts[id]
	if st == nil {
		return c.writeError(errno.NewStd(mysql.ErrUnknownStmtHandler, strconv.FormatUint(uint64(id), 10), "mysqld_stmt_reset"))
	}
	st.resetLongData()
	return c.writeOK()
}

// binaryDateTimeDatum decodes a binary DATE/DATETIME/TIMESTAMP parameter
// (without its length byte) into a KindTime datum.
func binaryDateTimeDatum(tp byte, v []byte) types.Datum {
	var t types.TimeFields
	if len(v) >= 4 {
		t.Year = int(v[0]) | int(v[1])<<8
		t.Month, t.Day = int(v[2]), int(v[3])
	}
	if len(v) >= 7 {
		t.Hour, t.Minute, t.Second = int(v[4]), int(v[5]), int(v[6])
	}
	fsp := 0
	if len(v) >= 11 {
		t.Micro = int(uint32(v[7]) | uint32(v[8])<<8 | uint32(v[9])<<16 | uint32(v[10])<<24)
		if t.Micro != 0 {
			fsp = types.MaxFsp
		}
	}
	if !t.Valid() {
		var tmp [32]byte
		return types.NewString(string(appendDateTimeText(tmp[:0], tp, v)))
	}
	if tp != mysql.TypeDate && tp != mysql.TypeNewDate {
		tp = mysql.TypeDatetime
	}
	return types.NewTime(t, tp, fsp)
}

// binaryDurationDatum decodes a binary TIME parameter (without its length
// byte) into a KindDuration datum. A value outside ±838:59:59 or with a
// minute, second or fraction out of its range becomes its text form, so it
// meets the same checks as the literal (MySQL 8 clips it silently, which
// would accept a value and ignore it).
func binaryDurationDatum(v []byte) types.Datum {
	if len(v) < 8 {
		return types.NewDuration(0, 0)
	}
	days := int64(uint32(v[1]) | uint32(v[2])<<8 | uint32(v[3])<<16 | uint32(v[4])<<24)
	hours := days*24 + int64(v[5])
	if hours > 838 {
		// Out of range (and the microseconds could overflow int64).
		var tmp [40]byte
		return types.NewString(string(appendDurationText(tmp[:0], v)))
	}
	us := (hours*3600 + int64(v[6])*60 + int64(v[7])) * 1000000
	fsp := 0
	var micro int64
	if len(v) >= 12 {
		if micro = int64(uint32(v[8]) | uint32(v[9])<<8 | uint32(v[10])<<16 | uint32(v[11])<<24); micro != 0 {
			us += micro
			fsp = types.MaxFsp
		}
	}
	if v[6] > 59 || v[7] > 59 || micro > 999999 || us > types.MaxDurationMicros {
		var tmp [40]byte
		return types.NewString(string(appendDurationText(tmp[:0], v)))
	}
	if v[0] == 1 {
		us = -us
	}
	return types.NewDuration(us, fsp)
}

package tablecodec

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/tablecodec/codec"
	"github.com/shoaldb/shoal/types"
)

// Row value format (version RowVersion):
//
//	RowVersion                          1 byte
//	uvarint nNull                       number of NULL columns
//	uvarint nValue                      number of non-NULL columns
//	nNull × uvarint idDelta             NULL column ids, ascending
//	nValue × (to the end):              non-NULL columns, ascending ids
//	    uvarint idDelta, uvarint len, value[len]
//
// idDelta is the id minus the previous id of the same list (the first is the
// id itself). Column ids are >= 0 and unique within a row. Values carry no
// type: the reader's column types say how to read them.
//
//	integer (signed or unsigned)  zigzag varint of the 64-bit pattern, so a
//	                              KindInt64 and a KindUint64 datum with the
//	                              same bits encode alike; the reader's type
//	                              picks the kind
//	float                         8 bytes, IEEE-754 bits little-endian
//	string, bytes                 raw
//	decimal                       1 byte scale (0..30), zigzag varint of the
//	                              coefficient; or, when the coefficient does
//	                              not fit in 64 bits, 1 byte 0x80|scale and
//	                              the text form
//	date, datetime, timestamp     uvarint of the packed value >> 20 (date and
//	                              time to the second), then uvarint of the
//	                              microseconds if they are not 0; the column
//	                              type gives the type and fsp back
//	time                          zigzag varint of the microseconds
//
// Values written before these kinds existed (decimal and temporal columns
// kept as text) still decode: a text decimal starts with a digit, sign or
// dot (never a scale byte), a text date/datetime is at least 10 bytes and a
// text time at least 8 (binary forms are shorter).
//
// NULL columns are listed, not just omitted, so a reader can tell a NULL
// from a column the writer did not know (added later: it reads as its
// default). Columns the reader does not ask for are skipped by length; a
// reader stops as soon as it has its columns. nValue lets it notice a value
// truncated at an entry boundary when it needs a column beyond the cut.
const RowVersion byte = 0x80

// maxStackCols bounds the column count EncodeRow can sort without
// allocating.
const maxStackCols = 64

// EncodeRow appends the row value holding values[i] for column colIDs[i]
// (NULL datums are recorded as NULL). colIDs need not be sorted but must be
// unique and >= 0; len(colIDs) must equal len(values). It panics otherwise:
// those are programming errors.
//
// Each value's kind must suit its column's type: KindInt64 or KindUint64 for
// integer columns, KindFloat64 for FLOAT/DOUBLE, KindString or KindBytes for
// all others. The encoding does not record the kind.
func EncodeRow(buf []byte, colIDs []int64, values []types.Datum) []byte {
	n := len(colIDs)
	if n != len(values) {
		panic(fmt.Sprintf("tablecodec.EncodeRow: %d column ids for %d values", n, len(values)))
	}
	// Find the id order; usually the schema order is already ascending.
	var stack [maxStackCols]int32
	var order []int32
	sorted := true
	for i := 1; i < n; i++ {
		if colIDs[i] <= colIDs[i-1] {
			sorted = false
			break
		}
	}
	if !sorted {
		if n <= maxStackCols {
			order = stack[:n]
		} else {
			order = make([]int32, n)
		}
		for i := range order {
			order[i] = int32(i)
		}
		// Insertion sort: rows are short and nearly sorted.
		for i := 1; i < n; i++ {
			j := i
			for j > 0 && colIDs[order[j-1]] > colIDs[order[j]] {
				order[j-1], order[j] = order[j], order[j-1]
				j--
			}
		}
	}
	at := func(k int) int {
		if sorted {
			return k
		}
		return int(order[k])
	}

	nNull := 0
	prev := int64(-1)
	for k := 0; k < n; k++ {
		i := at(k)
		id := colIDs[i]
		if id < 0 || id == prev {
			panic(fmt.Sprintf("tablecodec.EncodeRow: bad or duplicate column id %d", id))
		}
		prev = id
		if values[i].IsNull() {
			nNull++
		}
	}

	buf = append(buf, RowVersion)
	buf = binary.AppendUvarint(buf, uint64(nNull))
	buf = binary.AppendUvarint(buf, uint64(n-nNull))
	if nNull > 0 {
		var last int64
		for k := 0; k < n; k++ {
			i := at(k)
			if values[i].IsNull() {
				buf = binary.AppendUvarint(buf, uint64(colIDs[i]-last))
				last = colIDs[i]
			}
		}
	}
	var last int64
	for k := 0; k < n; k++ {
		i := at(k)
		d := &values[i]
		if d.IsNull() {
			continue
		}
		buf = binary.AppendUvarint(buf, uint64(colIDs[i]-last))
		last = colIDs[i]
		switch d.Kind() {
		case types.KindInt64, types.KindUint64:
			v := d.Int()
			buf = append(buf, byte(codec.VarintLen(v)))
			buf = binary.AppendVarint(buf, v)
		case types.KindFloat64:
			buf = append(buf, 8)
			buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(d.Float()))
		case types.KindDecimal:
			if d.IsCompactDecimal() {
				c := d.DecimalCoef()
				buf = append(buf, byte(1+codec.VarintLen(c)), byte(d.DecimalScale()))
				buf = binary.AppendVarint(buf, c)
			} else {
				txt := d.AppendText(nil)
				buf = binary.AppendUvarint(buf, uint64(1+len(txt)))
				buf = append(buf, 0x80|byte(d.DecimalScale()))
				buf = append(buf, txt...)
			}
		case types.KindTime:
			p := d.TimePacked()
			hi, us := p>>20, p&0xFFFFF
			n := codec.UvarintLen(hi)
			if us != 0 {
				n += codec.UvarintLen(us)
			}
			buf = append(buf, byte(n))
			buf = binary.AppendUvarint(buf, hi)
			if us != 0 {
				buf = binary.AppendUvarint(buf, us)
			}
		case types.KindDuration:
			v := d.DurationMicros()
			buf = append(buf, byte(codec.VarintLen(v)))
			buf = binary.AppendVarint(buf, v)
		default:
			b := d.Bytes()
			buf = binary.AppendUvarint(buf, uint64(len(b)))
			buf = append(buf, b...)
		}
	}
	return buf
}

// DatumKindOf is the kind a column of type ft decodes to: KindInt64 for
// signed integer types, KindUint64 for unsigned ones and BIT, KindFloat64
// for FLOAT/DOUBLE, KindDecimal for DECIMAL, KindTime for DATE, DATETIME
// and TIMESTAMP, KindDuration for TIME, KindBytes for binary-charset types,
// KindString for the rest (char, varchar, text, enum, set, json).
func DatumKindOf(ft *types.FieldType) types.Kind {
	switch {
	case ft.Tp == mysql.TypeNewDecimal:
		return types.KindDecimal
	case ft.IsTime():
		return types.KindTime
	case ft.Tp == mysql.TypeDuration:
		return types.KindDuration
	case ft.IsInteger():
		if ft.IsUnsigned() || ft.Tp == mysql.TypeBit {
			return types.KindUint64
		}
		return types.KindInt64
	case ft.Tp == mysql.TypeFloat || ft.Tp == mysql.TypeDouble:
		return types.KindFloat64
	case ft.IsBinary():
		return types.KindBytes
	}
	return types.KindString
}

// RowColumn describes one column a RowDecoder produces.
type RowColumn struct {
	ID   int64
	Type *types.FieldType
	// Default is the value of a column the row's writer did not know (added
	// after the row was written); the zero Datum means NULL. Decoded datums
	// alias its bytes.
	Default types.Datum
	// FromHandle marks the integer clustered primary key, which lives in the
	// record key rather than the row value: Decode takes it from the int
	// handle it is given.
	FromHandle bool
}

type decodeCol struct {
	id         int64
	out        int // position in dst
	kind       types.Kind
	tp         byte // column type (KindTime)
	fsp        int  // column fsp (KindTime, KindDuration)
	def        types.Datum
	fromHandle bool
}

// RowDecoder decodes row values for a fixed list of columns. Build it once
// per table schema (or per projection, see Project) and reuse it; it is
// immutable, so goroutines may share it. Decode does not allocate.
type RowDecoder struct {
	src  []RowColumn // in output order
	cols []decodeCol // sorted by id
}

// NewRowDecoder returns a decoder producing cols, in that order. Column IDs
// must be unique and Types non-nil.
func NewRowDecoder(cols []RowColumn) *RowDecoder {
	d := &RowDecoder{src: append([]RowColumn(nil), cols...), cols: make([]decodeCol, len(cols))}
	for i, c := range cols {
		if c.Type == nil {
			panic(fmt.Sprintf("tablecodec.NewRowDecoder: column %d has no type", c.ID))
		}
		d.cols[i] = decodeCol{id: c.ID, out: i, kind: DatumKindOf(c.Type), tp: c.Type.Tp, fsp: max(c.Type.Decimal, 0), def: c.Default, fromHandle: c.FromHandle}
	}
	for i := 1; i < len(d.cols); i++ {
		for j := i; j > 0 && d.cols[j-1].id > d.cols[j].id; j-- {
			d.cols[j-1], d.cols[j] = d.cols[j], d.cols[j-1]
		}
	}
	for i := 1; i < len(d.cols); i++ {
		if d.cols[i].id == d.cols[i-1].id {
			panic(fmt.Sprintf("tablecodec.NewRowDecoder: duplicate column id %d", d.cols[i].id))
		}
	}
	return d
}

// Project returns a decoder producing only the columns at the given
// positions of d's column list, in the order given: the way to decode a
// subset of a table's columns.
func (d *RowDecoder) Project(ordinals []int) *RowDecoder {
	cols := make([]RowColumn, len(ordinals))
	for i, o := range ordinals {
		cols[i] = d.src[o]
	}
	return NewRowDecoder(cols)
}

// NumCols is the number of datums Decode produces.
func (d *RowDecoder) NumCols() int { return len(d.cols) }

// Decode decodes row (a row value, as EncodeRow writes it) into dst[0:NumCols]
// in the decoder's column order. h supplies FromHandle columns (pass the
// zero Handle if there are none). String and bytes datums alias row.
func (d *RowDecoder) Decode(row []byte, h Handle, dst []types.Datum) error {
	if len(dst) < len(d.cols) {
		return fmt.Errorf("tablecodec: Decode into %d datums, need %d", len(dst), len(d.cols))
	}
	if len(row) < 3 || row[0] != RowVersion {
		return fmt.Errorf("tablecodec: row value version/length: %w", codec.ErrCorrupt)
	}
	nNull, n := binary.Uvarint(row[1:])
	if n <= 0 || nNull > uint64(len(row)) {
		return fmt.Errorf("tablecodec: row null count: %w", codec.ErrCorrupt)
	}
	p := 1 + n // read position in row
	nValue, n := binary.Uvarint(row[p:])
	if n <= 0 || nValue > uint64(len(row)) {
		return fmt.Errorf("tablecodec: row value count: %w", codec.ErrCorrupt)
	}
	p += n
	// The NULL id list starts at p; the value stream starts after it.
	nullStart := p
	for i := uint64(0); i < nNull; i++ {
		_, n := binary.Uvarint(row[p:])
		if n <= 0 {
			return fmt.Errorf("tablecodec: row null ids: %w", codec.ErrCorrupt)
		}
		p += n
	}
	nulls := row[nullStart:p]
	stream := row[p:]

	var (
		nullID     int64  = -1 // last NULL id read
		valID      int64  = -1 // id of the current stream entry (-1: none yet)
		val        []byte      // its value
		streamN    int64       // running id sum for stream deltas
		nullSum    int64       // running id sum for null deltas
		nullsLeft  = nNull
		valuesLeft = nValue
	)
	for ci := range d.cols {
		c := &d.cols[ci]
		out := &dst[c.out]
		if c.fromHandle && h.IsInt() {
			if c.kind == types.KindUint64 {
				*out = types.NewUint(uint64(h.i))
			} else {
				*out = types.NewInt(h.i)
			}
			continue
		}
		// Advance the value stream to the first entry with id >= c.id.
		for valID < c.id && valuesLeft > 0 {
			valuesLeft--
			delta, n := binary.Uvarint(stream)
			if n <= 0 {
				return fmt.Errorf("tablecodec: row column id: %w", codec.ErrCorrupt)
			}
			stream = stream[n:]
			l, n := binary.Uvarint(stream)
			if n <= 0 || l > uint64(len(stream)-n) {
				return fmt.Errorf("tablecodec: row value length: %w", codec.ErrCorrupt)
			}
			streamN += int64(delta)
			if streamN <= valID {
				return fmt.Errorf("tablecodec: row column ids not ascending: %w", codec.ErrCorrupt)
			}
			valID = streamN
			val = stream[n : n+int(l) : n+int(l)]
			stream = stream[n+int(l):]
		}
		if valID == c.id {
			if err := decodeValue(val, c, out); err != nil {
				return fmt.Errorf("tablecodec: column %d: %w", c.id, err)
			}
			continue
		}
		// Not stored as a value: NULL, or unknown to the writer.
		for nullID < c.id && nullsLeft > 0 {
			delta, n := binary.Uvarint(nulls)
			nulls = nulls[n:]
			nullsLeft--
			nullSum += int64(delta)
			nullID = nullSum
		}
		if nullID == c.id {
			*out = types.Datum{}
		} else {
			*out = c.def
		}
	}
	return nil
}

func decodeValue(val []byte, c *decodeCol, out *types.Datum) error {
	kind := c.kind
	switch kind {
	case types.KindInt64, types.KindUint64:
		v, n := binary.Varint(val)
		if n != len(val) {
			return fmt.Errorf("integer value of %d bytes: %w", len(val), codec.ErrCorrupt)
		}
		if kind == types.KindUint64 {
			*out = types.NewUint(uint64(v))
		} else {
			*out = types.NewInt(v)
		}
	case types.KindFloat64:
		if len(val) != 8 {
			return fmt.Errorf("float value of %d bytes: %w", len(val), codec.ErrCorrupt)
		}
		*out = types.NewFloat(math.Float64frombits(binary.LittleEndian.Uint64(val)))
	case types.KindDecimal:
		return decodeDecimalValue(val, out)
	case types.KindTime:
		return decodeTimeValue(val, c, out)
	case types.KindDuration:
		if len(val) >= 8 { // text written before TIME was a kind
			d, err := types.ParseDuration(string(val), c.fsp)
			if err != nil && err != types.ErrDurationRange {
				return fmt.Errorf("time value %q: %w", val, codec.ErrCorrupt)
			}
			*out = d
			return nil
		}
		v, n := binary.Varint(val)
		if n != len(val) || n <= 0 {
			return fmt.Errorf("time value of %d bytes: %w", len(val), codec.ErrCorrupt)
		}
		*out = types.NewDuration(v, c.fsp)
	case types.KindBytes:
		*out = types.NewBytes(val)
	default:
		*out = types.NewStringBytes(val)
	}
	return nil
}

func decodeDecimalValue(val []byte, out *types.Datum) error {
	if len(val) == 0 {
		return fmt.Errorf("empty decimal value: %w", codec.ErrCorrupt)
	}
	h := val[0]
	switch {
	case h <= types.MaxDecimalScale:
		v, n := binary.Varint(val[1:])
		if n <= 0 || n != len(val)-1 {
			return fmt.Errorf("decimal value of %d bytes: %w", len(val), codec.ErrCorrupt)
		}
		*out = types.NewDecimalFromCoef(v, int(h))
		return nil
	case h&0x80 != 0:
		d, err := types.ParseDecimal(string(val[1:]))
		if err != nil {
			return fmt.Errorf("decimal value %q: %w", val[1:], codec.ErrCorrupt)
		}
		*out = d
		return nil
	}
	// Text written before DECIMAL was a kind.
	d, err := types.ParseDecimal(string(val))
	if err != nil {
		return fmt.Errorf("decimal value %q: %w", val, codec.ErrCorrupt)
	}
	*out = d
	return nil
}

func decodeTimeValue(val []byte, c *decodeCol, out *types.Datum) error {
	if len(val) >= 10 { // text written before DATE/DATETIME were kinds
		d, err := types.ParseTime(string(val), c.tp, c.fsp)
		if err != nil {
			return fmt.Errorf("datetime value %q: %w", val, codec.ErrCorrupt)
		}
		*out = d
		return nil
	}
	hi, n := binary.Uvarint(val)
	if n <= 0 {
		return fmt.Errorf("datetime value of %d bytes: %w", len(val), codec.ErrCorrupt)
	}
	var us uint64
	if n < len(val) {
		var m int
		us, m = binary.Uvarint(val[n:])
		if m <= 0 || n+m != len(val) || us > 999999 {
			return fmt.Errorf("datetime value of %d bytes: %w", len(val), codec.ErrCorrupt)
		}
	}
	*out = types.NewTimeFromPacked(hi<<20|us, c.tp, c.fsp)
	return nil
}

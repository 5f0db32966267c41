package executor

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/sql/catalog"
	"github.com/shoaldb/shoal/types"
)

// Column casts for the types whose values have a closed form: ENUM and SET
// members, JSON text, character data in utf8mb4. What MySQL refuses in
// strict mode is refused here, whatever protocol carried the value.

// memberEqual compares a value with an ENUM/SET member under the column's
// collation: exact for bytewise ones;
// trailing spaces never count (MySQL strips them from members).
func memberEqual(ft *types.FieldType, v, member string) bool {
	v = strings.TrimRight(v, " ")
	member = strings.TrimRight(member, " ")
	c := types.CollatorOf(ft.Collate)
	if ft.Charset == "binary" || c == nil {
		return v == member
	}
	return c.Compare([]byte(v), []byte(member)) == 0
}

// numericIndex reads d as the integer MySQL takes for a member index or
// SET bitmask (a number, or a string holding one).
func numericIndex(d types.Datum) (uint64, bool) {
	switch d.Kind() {
	case types.KindInt64:
		if d.Int() < 0 {
			return 0, false
		}
		return uint64(d.Int()), true
	case types.KindUint64:
		return d.Uint(), true
	case types.KindString, types.KindBytes:
		u, err := strconv.ParseUint(strings.TrimSpace(d.StringValue()), 10, 64)
		return u, err == nil
	}
	i, ok := d.ToInt()
	if !ok || i < 0 {
		return 0, false
	}
	return uint64(i), true
}

// castEnumColumn stores a member's text: a value equal to a member, or a
// 1-based index. Anything else is error 1265 in strict mode, else the empty
// string with a warning.
func castEnumColumn(ctx *Context, d types.Datum, c *catalog.ColumnInfo, row int) (types.Datum, error) {
	ft := &c.Type
	if d.Kind() == types.KindString || d.Kind() == types.KindBytes {
		s := d.StringValue()
		for _, m := range ft.Elems {
			if memberEqual(ft, s, m) {
				return types.NewString(m), nil
			}
		}
	}
	if i, ok := numericIndex(d); ok && i >= 1 && i <= uint64(len(ft.Elems)) {
		return types.NewString(ft.Elems[i-1]), nil
	}
	if err := castFail(ctx, ctx.StrictMode, errno.NewStd(mysql.WarnDataTruncated, c.Name, row)); err != nil {
		return d, err
	}
	return types.NewString(""), nil
}

// castSetColumn stores the members named by a comma-separated list (in
// definition order, once each) or by a bitmask. Unknown members are error
// 1265 in strict mode, else dropped with a warning.
func castSetColumn(ctx *Context, d types.Datum, c *catalog.ColumnInfo, row int) (types.Datum, error) {
	ft := &c.Type
	var mask uint64
	valid := true
	matched := false
	if d.Kind() == types.KindString || d.Kind() == types.KindBytes {
		s := d.StringValue()
		matched = true
		if s != "" {
			for _, part := range strings.Split(s, ",") {
				found := false
				for i, m := range ft.Elems {
					if memberEqual(ft, part, m) {
						mask |= 1 << i
						found = true
						break
					}
				}
				if !found {
					matched = false
				}
			}
		}
	}
	if !matched {
		if n, ok := numericIndex(d); ok {
			mask = n
			if len(ft.Elems) < 64 && n>>len(ft.Elems) != 0 {
				valid = false
				mask &= 1<<len(ft.Elems) - 1
			}
		} else {
			valid = false
		}
	}
	if !valid {
		if err := castFail(ctx, ctx.StrictMode, errno.NewStd(mysql.WarnDataTruncated, c.Name, row)); err != nil {
			return d, err
		}
	}
	members := make([]string, 0, bits.OnesCount64(mask))
	for i, m := range ft.Elems {
		if i < 64 && mask&(1<<i) != 0 {
			members = append(members, m)
		}
	}
	return types.NewString(strings.Join(members, ",")), nil
}

// castJSONColumn refuses text that is not JSON (3140, in every SQL mode,
// as MySQL).
func castJSONColumn(d types.Datum, c *catalog.ColumnInfo) (types.Datum, error) {
	var b []byte
	switch d.Kind() {
	case types.KindString, types.KindBytes:
		b = d.Bytes()
	default:
		b = d.AppendText(nil)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		reason, pos := err.Error(), 0
		var se *json.SyntaxError
		if errors.As(err, &se) {
			pos = int(se.Offset)
		}
		return d, errno.New(mysql.ErrInvalidJSONText, "Invalid JSON text: %q at position %d in value for column '%s'.", reason, pos, c.Name)
	}
	return types.NewStringBytes(b), nil
}

// checkUTF8 refuses bytes that are not UTF-8 for a character column (1366
// in strict mode; otherwise the value is cut at the first bad byte, with a
// warning), as MySQL does for utf8mb4.
func checkUTF8(ctx *Context, b []byte, c *catalog.ColumnInfo, row int) ([]byte, error) {
	if utf8.Valid(b) {
		return b, nil
	}
	bad := 0
	for bad < len(b) {
		r, n := utf8.DecodeRune(b[bad:])
		if r == utf8.RuneError && n <= 1 {
			break
		}
		bad += n
	}
	err := errno.New(mysql.ErrTruncatedWrongValueForField, "Incorrect string value: '%s' for column '%s' at row %d", invalidBytesText(b[bad:]), c.Name, row)
	if err := castFail(ctx, ctx.StrictMode, err); err != nil {
		return nil, err
	}
	return b[:bad], nil
}

// invalidBytesText shows up to 6 bytes from a bad one as MySQL's message
// does: printable ASCII as is, others as \xHH, "..." when cut.
func invalidBytesText(b []byte) string {
	var sb strings.Builder
	for i, c := range b {
		if i == 6 {
			sb.WriteString("...")
			break
		}
		if c >= 0x20 && c < 0x7f {
			sb.WriteByte(c)
		} else {
			fmt.Fprintf(&sb, `\x%02X`, c)
		}
	}
	return sb.String()
}

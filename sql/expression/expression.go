// Package expression evaluates scalar SQL expressions over rows: column
// references, constants, prepared-statement parameters, operators and
// built-in functions, with MySQL's NULL semantics and implicit conversions.
//
// Invariants:
//   - Expressions are immutable after planning and safe to share between
//     executions of a cached plan; per-execution state (parameters, the
//     session's warnings, subquery runners) lives in the Context.
//   - Any operand NULL makes an operator NULL, except where MySQL says
//     otherwise (AND/OR three-valued logic, IS NULL, IFNULL, COALESCE, <=>).
//
// # Built-in functions
//
// The planner binds every operator and function by its lower-case name
// through NewFunction, which looks it up in the registry (builtin.go). Each
// family has its own file named builtin_<family>.go (arithmetic, compare,
// op, control, like, math, string, time, info, misc; CAST is built by
// NewCast in builtin_cast.go) with its tests in builtin_<family>_test.go
// and testdata/<family>. To add a builtin:
//
//  1. Write its evaluation (an evalFunc) in its family's file, or start a
//     new builtin_<family>.go for a new family.
//  2. Add an entry to the family's table in that file's init function
//     (registerBuiltins): name -> builtin{minArgs, maxArgs (-1: variadic),
//     evaluation, result type, nondeterministic}; oneArg and twoArgs cover
//     the common shapes, and the result type helpers (intType, doubleType,
//     stringType, decimalType, ...) live in builtin.go.
//  3. Give it MySQL 8.0's result type and values, and add cases to
//     testdata/<family> (MySQL's answers; a case where shoal differs stays
//     out of the file until fixed).
//
// A name registered twice panics when the package initialises, so two
// families cannot silently compete for one name. A function the parser
// knows but the registry does not fails with 1305 (FUNCTION ... does not
// exist): nothing is accepted and ignored.
package expression

import (
	"context"
	"strconv"
	"time"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/types"
)

var (
	errIncorrectArgs          = errno.New(mysql.ErrWrongArguments, "Incorrect arguments to EXECUTE")
	errSubqueryMoreThanOneRow = errno.NewStd(mysql.ErrSubqueryNo1Row)
)

// Context carries what an evaluation needs beyond the row.
type Context struct {
	// Ctx is the running statement's context: SLEEP() ends early when it
	// is done (KILL QUERY, max_execution_time, the client leaving).
	Ctx context.Context
	// Strict: the statement runs in strict SQL mode (some functions then
	// fail where they would warn).
	Strict bool
	Params []types.Datum
	// Session is the session's view for functions such as DATABASE().
	Session SessionInfo
	// Warnings collects warnings raised during evaluation.
	Warnings []error
	// Subquery evaluates subquery i of the statement with the given outer
	// row (correlated references read it).
	Subquery func(id int, outer types.Row) ([]types.Row, error)
	// Outer is the stack of enclosing queries' current rows.
	Outer []types.Row
	// Vars reads user and system variables.
	Vars func(name string, system, global bool) (types.Datum, error)
	// Slots hold the current outer rows of index joins (see Correlated).
	Slots []types.Row
	// inSets caches hash sets of uncorrelated IN subqueries' rows for one
	// statement (reset with ResetStatement).
	inSets map[*Subquery]*inSet
	// KeyedLookup finds the value of a decorrelated subquery's group.
	KeyedLookup func(id int, keys []types.Datum) (types.Datum, bool, error)
	// StmtTime is the statement's start time, which NOW(), CURDATE() and
	// CURRENT_TIMESTAMP defaults return throughout the statement (MySQL's
	// rule). The session sets it per statement; when it is zero, each call
	// reads the clock.
	StmtTime time.Time
	// TimeZone is the session's time_zone: NOW() and its kin read the
	// clock in it and TIMESTAMP columns are shown in it. nil is UTC (no
	// session: DDL's own evaluations).
	TimeZone *types.TimeZone
}

// Now is the statement time (see StmtTime), in the session's time zone.
func (c *Context) Now() time.Time {
	if c == nil || c.StmtTime.IsZero() {
		return time.Now().In(c.Zone().Location())
	}
	return c.StmtTime.In(c.Zone().Location())
}

// Zone is the session's time zone (UTC without one).
func (c *Context) Zone() *types.TimeZone {
	if c == nil || c.TimeZone == nil {
		return types.UTC
	}
	return c.TimeZone
}

// NowDatum is the statement time as a DATETIME with fsp digits (truncated,
// as NOW(fsp) is) in the session's zone, marked when it is the later of
// two instants sharing its local time so a TIMESTAMP column keeps it.
func (c *Context) NowDatum(fsp int) types.Datum {
	now := c.Now()
	f, fold := types.InstantIn(now, c.Zone())
	f.Micro -= f.Micro % int(truncUnit[fsp])
	return types.NewTime(f, mysql.TypeDatetime, fsp).WithFold(fold)
}

// truncUnit[fsp] is the microseconds NOW(fsp) truncates to.
var truncUnit = [...]int64{1000000, 100000, 10000, 1000, 100, 10, 1}

// SessionInfo is what built-in functions may ask of the session.
type SessionInfo interface {
	CurrentDB() string
	User() string
	// CurrentUser is the authenticated account, user@host-pattern.
	CurrentUser() string
	ConnectionID() uint64
	LastInsertID() uint64
	SysVar(name string) (types.Datum, bool)
}

// AppendWarning records a warning.
func (c *Context) AppendWarning(err error) { c.Warnings = append(c.Warnings, err) }

// Expr is a scalar expression.
type Expr interface {
	Eval(ctx *Context, row types.Row) (types.Datum, error)
	Type() *types.FieldType
}

// Column reads one column of the input row.
type Column struct {
	Index int
	Ft    types.FieldType
	Name  string
}

func (c *Column) Eval(_ *Context, row types.Row) (types.Datum, error) { return row[c.Index], nil }
func (c *Column) Type() *types.FieldType                              { return &c.Ft }

// Constant is a literal.
type Constant struct {
	Value types.Datum
	Ft    types.FieldType
}

func (c *Constant) Eval(*Context, types.Row) (types.Datum, error) { return c.Value, nil }
func (c *Constant) Type() *types.FieldType                        { return &c.Ft }

// Param is a prepared-statement parameter (?), read from the Context.
type Param struct {
	Index int
	Ft    types.FieldType
}

func (p *Param) Eval(ctx *Context, _ types.Row) (types.Datum, error) {
	if p.Index >= len(ctx.Params) {
		return types.Datum{}, errIncorrectArgs
	}
	return ctx.Params[p.Index], nil
}
func (p *Param) Type() *types.FieldType { return &p.Ft }

// NewConstant builds a constant with the type MySQL gives the literal.
func NewConstant(d types.Datum) *Constant {
	return &Constant{Value: d, Ft: TypeOfDatum(d)}
}

// TypeOfDatum is the field type of a literal.
func TypeOfDatum(d types.Datum) types.FieldType {
	switch d.Kind() {
	case types.KindInt64:
		return types.FieldType{Tp: mysql.TypeLonglong, Flen: 21, Flag: mysql.BinaryFlag}
	case types.KindUint64:
		return types.FieldType{Tp: mysql.TypeLonglong, Flen: 21, Flag: mysql.UnsignedFlag | mysql.BinaryFlag}
	case types.KindFloat64:
		return types.FieldType{Tp: mysql.TypeDouble, Flen: 22, Decimal: -1, Flag: mysql.BinaryFlag}
	case types.KindNull:
		return types.FieldType{Tp: mysql.TypeNull, Flag: mysql.BinaryFlag}
	case types.KindDecimal:
		n := len(d.AppendText(nil))
		return types.FieldType{Tp: mysql.TypeNewDecimal, Flen: n, Decimal: d.DecimalScale(), Flag: mysql.BinaryFlag}
	case types.KindTime:
		return TimeFieldType(d.TimeType(), d.Fsp())
	case types.KindDuration:
		return TimeFieldType(mysql.TypeDuration, d.Fsp())
	case types.KindBytes:
		return types.FieldType{Tp: mysql.TypeVarString, Flen: len(d.Bytes()), Charset: "binary", Flag: mysql.BinaryFlag}
	default:
		return types.FieldType{Tp: mysql.TypeVarString, Flen: len(d.Bytes()), Charset: "utf8mb4", Collate: "utf8mb4_bin"}
	}
}

// Columns appends the column indexes e reads.
func Columns(e Expr, out []int) []int {
	switch x := e.(type) {
	case *Column:
		return append(out, x.Index)
	case *ScalarFunc:
		for _, a := range x.Args {
			out = Columns(a, out)
		}
	case *Subquery:
		out = append(out, x.OuterRefs...)
		for _, k := range x.Keys {
			out = Columns(k, out)
		}
		if x.Left != nil {
			out = Columns(x.Left, out)
		}
	}
	return out
}

// IsConstant reports whether e reads no column (it may read parameters).
func IsConstant(e Expr) bool {
	switch x := e.(type) {
	case *Constant, *Param, *OuterColumn, *Correlated:
		return true
	case *ScalarFunc:
		if !x.Deterministic {
			return false
		}
		for _, a := range x.Args {
			if !IsConstant(a) {
				return false
			}
		}
		return true
	}
	return false
}

// Subquery evaluates a subquery through the Context. Mode says how its rows
// become a value.
type Subquery struct {
	ID   int
	Mode SubqueryMode
	// OuterRefs are the outer-row column indexes the subquery reads.
	OuterRefs []int
	// Correlated subqueries are evaluated per outer row; others once per
	// execution (cached in Context by the runner).
	Correlated bool
	Ft         types.FieldType
	// Left and Op are for IN / comparison-ANY/ALL forms.
	Left Expr
	Op   string
	All  bool
	// Keys and DefaultID are for SubqueryKeyed.
	Keys      []Expr
	DefaultID int
}

// SubqueryMode is how a subquery is used.
type SubqueryMode uint8

const (
	SubqueryScalar SubqueryMode = iota
	SubqueryExists
	SubqueryIn      // Left IN (subquery)
	SubqueryCompare // Left Op ANY/ALL (subquery)
	// SubqueryKeyed is a decorrelated scalar aggregate: subquery ID returns
	// (key columns..., value) once per statement, grouped by the inner sides
	// of the correlation equalities; Keys (over the outer row) pick the
	// group, and subquery DefaultID (one row) gives the value for no group.
	SubqueryKeyed
)

func (s *Subquery) Type() *types.FieldType { return &s.Ft }

func (s *Subquery) Eval(ctx *Context, row types.Row) (types.Datum, error) {
	if s.Mode == SubqueryKeyed {
		keys := make([]types.Datum, len(s.Keys))
		for i, k := range s.Keys {
			v, err := k.Eval(ctx, row)
			if err != nil {
				return v, err
			}
			keys[i] = v
		}
		v, found, err := ctx.KeyedLookup(s.ID, keys)
		if err != nil || found {
			return v, err
		}
		rows, err := ctx.Subquery(s.DefaultID, nil)
		if err != nil || len(rows) == 0 {
			return types.Datum{}, err
		}
		return rows[0][0], nil
	}
	rows, err := ctx.Subquery(s.ID, row)
	if err != nil {
		return types.Datum{}, err
	}
	switch s.Mode {
	case SubqueryExists:
		return types.NewBool(len(rows) > 0), nil
	case SubqueryScalar:
		if len(rows) == 0 {
			return types.Datum{}, nil
		}
		if len(rows) > 1 {
			return types.Datum{}, errSubqueryMoreThanOneRow
		}
		return rows[0][0], nil
	case SubqueryIn, SubqueryCompare:
		l, err := s.Left.Eval(ctx, row)
		if err != nil {
			return types.Datum{}, err
		}
		op := s.Op
		if s.Mode == SubqueryIn {
			op = "eq"
		}
		sawNull := false
		if l.IsNull() {
			if len(rows) == 0 {
				return types.NewBool(s.All), nil
			}
			return types.Datum{}, nil
		}
		if s.Mode == SubqueryIn && !s.Correlated && len(rows) > 8 {
			if set := ctx.inSet(s, rows); set != nil {
				if k, ok := hashKey(l, s.Left.Type()); ok && (set.class == 0 || classOf(k) == set.class) {
					if _, found := set.keys[k]; found {
						return types.NewBool(true), nil
					}
					if set.hasNull {
						return types.Datum{}, nil
					}
					return types.NewBool(false), nil
				}
			}
		}
		for _, r := range rows {
			if r[0].IsNull() {
				sawNull = true
				continue
			}
			ok := compareOp(op, types.Compare(l, r[0]))
			if s.All && !ok {
				return types.NewBool(false), nil
			}
			if !s.All && ok {
				return types.NewBool(true), nil
			}
		}
		if sawNull {
			return types.Datum{}, nil
		}
		return types.NewBool(s.All), nil
	}
	return types.Datum{}, nil
}

func compareOp(op string, c int) bool {
	switch op {
	case "eq":
		return c == 0
	case "ne":
		return c != 0
	case "lt":
		return c < 0
	case "le":
		return c <= 0
	case "gt":
		return c > 0
	case "ge":
		return c >= 0
	}
	return false
}

// OuterColumn reads a column of an enclosing query's current row (a
// correlated reference); Depth 1 is the immediately enclosing query.
type OuterColumn struct {
	Depth int
	Index int
	Ft    types.FieldType
}

func (c *OuterColumn) Eval(ctx *Context, _ types.Row) (types.Datum, error) {
	n := len(ctx.Outer)
	if c.Depth > n {
		return types.Datum{}, nil
	}
	row := ctx.Outer[n-c.Depth]
	if c.Index >= len(row) {
		return types.Datum{}, nil
	}
	return row[c.Index], nil
}
func (c *OuterColumn) Type() *types.FieldType { return &c.Ft }

// Variable reads a user (@x) or system (@@x) variable at run time.
type Variable struct {
	Name   string
	System bool
	Global bool
	Ft     types.FieldType
}

func (v *Variable) Eval(ctx *Context, _ types.Row) (types.Datum, error) {
	if ctx.Vars == nil {
		return types.Datum{}, nil
	}
	return ctx.Vars(v.Name, v.System, v.Global)
}
func (v *Variable) Type() *types.FieldType { return &v.Ft }

// Correlated evaluates E over the current outer row of an index join (held
// in Context.Slots[Slot]); to the inner side's scan it is a constant that
// changes per outer row.
type Correlated struct {
	Slot int
	E    Expr
}

func (c *Correlated) Eval(ctx *Context, _ types.Row) (types.Datum, error) {
	if c.Slot >= len(ctx.Slots) {
		return types.Datum{}, nil
	}
	return c.E.Eval(ctx, ctx.Slots[c.Slot])
}
func (c *Correlated) Type() *types.FieldType { return c.E.Type() }

// inSet is the set of an uncorrelated IN subquery's values, usable when
// every value hashes consistently with the comparison (same class).
type inSet struct {
	keys    map[string]struct{}
	hasNull bool
	class   byte // 'n' numbers or 's' strings; 0 when empty
}

func classOf(k string) byte {
	if k[0] == 's' {
		return 's'
	}
	return 'n'
}

// ResetStatement forgets per-statement caches.
func (c *Context) ResetStatement() { c.inSets = nil }

func (c *Context) inSet(s *Subquery, rows []types.Row) *inSet {
	if set, ok := c.inSets[s]; ok {
		return set
	}
	set := &inSet{keys: make(map[string]struct{}, len(rows))}
	lt := s.Left.Type()
	for _, r := range rows {
		if r[0].IsNull() {
			set.hasNull = true
			continue
		}
		k, ok := hashKey(r[0], lt)
		if ok && set.class != 0 && classOf(k) != set.class {
			ok = false // mixed classes compare by conversion: no hashing
		}
		if !ok {
			set = nil
			break
		}
		set.class = classOf(k)
		set.keys[k] = struct{}{}
	}
	if c.inSets == nil {
		c.inSets = map[*Subquery]*inSet{}
	}
	c.inSets[s] = set
	return set
}

// hashKey returns a key that is equal for two values exactly when they
// compare equal, for the value classes where that is simple: integers (and
// integral floats) and strings under a binary collation.
func hashKey(d types.Datum, cmpType *types.FieldType) (string, bool) {
	switch d.Kind() {
	case types.KindInt64:
		return "i" + strconv.FormatInt(d.Int(), 10), true
	case types.KindUint64:
		if d.Uint() <= 1<<63-1 {
			return "i" + strconv.FormatInt(int64(d.Uint()), 10), true
		}
		return "u" + strconv.FormatUint(d.Uint(), 10), true
	case types.KindFloat64:
		f := d.Float()
		if f == float64(int64(f)) {
			return "i" + strconv.FormatInt(int64(f), 10), true
		}
		return "", false
	case types.KindString, types.KindBytes:
		if cmpType.IsString() && !isCI(cmpType) && !cmpType.IsTime() && cmpType.Tp != mysql.TypeNewDecimal {
			return "s" + string(d.Bytes()), true
		}
	}
	return "", false
}

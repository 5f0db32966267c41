package session

import (
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/sql/expression"
	"github.com/shoaldb/shoal/sql/planner"
	"github.com/shoaldb/shoal/sql/sqlmode"
	"github.com/shoaldb/shoal/types"
)

// sqlMode is the session's sql_mode in force. Stored values are canonical
// (SET checked them), so parsing only fails for a value persisted by an
// older version; MySQL's default is used then.
func (s *Session) sqlMode() sqlmode.Mode {
	text := s.hot().sqlModeText
	if text == s.modeText && s.modeParsed {
		return s.mode
	}
	m, err := sqlmode.Parse(text)
	if err != nil {
		m = sqlmode.Default
	}
	s.modeText, s.mode, s.modeParsed = text, m, true
	return m
}

// sqlModeText turns the value of SET sql_mode into the names it stands
// for: a number is a bit set of MySQL's mode bits, NULL is refused (1231),
// other types are 1232 as in MySQL.
func sqlModeText(val types.Datum) (string, error) {
	switch val.Kind() {
	case types.KindNull:
		return "", errno.NewStd(mysql.ErrWrongValueForVar, "sql_mode", "NULL")
	case types.KindInt64:
		if val.Int() < 0 {
			return "", errno.NewStd(mysql.ErrWrongValueForVar, "sql_mode", val.String())
		}
		m, err := sqlmode.FromNumber(uint64(val.Int()))
		return m.String(), err
	case types.KindUint64:
		m, err := sqlmode.FromNumber(val.Uint())
		return m.String(), err
	case types.KindString, types.KindBytes:
		return val.StringValue(), nil
	}
	return "", errno.NewStd(mysql.ErrWrongTypeForVar, "sql_mode")
}

// normalizeSQLMode validates a sql_mode text and returns it canonical,
// with MySQL's warning 3135 when the strict-mode family is split.
func normalizeSQLMode(val string) (string, []error, error) {
	m, err := sqlmode.Parse(val)
	if err != nil {
		return "", nil, err
	}
	if err := sqlmode.CheckSupported(m); err != nil {
		return "", nil, err
	}
	var warns []error
	if sqlmode.NeedsMergedWarning(m) {
		warns = append(warns, sqlmode.ErrMerged())
	}
	return m.String(), warns, nil
}

// divZeroAction is what division by zero does in stmt under mode: nothing
// more than NULL without ERROR_FOR_DIVISION_BY_ZERO; with it, error 1365
// in a strict-mode INSERT or UPDATE without IGNORE, else warning 1365.
func divZeroAction(mode sqlmode.Mode, stmt *planner.Statement) expression.DivZeroAction {
	if !mode.Has(sqlmode.ErrorForDivisionByZero) {
		return expression.DivZeroSilent
	}
	if !mode.IsStrict() || stmt == nil || ignoresErrors(stmt) {
		return expression.DivZeroWarn
	}
	switch stmt.Root.(type) {
	case *planner.Insert, *planner.Update:
		return expression.DivZeroError
	}
	return expression.DivZeroWarn
}

// ignoresErrors reports INSERT IGNORE / UPDATE IGNORE.
func ignoresErrors(stmt *planner.Statement) bool {
	if stmt == nil {
		return false
	}
	switch p := stmt.Root.(type) {
	case *planner.Insert:
		return p.Ignore
	case *planner.Update:
		return p.Ignore
	}
	return false
}

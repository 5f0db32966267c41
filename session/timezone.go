package session

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/types"
)

// The session's time zone: @@time_zone (session, else global, else
// SYSTEM) resolved once per value and handed to every statement's
// evaluation context, where NOW() reads the clock in it and the executor
// converts TIMESTAMP columns between it and UTC (their stored form).

// timeZone is the zone @@time_zone names now. A value that no longer
// resolves (it was checked when set) falls back to SYSTEM.
func (s *Session) timeZone() *types.TimeZone {
	name := s.hot().timeZoneName
	if s.tz != nil && name == s.tzName {
		return s.tz
	}
	z, err := types.LoadTimeZone(name)
	if err != nil {
		z = types.SystemZone()
	}
	s.tz, s.tzName = z, name
	return z
}

// checkVarType refuses values of the wrong kind before they are
// normalized: time_zone takes a string (NULL: 1231, a number: 1232), and
// explicit_defaults_for_timestamp = OFF, MySQL's deprecated pre-8.0
// TIMESTAMP rules, is not supported.
func checkVarType(name string, val types.Datum) error {
	switch name {
	case "time_zone":
		if val.IsNull() {
			return errno.NewStd(mysql.ErrWrongValueForVar, name, "NULL")
		}
		if k := val.Kind(); k != types.KindString && k != types.KindBytes {
			return errno.NewStd(mysql.ErrWrongTypeForVar, name)
		}
	case "explicit_defaults_for_timestamp":
		str := strings.ToUpper(val.String())
		if str == "0" || str == "OFF" || str == "FALSE" {
			return errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support 'explicit_defaults_for_timestamp = OFF'")
		}
	}
	return nil
}

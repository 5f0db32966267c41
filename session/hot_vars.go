package session

import (
	"fmt"
	"strconv"
	"time"
)

// hotVars are the system variables every statement reads, parsed once per
// change. Reading them through getSysVar (lower-casing, map lookups, the
// global table's read lock that every connection shares, and parsing) on
// each statement cost a point select several percent of its CPU.
type hotVars struct {
	// sessionGen and globalGen are the generations the values were read
	// at; valid is false until the first read.
	sessionGen, globalGen uint64
	valid                 bool

	autocommit             bool
	sqlModeText            string
	timeZoneName           string
	maxExecution           time.Duration
	waitTimeout            time.Duration
	memQuota               int64
	lockWait               time.Duration
	autoIncInc, autoIncOff int64
}

// setSessionVar sets the session value of a system variable; every
// session-level change goes through here so that hotVars see it.
func (s *Session) setSessionVar(name, v string) {
	s.vars[name] = v
	s.varGen++
}

// hot returns the hot variables as of now: re-read when a session or
// global value changed since they were last read.
func (s *Session) hot() *hotVars {
	h := &s.hotVars
	// The generation is read before the values: a change racing with the
	// read leaves an older generation behind, so the next call reads again.
	g := s.b.globals.gen.Load()
	if h.valid && h.sessionGen == s.varGen && h.globalGen == g {
		return h
	}
	get := func(name string) string {
		v, _ := s.getSysVar(name, false)
		return v
	}
	h.autocommit = get("autocommit") == "1"
	h.sqlModeText = get("sql_mode")
	h.timeZoneName = get("time_zone")
	ms, _ := strconv.ParseUint(get("max_execution_time"), 10, 64)
	h.maxExecution = time.Duration(ms) * time.Millisecond
	// MySQL's least wait_timeout is 1 s, its largest a year.
	secs, _ := strconv.ParseFloat(get("wait_timeout"), 64)
	h.waitTimeout = time.Duration(min(max(secs, 1), 31536000)) * time.Second
	h.memQuota, _ = strconv.ParseInt(get("tidb_mem_quota_query"), 10, 64)
	var lockSecs float64
	fmt.Sscan(get("innodb_lock_wait_timeout"), &lockSecs)
	h.lockWait = time.Duration(lockSecs * float64(time.Second))
	series := func(name string) int64 {
		n, err := strconv.ParseInt(get(name), 10, 64)
		if err != nil || n < 1 {
			return 1
		}
		return min(n, 65535)
	}
	h.autoIncInc, h.autoIncOff = series("auto_increment_increment"), series("auto_increment_offset")
	h.sessionGen, h.globalGen, h.valid = s.varGen, g, true
	return h
}

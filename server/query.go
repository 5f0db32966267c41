package server

import (
	"context"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/session"
)

// handleQuery runs COM_QUERY. Each statement's outcome is sent in order, all
// but the last with SERVER_MORE_RESULTS_EXISTS; an error ends the sequence
// with an ERR packet. The returned error is an I/O error only.
func (c *conn) handleQuery(ctx context.Context, sql string) error {
	if !c.multiStmts && strings.IndexByte(sql, ';') >= 0 {
		noBackslash := c.sess.Status()&mysql.ServerStatusNoBackslashEscaped != 0
		if rest, ok := secondStatement(sql, noBackslash); ok {
			if len(rest) > 80 {
				rest = rest[:80]
			}
			return c.writeError(errno.New(mysql.ErrParse,
				"You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near '%s' at line 1", rest))
		}
	}
	results, err := c.sess.Execute(ctx, sql)
	return c.writeResults(ctx, results, err)
}

// writeResults sends the outcomes of a statement batch and closes every
// result set.
func (c *conn) writeResults(ctx context.Context, results []session.ResultSet, execErr error) error {
	var ioErr error
	failed := false
	for i, rs := range results {
		if ioErr != nil || failed {
			if rs != nil {
				rs.Close()
			}
			continue
		}
		var more uint16
		if i < len(results)-1 || execErr != nil {
			more = mysql.ServerMoreResultsExists
		}
		if rs == nil {
			affected, lastID, warnings := c.sess.AffectedRows(), c.sess.LastInsertID(), c.sess.WarningCount()
			if ms, ok := c.sess.(MultiStatementSession); ok && len(results) > 1 {
				affected, lastID, warnings = ms.StatementOutcome(i)
			}
			ioErr = c.writeOKWith(affected, lastID, c.sess.Status()|more, warnings)
			continue
		}
		failed, ioErr = c.writeResultSet(ctx, rs, false, more)
		rs.Close()
	}
	if ioErr != nil {
		return ioErr
	}
	if failed {
		return nil
	}
	if execErr != nil {
		return c.writeError(execErr)
	}
	if len(results) == 0 {
		return c.writeOK()
	}
	return nil
}

// writeResultSet streams rs: column count, definitions, rows batch by batch
// and the closing EOF/OK. If rs.Next fails mid-way an ERR packet ends the
// set and failed is true. ioErr is an error writing to the client.
func (c *conn) writeResultSet(ctx context.Context, rs session.ResultSet, binary bool, more uint16) (failed bool, ioErr error) {
	p := c.pkt
	fields := rs.Fields()
	start := p.startPacket()
	p.wbuf = appendLenEncInt(p.wbuf, uint64(len(fields)))
	if err := p.endPacket(start); err != nil {
		return false, err
	}
	for _, f := range fields {
		start := p.startPacket()
		p.wbuf = appendColumnDef(p.wbuf, f)
		if err := p.endPacket(start); err != nil {
			return false, err
		}
	}
	if !c.deprecateEOF() {
		if err := c.writeEOF(c.sess.Status()|more, 0); err != nil {
			return false, err
		}
	}

	// Next gets a pointer to the connection's reused slice (a local would
	// escape to the heap on every call).
	c.rows = c.rows[:0]
	defer func() { clear(c.rows[:cap(c.rows)]) }()
	for {
		if err := rs.Next(ctx, &c.rows); err != nil {
			return true, c.writeError(err)
		}
		if len(c.rows) == 0 {
			break
		}
		for _, row := range c.rows {
			start := p.startPacket()
			if binary {
				p.wbuf = appendBinaryRow(p.wbuf, fields, row)
			} else {
				p.wbuf = appendTextRow(p.wbuf, fields, row)
			}
			if err := p.endPacket(start); err != nil {
				return false, err
			}
		}
	}
	return false, c.writeEnd(c.sess.Status()|more, c.sess.WarningCount())
}

// secondStatement reports whether sql holds more than one statement, that
// is a ';' outside quotes and comments followed by something other than
// blanks, semicolons and comments; rest is the text from that point.
func secondStatement(sql string, noBackslash bool) (rest string, ok bool) {
	semi := strings.IndexByte(sql, ';')
	if semi < 0 {
		return "", false
	}
	sawSemi := false
	for i := 0; i < len(sql); {
		ch := sql[i]
		switch {
		case ch == '\'' || ch == '"' || ch == '`':
			if sawSemi {
				return sql[i:], true
			}
			i = skipQuoted(sql, i, noBackslash || ch == '`')
		case ch == '#' || (ch == '-' && i+2 <= len(sql) && strings.HasPrefix(sql[i:], "--") &&
			(i+2 == len(sql) || sql[i+2] <= ' ')):
			j := strings.IndexByte(sql[i:], '\n')
			if j < 0 {
				return "", false
			}
			i += j + 1
		case ch == '/' && strings.HasPrefix(sql[i:], "/*"):
			j := strings.Index(sql[i+2:], "*/")
			if j < 0 {
				return "", false
			}
			i += j + 4
		case ch == ';':
			sawSemi = true
			i++
		case ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' || ch == '\v':
			i++
		default:
			if sawSemi {
				return sql[i:], true
			}
			i++
		}
	}
	return "", false
}

// skipQuoted returns the index just past the quoted string that opens at i.
// A doubled quote stands for itself; backslash escapes unless raw.
func skipQuoted(sql string, i int, raw bool) int {
	q := sql[i]
	i++
	for i < len(sql) {
		switch sql[i] {
		case '\\':
			if !raw {
				i += 2
				continue
			}
		case q:
			if i+1 < len(sql) && sql[i+1] == q {
				i += 2
				continue
			}
			return i + 1
		}
		i++
	}
	return len(sql)
}

package session

import (
	"context"
	"slices"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/types"
)

// Process describes one client connection of this node as SHOW
// PROCESSLIST and information_schema.PROCESSLIST show it.
type Process struct {
	ID      uint64
	User    string
	Host    string // host:port of the client
	DB      string // "" shows as NULL
	Command string // Sleep, Query, Execute, ...
	Time    int64  // seconds in the current command (or idle)
	State   string
	Info    string // the running statement's text
	HasInfo bool   // Info is NULL otherwise
}

// ProcessManager is the protocol layer's view of its connections, which
// the session needs for SHOW PROCESSLIST and KILL.
type ProcessManager interface {
	Processes() []Process
	// Kill interrupts connection id's running statement (query) or ends
	// the connection; false when there is no such connection.
	Kill(id uint64, query bool) bool
}

// SetProcessManager hands the backend its protocol layer's connections.
func (b *Backend) SetProcessManager(pm ProcessManager) { b.processes.Store(&pm) }

// processManager is the protocol layer's connections, or nil.
func (b *Backend) processManager() ProcessManager {
	if p := b.processes.Load(); p != nil {
		return *p
	}
	return nil
}

// mayListAllProcesses: PROCESS lets SHOW PROCESSLIST show every user's
// connections.
func (s *Session) mayListAllProcesses() bool { return s.privs().Global.Has(mysql.ProcessPriv) }

// mayKillAnyProcess: CONNECTION_ADMIN or SUPER lets KILL end another
// user's connection.
func (s *Session) mayKillAnyProcess() bool {
	m := s.privs()
	return m.Global.Has(mysql.SuperPriv) || m.HasDynamic("CONNECTION_ADMIN")
}

// infoTruncation is how much of a statement SHOW PROCESSLIST without FULL
// shows (MySQL's PROCESS_LIST_WIDTH).
const infoTruncation = 100

// processes lists the connections this session may see: every one with
// PROCESS, else its user's own. Without a protocol layer (embedded use,
// tests) it is this session alone.
func (s *Session) processes() []Process {
	var all []Process
	if pm := s.b.processManager(); pm != nil {
		all = pm.Processes()
	} else {
		db := s.db
		all = []Process{{ID: s.connID, User: s.user, Host: s.host, DB: db, Command: "Query", State: "executing"}}
	}
	if !s.mayListAllProcesses() {
		all = slices.DeleteFunc(all, func(p Process) bool { return p.User != s.user })
	}
	slices.SortFunc(all, func(a, b Process) int {
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
	return all
}

// processRows are information_schema.PROCESSLIST's rows (full Info), in
// MySQL 8's column order: ID, USER, HOST, DB, COMMAND, TIME, STATE, INFO.
func (s *Session) processRows(truncate bool) []types.Row {
	procs := s.processes()
	rows := make([]types.Row, 0, len(procs))
	for _, p := range procs {
		db, info := types.Datum{}, types.Datum{}
		if p.DB != "" {
			db = s2d(p.DB)
		}
		if p.HasInfo {
			text := p.Info
			if truncate && len(text) > infoTruncation {
				text = text[:infoTruncation]
			}
			info = s2d(text)
		}
		rows = append(rows, types.Row{types.NewUint(p.ID), s2d(p.User), s2d(p.Host), db, s2d(p.Command),
			types.NewInt(p.Time), s2d(p.State), info})
	}
	return rows
}

func (s *Session) showProcessList(x *ast.ShowStmt) (ResultSet, error) {
	fields := stringFields("Id", "User", "Host", "db", "Command", "Time", "State", "Info")
	fields[0].Type = types.FieldType{Tp: mysql.TypeLonglong, Flen: 21, Flag: mysql.UnsignedFlag | mysql.NotNullFlag}
	fields[5].Type = types.FieldType{Tp: mysql.TypeLong, Flen: 7, Flag: mysql.NotNullFlag}
	return &staticResultSet{fields: fields, rows: s.processRows(!x.Full)}, nil
}

// runKill implements KILL [CONNECTION | QUERY] id.
func (s *Session) runKill(ctx context.Context, x *ast.KillStmt) error {
	if x.TiDBExtension {
		return errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support KILL TIDB")
	}
	id := x.ConnectionID
	if x.Expr != nil {
		v, err := s.evalScalar(ctx, x.Expr)
		if err != nil {
			return err
		}
		n, ok := v.ToInt()
		if !ok || v.IsNull() {
			return errno.NewStd(mysql.ErrNoSuchThread, n)
		}
		id = uint64(n)
	}
	return s.kill(ctx, id, x.Query)
}

// kill interrupts or ends connection id on behalf of this session (also
// COM_PROCESS_KILL).
func (s *Session) kill(ctx context.Context, id uint64, query bool) error {
	if s.b.serverID != 0 && id>>connIDShift != s.b.serverID && id>>connIDShift != 0 {
		return s.remoteKill(ctx, id, query)
	}
	if s.b.processManager() == nil {
		return errno.NewStd(mysql.ErrNoSuchThread, id)
	}
	var target *Process
	for _, p := range s.b.processManager().Processes() {
		if p.ID == id {
			target = &p
			break
		}
	}
	if target == nil {
		return errno.NewStd(mysql.ErrNoSuchThread, id)
	}
	if target.User != s.user && !s.mayKillAnyProcess() {
		return errno.NewStd(mysql.ErrKillDenied, id)
	}
	if !s.b.processManager().Kill(id, query) {
		return errno.NewStd(mysql.ErrNoSuchThread, id)
	}
	if id == s.connID {
		// As MySQL: a session that kills itself sees its KILL interrupted.
		return errno.NewStd(mysql.ErrQueryInterrupted)
	}
	return nil
}

// Kill is COM_PROCESS_KILL: KILL CONNECTION id.
func (s *Session) Kill(id uint64) error { return s.kill(context.Background(), id, false) }

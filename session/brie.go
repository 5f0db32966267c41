package session

import (
	"context"
	"strings"
	"time"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/br"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/types"
)

// runBRIE runs BACKUP DATABASE ... TO 'uri' and RESTORE DATABASE ... FROM
// 'uri' (package br does the work). Like DDL it first commits the open
// transaction. It answers one row, as TiDB: Destination, Size (bytes of
// the backup's data files), BackupTS, Queue Time, Execution Time.
func (s *Session) runBRIE(ctx context.Context, x *ast.BRIEStmt) (ResultSet, error) {
	if x.Kind != ast.BRIEKindBackup && x.Kind != ast.BRIEKindRestore {
		return nil, errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support %s", x.Kind.String())
	}
	if len(x.Tables) > 0 {
		return nil, errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support %s TABLE; %s DATABASE instead", x.Kind.String(), strings.ToLower(x.Kind.String()))
	}
	var concurrency int
	checksum := true
	for _, o := range x.Options {
		switch o.Tp {
		case ast.BRIEOptionConcurrency:
			concurrency = int(min(o.UintValue, 64))
		case ast.BRIEOptionChecksum:
			checksum = ast.BRIEOptionLevel(o.UintValue) != ast.BRIEOptionLevelOff
		default:
			return nil, errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support the %s option of %s", o.Tp.String(), x.Kind.String())
		}
	}
	if x.Kind == ast.BRIEKindRestore && s.readOnlySession() {
		return nil, errno.NewStd(mysql.ErrCantExecuteInReadOnlyTransaction)
	}
	if err := s.commitTxn(ctx); err != nil {
		return nil, err
	}
	queued := time.Now()
	s.b.brMu.Lock()
	defer s.b.brMu.Unlock()
	started := time.Now()
	var meta *br.Meta
	var err error
	if x.Kind == ast.BRIEKindBackup {
		meta, err = br.Backup(ctx, s.b.store, x.Schemas, x.Storage, br.BackupOptions{Concurrency: concurrency, AllowedDirs: s.b.cfg.BackupDirs})
	} else {
		meta, err = br.Restore(ctx, s.b.store, s.b.catalog, x.Schemas, x.Storage, br.RestoreOptions{Concurrency: concurrency, SkipChecksum: !checksum, AllowedDirs: s.b.cfg.BackupDirs})
	}
	if err != nil {
		return nil, err
	}
	fields := stringFields("Destination", "Size", "BackupTS", "Queue Time", "Execution Time")
	fields[1].Type = types.FieldType{Tp: mysql.TypeLonglong, Flen: 20, Flag: mysql.UnsignedFlag | mysql.NotNullFlag}
	fields[2].Type = fields[1].Type
	fields[3].Type = types.FieldType{Tp: mysql.TypeDatetime, Flen: 19}
	fields[4].Type = fields[3].Type
	row := types.Row{
		types.NewString(x.Storage),
		types.NewUint(uint64(meta.Size())),
		types.NewUint(meta.BackupTS),
		types.NewTime(types.TimeFieldsOf(queued), mysql.TypeDatetime, 0),
		types.NewTime(types.TimeFieldsOf(started), mysql.TypeDatetime, 0),
	}
	return &staticResultSet{fields: fields, rows: []types.Row{row}}, nil
}

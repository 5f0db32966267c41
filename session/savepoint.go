package session

import (
	"context"
	"maps"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/sql/catalog"
)

// savepoint is a named point in the open transaction (SAVEPOINT name).
// Its writes live in the transaction buffer's staging of the same handle,
// the mechanism a failed statement uses to undo only itself: statements
// open their stagings above it and release or clean up only their own.
type savepoint struct {
	name  string
	stage kv.StagingHandle
	// tables is the transaction's written-table set when it was set, so
	// ROLLBACK TO does not keep checking at commit a table whose writes it
	// undid.
	tables map[int64]*catalog.TableInfo
}

// setSavepoint runs SAVEPOINT name. As MySQL, outside a transaction
// (autocommit on, none begun) it succeeds and records nothing; with
// autocommit off it belongs to the transaction that implies.
func (s *Session) setSavepoint(ctx context.Context, name string) error {
	if err := s.ensureImplicitTxn(ctx); err != nil {
		return err
	}
	if s.txn == nil {
		return nil
	}
	// A savepoint of the same name is dropped (only it: later ones stay,
	// as MySQL). Its staging stays open, unnamed, since later stagings
	// are numbered above it; it is closed with the transaction or by a
	// ROLLBACK TO / RELEASE of an earlier savepoint.
	if i := s.findSavepoint(name); i >= 0 {
		s.savepoints = append(s.savepoints[:i], s.savepoints[i+1:]...)
	}
	s.savepoints = append(s.savepoints, savepoint{name: name, stage: s.txn.Staging(), tables: maps.Clone(s.txnTables)})
	return nil
}

// rollbackToSavepoint runs ROLLBACK TO SAVEPOINT name: the writes made
// since it are undone and the savepoints set after it dropped; it stays.
// Locks taken since it are kept (InnoDB keeps them too: the transaction
// still commits or rolls them back), and so are AUTO_INCREMENT values
// handed out.
func (s *Session) rollbackToSavepoint(name string) error {
	i := s.findSavepoint(name)
	if i < 0 {
		return errno.NewStd(mysql.ErrSpDoesNotExist, "SAVEPOINT", name)
	}
	sp := &s.savepoints[i]
	s.txn.Cleanup(sp.stage)
	sp.stage = s.txn.Staging()
	s.txnTables = maps.Clone(sp.tables)
	s.savepoints = s.savepoints[:i+1]
	return nil
}

// releaseSavepoint runs RELEASE SAVEPOINT name: it and the savepoints set
// after it are dropped; the writes stay in the transaction.
func (s *Session) releaseSavepoint(name string) error {
	i := s.findSavepoint(name)
	if i < 0 {
		return errno.NewStd(mysql.ErrSpDoesNotExist, "SAVEPOINT", name)
	}
	s.txn.Release(s.savepoints[i].stage)
	s.savepoints = s.savepoints[:i]
	return nil
}

// findSavepoint is the index of the open transaction's savepoint called
// name (compared case-insensitively, as MySQL compares identifiers of its
// system character set), or -1.
func (s *Session) findSavepoint(name string) int {
	for i := range s.savepoints {
		if strings.EqualFold(s.savepoints[i].name, name) {
			return i
		}
	}
	return -1
}

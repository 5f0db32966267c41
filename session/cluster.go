package session

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/kv/metakey"
)

// Several SQL nodes can share one store (a cluster). What a node keeps in
// memory and another node can change is brought up to date here:
//
//   - the schema: the catalog reloads it when the stored schema version
//     moved (a background refresh every Config.SchemaSyncInterval, before
//     every commit that wrote tables, and when a statement names a table,
//     database or column this node does not know yet); the node registers
//     a schema-version record that online schema changes wait for, renewed
//     with the refresh, and holds a schema lease (catalog/nodes.go);
//   - global system variables: SET GLOBAL persists the value in kv (under
//     globalVarPrefix), every node loads them at start and re-reads them
//     on the same interval, so `set global tidb_enable_1pc = 0` sent
//     through a load balancer reaches every SQL node within that interval.
//
// Embedded mode persists globals too (they survive a restart) but runs no
// background refresh: it is the only node.

// globalVarPrefix holds persisted global variables: key prefix + name,
// value the normalized value.
var globalVarPrefix = kv.Key(metakey.GlobalVarPrefix)

func globalVarKey(name string) kv.Key {
	return append(append(kv.Key{}, globalVarPrefix...), name...)
}

// persistGlobal stores a SET GLOBAL value (one 1PC write; a concurrent SET
// of the same variable on another node is retried: last writer wins).
func (b *Backend) persistGlobal(ctx context.Context, name, val string) error {
	for attempt := 0; ; attempt++ {
		txn, err := b.store.Begin(ctx, kv.TxnOptions{Mode: kv.Optimistic, Enable1PC: true})
		if err != nil {
			return err
		}
		if err := txn.Set(globalVarKey(name), []byte(val)); err != nil {
			_ = txn.Rollback()
			return err
		}
		err = txn.Commit(ctx)
		if err == nil || !errors.Is(err, kv.ErrWriteConflict) || attempt >= 10 {
			return err
		}
	}
}

// loadGlobals reads the persisted global variables into memory.
func (b *Backend) loadGlobals(ctx context.Context) error {
	ts, err := b.store.CurrentTS(ctx)
	if err != nil {
		return err
	}
	it, err := b.store.GetSnapshot(ts).Iter(ctx, globalVarPrefix, globalVarPrefix.PrefixNext())
	if err != nil {
		return err
	}
	defer it.Close()
	vals := map[string]string{}
	for it.Valid() {
		name := string(it.Key()[len(globalVarPrefix):])
		if _, known := sysVars[name]; known {
			vals[name] = string(it.Value())
		}
		if err := it.Next(); err != nil {
			return err
		}
	}
	b.globals.mu.Lock()
	for k, v := range vals {
		b.globals.vals[k] = v
	}
	b.globals.gen.Add(1)
	b.globals.mu.Unlock()
	return nil
}

// sync refreshes the schema and the global variables every interval until
// ctx ends.
func (b *Backend) sync(ctx context.Context, interval time.Duration, log *slog.Logger) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.catalog.Sync(ctx, interval, log)
	}()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			<-done
			return
		case <-t.C:
		}
		lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_ = b.loadGlobals(lctx)      // a failure is retried on the next tick
		_ = b.privs.Reload(lctx)     // likewise
		_ = b.takeKillRequests(lctx) // likewise
		cancel()
	}
}

// Close stops the background refresh (if any). It does not close the
// storage.
func (b *Backend) Close() {
	if b.stopSync != nil {
		b.stopSync()
		<-b.syncDone
	}
}

// staleSchemaErr reports whether err may come from this node not knowing
// a table, database or column another node created.
func staleSchemaErr(err error) bool {
	var se *errno.SQLError
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code {
	case mysql.ErrNoSuchTable, mysql.ErrBadDB, mysql.ErrBadField, mysql.ErrViewInvalid:
		return true
	}
	return false
}

// refreshedAfter reports whether a statement that failed with err, having
// started under schema version before, should run again: several nodes
// share the store, the error names an unknown object, and the schema this
// node has after a reload is newer than before (the background refresh
// may have loaded it meanwhile). Such errors come from name resolution,
// before the statement changed anything.
func (s *Session) refreshedAfter(ctx context.Context, err error, before int64) bool {
	if !s.b.syncing || !staleSchemaErr(err) {
		return false
	}
	if _, rerr := s.b.catalog.Refresh(ctx); rerr != nil {
		return false
	}
	return s.b.catalog.InfoSchema().Version() > before
}

// SchemaVersion is the version of the schema this node currently serves.
func (b *Backend) SchemaVersion() int64 { return b.catalog.InfoSchema().Version() }

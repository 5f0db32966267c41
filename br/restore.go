package br

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/sql/catalog"
	"github.com/shoaldb/shoal/tablecodec"
)

// RestoreOptions tune a restore.
type RestoreOptions struct {
	// Concurrency is how many files are verified or written at once (4 if 0).
	Concurrency int
	// AllowedDirs are the directories a local source must lie in (see
	// OpenStorage); none: every source is refused.
	AllowedDirs []string
	// BatchKeys and BatchBytes bound one write transaction (4096 keys and
	// 8 MiB if 0): large enough to amortize a commit, small enough to
	// stay far from any transaction size limit.
	BatchKeys  int
	BatchBytes int
	// SkipChecksum skips the final check of the restored tables against
	// the backup's checksums (the files are verified before writing
	// either way).
	SkipChecksum bool
	// Rename maps a backed-up database name (lower case) to the name it is
	// restored as; databases not in it keep their names.
	Rename map[string]string
}

// Restore restores the named databases (every database of the backup when
// dbs is empty) from the backup at uri through cat, and returns the
// backup's meta. Errors are SQL errors: 1049 for a database the backup
// does not hold, 1050 for a table that already exists, 8125 for everything
// else (no or corrupted backup, storage, kv).
func Restore(ctx context.Context, store kv.Storage, cat *catalog.Catalog, dbs []string, uri string, opts RestoreOptions) (*Meta, error) {
	m, err := restore(ctx, store, cat, dbs, uri, opts)
	return m, asSQLError(err, ErrCodeRestoreFailed, "Restore")
}

// restoredTable is a backed-up table and the ID it was created under.
type restoredTable struct {
	backup *TableBackup
	newID  int64
}

func restore(ctx context.Context, store kv.Storage, cat *catalog.Catalog, dbs []string, uri string, opts RestoreOptions) (*Meta, error) {
	ext, err := OpenStorage(uri, opts.AllowedDirs)
	if err != nil {
		return nil, err
	}
	return restoreFrom(ctx, store, cat, dbs, ext, opts)
}

func restoreFrom(ctx context.Context, store kv.Storage, cat *catalog.Catalog, dbs []string, ext ExternalStorage, opts RestoreOptions) (*Meta, error) {
	if opts.BatchKeys <= 0 {
		opts.BatchKeys = 4096
	}
	if opts.BatchBytes <= 0 {
		opts.BatchBytes = 8 << 20
	}
	uri := ext.URI()
	meta, err := ReadMeta(ext)
	if err != nil {
		return nil, err
	}
	selected, err := selectDBs(meta, dbs, uri)
	if err != nil {
		return nil, err
	}
	if err := verifyFiles(ctx, ext, selected, opts.Concurrency); err != nil {
		return nil, err
	}
	tables, createdDBs, err := createTables(ctx, cat, selected, opts.Rename)
	if err != nil {
		return nil, err
	}
	if err := writeTables(ctx, store, ext, tables, opts); err != nil {
		return nil, errors.Join(err, undoCreate(store, cat, tables, createdDBs, opts.BatchKeys))
	}
	if !opts.SkipChecksum {
		if err := checkRestored(ctx, store, tables, opts.Concurrency); err != nil {
			return nil, errors.Join(err, undoCreate(store, cat, tables, createdDBs, opts.BatchKeys))
		}
	}
	return meta, nil
}

// selectDBs picks the databases to restore from the backup.
func selectDBs(meta *Meta, names []string, uri string) ([]*DBBackup, error) {
	if len(names) == 0 {
		return meta.Databases, nil
	}
	var out []*DBBackup
	for _, name := range names {
		var found *DBBackup
		for _, db := range meta.Databases {
			if strings.EqualFold(db.Info.Name, name) {
				found = db
			}
		}
		if found == nil {
			return nil, errno.New(mysql.ErrBadDB, "Unknown database '%s' in the backup at %s", name, uri)
		}
		out = append(out, found)
	}
	return out, nil
}

// verifyFiles reads every file of the selected tables and checks it
// against the meta (size, CRC32, entry count, key range inside the table)
// and each table's keys against its checksum, before anything is created.
func verifyFiles(ctx context.Context, ext ExternalStorage, dbs []*DBBackup, workers int) error {
	type fileJob struct {
		table *TableBackup
		file  *FileMeta
		sum   TableChecksum
	}
	var jobs []*fileJob
	for _, db := range dbs {
		for _, t := range db.Tables {
			prefix := kv.Key(tablecodec.TablePrefix(t.Info.ID))
			for _, f := range t.Files {
				if !strings.HasPrefix(string(f.StartKey), string(prefix)) || string(f.EndKey) > string(prefix.PrefixNext()) {
					return fmt.Errorf("%w: %s covers [%x, %x), outside table %s", errCorrupt, f.Name, f.StartKey, f.EndKey, t.Info.Name)
				}
				jobs = append(jobs, &fileJob{table: t, file: f})
			}
		}
	}
	err := forEachParallel(ctx, workers, len(jobs), func(ctx context.Context, i int) error {
		j := jobs[i]
		return readDataFile(ext, j.file, func(k, v []byte) error {
			j.sum.add(k, v)
			return nil
		})
	})
	if err != nil {
		return err
	}
	sums := map[*TableBackup]*TableChecksum{}
	for _, j := range jobs {
		if sums[j.table] == nil {
			sums[j.table] = &TableChecksum{}
		}
		sums[j.table].merge(j.sum)
	}
	for _, db := range dbs {
		for _, t := range db.Tables {
			got := TableChecksum{}
			if s := sums[t]; s != nil {
				got = *s
			}
			if got != t.Checksum {
				return fmt.Errorf("%w: the files of %s.%s sum to %+v, backupmeta says %+v", errCorrupt, db.Info.Name, t.Info.Name, got, t.Checksum)
			}
		}
	}
	return nil
}

// createTables creates the databases that do not exist and every table,
// under new IDs, in one DDL, with their id allocators moved past the
// backed-up ids. It fails with 1050 if any table exists.
func createTables(ctx context.Context, cat *catalog.Catalog, dbs []*DBBackup, rename map[string]string) ([]restoredTable, []string, error) {
	var tables []restoredTable
	var createdDBs []string
	err := cat.DDL(ctx, func(m *catalog.Mutator) error {
		// The DDL may run this again (a conflict with another node's DDL).
		tables, createdDBs = tables[:0], createdDBs[:0]
		for _, dbb := range dbs {
			name := dbb.Info.Name
			if to, ok := rename[strings.ToLower(name)]; ok {
				name = to
			}
			db := m.Schema().DB(name)
			if db == nil {
				id, err := m.GenID()
				if err != nil {
					return err
				}
				nd := *dbb.Info
				nd.ID, nd.Name = id, name
				if err := m.PutDB(&nd); err != nil {
					return err
				}
				db = &nd
				createdDBs = append(createdDBs, name)
			}
			for _, tb := range dbb.Tables {
				if m.Schema().Table(name, tb.Info.Name) != nil {
					return errno.NewStd(mysql.ErrTableExists, tb.Info.Name)
				}
				id, err := m.GenID()
				if err != nil {
					return err
				}
				nt := tb.Info.Clone()
				nt.ID = id
				if err := m.PutTable(db, nt); err != nil {
					return err
				}
				if tb.AutoIDBase > 0 {
					if err := m.SetAutoIDMark(id, tb.AutoIDBase); err != nil {
						return err
					}
				}
				tables = append(tables, restoredTable{backup: tb, newID: id})
			}
		}
		return nil
	})
	return tables, createdDBs, err
}

// writeTables writes every file's keys under the new table IDs.
func writeTables(ctx context.Context, store kv.Storage, ext ExternalStorage, tables []restoredTable, opts RestoreOptions) error {
	type fileJob struct {
		file  *FileMeta
		newID int64
	}
	var jobs []fileJob
	for _, t := range tables {
		for _, f := range t.backup.Files {
			jobs = append(jobs, fileJob{file: f, newID: t.newID})
		}
	}
	return forEachParallel(ctx, opts.Concurrency, len(jobs), func(ctx context.Context, i int) error {
		j := jobs[i]
		newPrefix := tablecodec.TablePrefix(j.newID)
		b := &batchWriter{store: store, maxKeys: opts.BatchKeys, maxBytes: opts.BatchBytes}
		err := readDataFile(ext, j.file, func(k, v []byte) error {
			nk := make([]byte, 0, len(newPrefix)+len(k)-tablePrefixLen)
			nk = append(append(nk, newPrefix...), k[tablePrefixLen:]...)
			return b.set(ctx, nk, append([]byte{}, v...))
		})
		if err != nil {
			return err
		}
		return b.flush(ctx)
	})
}

// batchWriter writes keys in transactions of bounded size.
type batchWriter struct {
	store    kv.Storage
	maxKeys  int
	maxBytes int
	keys     []kv.Key
	values   [][]byte // nil value: delete
	bytes    int
}

func (b *batchWriter) set(ctx context.Context, k kv.Key, v []byte) error {
	b.keys = append(b.keys, k)
	b.values = append(b.values, v)
	b.bytes += len(k) + len(v)
	if len(b.keys) >= b.maxKeys || b.bytes >= b.maxBytes {
		return b.flush(ctx)
	}
	return nil
}

// maxBatchRetries bounds the retries of one batch on write conflicts (only
// a concurrent writer on the new tables causes them).
const maxBatchRetries = 5

func (b *batchWriter) flush(ctx context.Context) error {
	if len(b.keys) == 0 {
		return nil
	}
	var err error
	for attempt := 0; attempt <= maxBatchRetries; attempt++ {
		if err = b.commitOnce(ctx); err == nil || !errors.Is(err, kv.ErrWriteConflict) {
			break
		}
		time.Sleep(time.Duration(attempt+1) * 10 * time.Millisecond)
	}
	b.keys, b.values, b.bytes = b.keys[:0], b.values[:0], 0
	return err
}

func (b *batchWriter) commitOnce(ctx context.Context) error {
	txn, err := b.store.Begin(ctx, kv.TxnOptions{Mode: kv.Optimistic, Enable1PC: true})
	if err != nil {
		return err
	}
	for i, k := range b.keys {
		if b.values[i] == nil {
			err = txn.Delete(k)
		} else {
			err = txn.Set(k, b.values[i])
		}
		if err != nil {
			_ = txn.Rollback()
			return err
		}
	}
	if err := txn.Commit(ctx); err != nil {
		_ = txn.Rollback()
		return err
	}
	return nil
}

// checkRestored compares every restored table, read at a fresh timestamp,
// with its backup's checksum.
func checkRestored(ctx context.Context, store kv.Storage, tables []restoredTable, workers int) error {
	ts, err := store.CurrentTS(ctx)
	if err != nil {
		return err
	}
	snap := store.GetSnapshot(ts)
	return forEachParallel(ctx, workers, len(tables), func(ctx context.Context, i int) error {
		t := tables[i]
		got, err := ChecksumTable(ctx, snap, t.newID)
		if err != nil {
			return err
		}
		if got != t.backup.Checksum {
			return fmt.Errorf("restored table %s does not match its backup: checksum %+v, backup %+v", t.backup.Info.Name, got, t.backup.Checksum)
		}
		return nil
	})
}

// undoTimeout bounds the cleanup of a failed restore.
const undoTimeout = 2 * time.Minute

// undoCreate removes what a failed restore created: the keys it wrote, its
// tables and the databases it created. It runs on its own context: the
// restore's may be the reason it failed.
func undoCreate(store kv.Storage, cat *catalog.Catalog, tables []restoredTable, createdDBs []string, batchKeys int) error {
	ctx, cancel := context.WithTimeout(context.Background(), undoTimeout)
	defer cancel()
	for _, t := range tables {
		if err := deletePrefix(ctx, store, kv.Key(tablecodec.TablePrefix(t.newID)), batchKeys); err != nil {
			return fmt.Errorf("cleaning up the failed restore: %w", err)
		}
	}
	err := cat.DDL(ctx, func(m *catalog.Mutator) error {
		for _, t := range tables {
			nt := m.Schema().TableByID(t.newID)
			if nt == nil {
				continue
			}
			for _, db := range m.Schema().DBs() {
				if db.ID == nt.DBID {
					if err := m.DropTable(db, nt); err != nil {
						return err
					}
				}
			}
		}
		for _, name := range createdDBs {
			if db := m.Schema().DB(name); db != nil && len(m.Schema().Tables(name)) == 0 {
				if err := m.DropDB(db); err != nil {
					return err
				}
			}
		}
		return nil
	})
	for _, t := range tables {
		cat.ResetAutoID(t.newID)
	}
	if err != nil {
		return fmt.Errorf("cleaning up the failed restore: %w", err)
	}
	return nil
}

// deletePrefix deletes every key under prefix in bounded transactions.
func deletePrefix(ctx context.Context, store kv.Storage, prefix kv.Key, batchKeys int) error {
	b := &batchWriter{store: store, maxKeys: batchKeys, maxBytes: 8 << 20}
	ts, err := store.CurrentTS(ctx)
	if err != nil {
		return err
	}
	it, err := store.GetSnapshot(ts).Iter(ctx, prefix, prefix.PrefixNext())
	if err != nil {
		return err
	}
	defer it.Close()
	for it.Valid() {
		if err := b.set(ctx, append(kv.Key(nil), it.Key()...), nil); err != nil {
			return err
		}
		if err := it.Next(); err != nil {
			return err
		}
	}
	return b.flush(ctx)
}

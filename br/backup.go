package br

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/sql/catalog"
	"github.com/shoaldb/shoal/tablecodec"
)

// BackupOptions tune a backup.
type BackupOptions struct {
	// Concurrency is how many ranges are read at once (4 if 0).
	Concurrency int
	// AllowedDirs are the directories a local destination must lie in
	// (see OpenStorage); none: every destination is refused.
	AllowedDirs []string
}

// Backup writes a backup of the named databases (every database when dbs
// is empty) as of one timestamp to the storage named by uri, and returns
// its meta. Errors are SQL errors: 1049 for an unknown database, 8124 for
// everything else (destination in use, storage, kv).
func Backup(ctx context.Context, store kv.Storage, dbs []string, uri string, opts BackupOptions) (*Meta, error) {
	m, err := backup(ctx, store, dbs, uri, opts)
	return m, asSQLError(err, ErrCodeBackupFailed, "Backup")
}

// backupJob is one range of one table, written to one file.
type backupJob struct {
	table *TableBackup
	rng   KeyRange
	name  string
	// results, filled by the worker
	file      *FileMeta // nil when the range held no keys
	sum       TableChecksum
	maxHandle int64
}

func backup(ctx context.Context, store kv.Storage, dbs []string, uri string, opts BackupOptions) (*Meta, error) {
	ext, err := OpenStorage(uri, opts.AllowedDirs)
	if err != nil {
		return nil, err
	}
	return backupTo(ctx, store, dbs, ext, opts)
}

func backupTo(ctx context.Context, store kv.Storage, dbs []string, ext ExternalStorage, opts BackupOptions) (*Meta, error) {
	uri := ext.URI()
	if ok, err := ext.Exists(metaFileName); err != nil {
		return nil, err
	} else if ok {
		return nil, fmt.Errorf("destination %s already holds a backup (backupmeta exists); choose an empty location", uri)
	}
	// The pinning transaction takes the backup timestamp from the TSO and,
	// while open, keeps the GC safe point below it (see package doc). It
	// is begun before the lock file so a failure here leaves no lock.
	pin, err := store.Begin(ctx, kv.TxnOptions{Mode: kv.Optimistic})
	if err != nil {
		return nil, err
	}
	defer pin.Rollback()
	ts := pin.StartTS()
	snap := store.GetSnapshot(ts)
	is, err := catalog.LoadSchema(ctx, snap)
	if err != nil {
		return nil, err
	}
	var selected []*catalog.DBInfo
	if len(dbs) == 0 {
		selected = is.DBs()
	}
	for _, name := range dbs {
		db := is.DB(name)
		if db == nil {
			return nil, errno.NewStd(mysql.ErrBadDB, name)
		}
		selected = append(selected, db)
	}
	if err := ext.CreateExclusive(lockFileName); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("destination %s holds %s: another backup is writing there or one failed there; choose an empty location", uri, lockFileName)
		}
		return nil, err
	}
	meta := &Meta{Version: metaVersion, BackupTS: ts, StartedAt: time.Now().UTC()}
	var jobs []*backupJob
	for _, db := range selected {
		dbb := &DBBackup{Info: db}
		meta.Databases = append(meta.Databases, dbb)
		for _, t := range is.Tables(db.Name) {
			tb := &TableBackup{Info: t, Files: []*FileMeta{}}
			dbb.Tables = append(dbb.Tables, tb)
			if t.View != "" {
				continue // a view is schema only
			}
			if tb.AutoIDBase, err = catalog.AutoIDMark(ctx, snap, t.ID); err != nil {
				return nil, err
			}
			ranges, err := tableRanges(ctx, store, snap, t)
			if err != nil {
				return nil, err
			}
			for i, r := range ranges {
				jobs = append(jobs, &backupJob{table: tb, rng: r, name: fmt.Sprintf("data/%d_%d.sbr", t.ID, i)})
			}
		}
	}
	err = forEachParallel(ctx, opts.Concurrency, len(jobs), func(ctx context.Context, i int) error {
		return backupRange(ctx, ext, snap, jobs[i])
	})
	if err != nil {
		return nil, err
	}
	// Jobs were appended table by table in key order, so each table's
	// files stay in key order.
	for _, j := range jobs {
		if j.file != nil {
			j.table.Files = append(j.table.Files, j.file)
		}
		j.table.Checksum.merge(j.sum)
		j.table.AutoIDBase = max(j.table.AutoIDBase, j.maxHandle)
	}
	meta.EndedAt = time.Now().UTC()
	if err := writeMeta(ext, meta); err != nil {
		return nil, err
	}
	return meta, nil
}

// backupRange copies the keys of j.rng at the snapshot into a data file.
func backupRange(ctx context.Context, ext ExternalStorage, snap kv.Snapshot, j *backupJob) error {
	it, err := snap.Iter(ctx, j.rng.Start, j.rng.End)
	if err != nil {
		return err
	}
	defer it.Close()
	if !it.Valid() {
		return nil // an empty range gets no file
	}
	w, err := ext.Create(j.name)
	if err != nil {
		return err
	}
	dw, err := newDataFileWriter(w)
	if err != nil {
		w.Abort()
		return err
	}
	for it.Valid() {
		k, v := it.Key(), it.Value()
		if err := dw.add(k, v); err != nil {
			w.Abort()
			return err
		}
		j.sum.add(k, v)
		if tablecodec.IsRecordKey(k) {
			if _, h, err := tablecodec.DecodeRecordKey(k); err == nil && h.IsInt() {
				j.maxHandle = max(j.maxHandle, h.IntValue())
			}
		}
		if err := it.Next(); err != nil {
			w.Abort()
			return err
		}
		if dw.kvs%4096 == 0 && ctx.Err() != nil {
			w.Abort()
			return ctx.Err() // a cancelled statement or another range failed
		}
	}
	if err := dw.commit(); err != nil {
		return err
	}
	j.file = &FileMeta{Name: j.name, StartKey: j.rng.Start, EndKey: j.rng.End, KVs: dw.kvs, Size: dw.size, CRC32: dw.crc.Sum32()}
	return nil
}

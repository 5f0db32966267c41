package br

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/shoaldb/shoal/embedded"
	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/sql/catalog"
	"github.com/shoaldb/shoal/tablecodec"
)

// rawTable creates database db with one int-handle table with one index
// through the catalog, and writes rows row keys and as many index keys
// as raw kv (backup copies bytes; it does not decode rows).
func rawTable(t *testing.T, rows int) (kv.Storage, *catalog.TableInfo) {
	t.Helper()
	ctx := context.Background()
	s, err := embedded.Open(t.TempDir(), embedded.Options{NoSync: true, BlockCacheSize: 8 << 20, MemTableSize: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	cat, err := catalog.Open(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	var tbl *catalog.TableInfo
	err = cat.DDL(ctx, func(m *catalog.Mutator) error {
		dbID, _ := m.GenID()
		db := &catalog.DBInfo{ID: dbID, Name: "db"}
		if err := m.PutDB(db); err != nil {
			return err
		}
		id, _ := m.GenID()
		tbl = &catalog.TableInfo{ID: id, Name: "t", MaxIndexID: 1,
			Indices: []*catalog.IndexInfo{{ID: 1, Name: "k", Columns: []*catalog.IndexColumn{}}}}
		return m.PutTable(db, tbl)
	})
	if err != nil {
		t.Fatal(err)
	}
	txn, err := s.Begin(ctx, kv.TxnOptions{Mode: kv.Optimistic})
	if err != nil {
		t.Fatal(err)
	}
	for h := 1; h <= rows; h++ {
		txn.Set(tablecodec.EncodeIntHandleKey(nil, tbl.ID, int64(h)), []byte(fmt.Sprintf("row%d", h)))
		txn.Set(append(tablecodec.IndexPrefix(tbl.ID, 1), byte(h), byte(h>>8)), []byte("0"))
	}
	if err := txn.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	return s, tbl
}

// recordingStorage records the order in which files are published and can
// fail the publication of one of them.
type recordingStorage struct {
	ExternalStorage
	mu        sync.Mutex
	published []string
	failOn    string // a file name whose Commit fails
}

type recordingFile struct {
	FileWriter
	s    *recordingStorage
	name string
}

func (s *recordingStorage) Create(name string) (FileWriter, error) {
	w, err := s.ExternalStorage.Create(name)
	if err != nil {
		return nil, err
	}
	return &recordingFile{FileWriter: w, s: s, name: name}, nil
}

func (s *recordingStorage) CreateExclusive(name string) error {
	if err := s.ExternalStorage.CreateExclusive(name); err != nil {
		return err
	}
	s.mu.Lock()
	s.published = append(s.published, name)
	s.mu.Unlock()
	return nil
}

func (f *recordingFile) Commit() error {
	if f.name == f.s.failOn {
		f.Abort()
		return errors.New("injected write failure")
	}
	if err := f.FileWriter.Commit(); err != nil {
		return err
	}
	f.s.mu.Lock()
	f.s.published = append(f.s.published, f.name)
	f.s.mu.Unlock()
	return nil
}

func localAt(t *testing.T, dir string) ExternalStorage {
	ext, err := OpenStorage("local://"+dir, []string{dir})
	if err != nil {
		t.Fatal(err)
	}
	return ext
}

// TestMetaWrittenLast: the lock comes first, every data file before the
// backupmeta, and the backupmeta last.
func TestMetaWrittenLast(t *testing.T) {
	s, _ := rawTable(t, 500)
	rec := &recordingStorage{ExternalStorage: localAt(t, filepath.Join(t.TempDir(), "bk"))}
	meta, err := backupTo(context.Background(), s, []string{"db"}, rec, BackupOptions{Concurrency: 3})
	if err != nil {
		t.Fatal(err)
	}
	files := meta.Databases[0].Tables[0].Files
	if len(rec.published) != len(files)+2 || len(files) < 2 {
		t.Fatalf("published %v for %d data files", rec.published, len(files))
	}
	if rec.published[0] != lockFileName || rec.published[len(rec.published)-1] != metaFileName {
		t.Fatalf("publication order %v: want %s first and %s last", rec.published, lockFileName, metaFileName)
	}
}

// TestFailedBackupLeavesNoMeta: a backup whose data file fails to be
// written publishes no backupmeta, so nothing can restore it, and its lock
// keeps a new backup out of the half-written directory.
func TestFailedBackupLeavesNoMeta(t *testing.T) {
	s, tbl := rawTable(t, 500)
	dir := filepath.Join(t.TempDir(), "bk")
	rec := &recordingStorage{ExternalStorage: localAt(t, dir), failOn: fmt.Sprintf("data/%d_3.sbr", tbl.ID)}
	if _, err := backupTo(context.Background(), s, []string{"db"}, rec, BackupOptions{}); err == nil || !strings.Contains(err.Error(), "injected") {
		t.Fatalf("backup with a failing file: %v", err)
	}
	if ok, _ := rec.Exists(metaFileName); ok {
		t.Fatal("a failed backup published its backupmeta")
	}
	if _, err := ReadMeta(rec); !errors.Is(err, errNoBackup) {
		t.Fatalf("reading the failed backup: %v, want no backup", err)
	}
	_, err := Backup(context.Background(), s, []string{"db"}, "local://"+dir, BackupOptions{AllowedDirs: []string{dir}})
	if err == nil || !strings.Contains(err.Error(), lockFileName) {
		t.Fatalf("second backup into a failed one's directory: %v", err)
	}
}

// TestDefaultSplitCoversTable: the ranges are contiguous and cover the
// table's prefix exactly, with the rows cut into several pieces.
func TestDefaultSplitCoversTable(t *testing.T) {
	s, tbl := rawTable(t, 1000)
	ctx := context.Background()
	ts, _ := s.CurrentTS(ctx)
	ranges, err := defaultSplit(ctx, s.GetSnapshot(ts), tbl)
	if err != nil {
		t.Fatal(err)
	}
	prefix := kv.Key(tablecodec.TablePrefix(tbl.ID))
	if !bytes.Equal(ranges[0].Start, prefix) || !bytes.Equal(ranges[len(ranges)-1].End, prefix.PrefixNext()) {
		t.Fatalf("ranges %x do not span the table prefix", ranges)
	}
	for i := 1; i < len(ranges); i++ {
		if !bytes.Equal(ranges[i-1].End, ranges[i].Start) || bytes.Compare(ranges[i].Start, ranges[i].End) >= 0 {
			t.Fatalf("ranges %d and %d are not contiguous and non-empty", i-1, i)
		}
	}
	if len(ranges) < recordSplits {
		t.Fatalf("%d ranges: the rows were not split", len(ranges))
	}
}

// flakyStorage fails the n-th Open of one file.
type flakyStorage struct {
	ExternalStorage
	mu    sync.Mutex
	name  string
	opens int
	failN int
}

func (s *flakyStorage) Open(name string) (io.ReadCloser, error) {
	s.mu.Lock()
	if name == s.name {
		s.opens++
		if s.opens == s.failN {
			s.mu.Unlock()
			return nil, errors.New("injected read failure")
		}
	}
	s.mu.Unlock()
	return s.ExternalStorage.Open(name)
}

// TestFailedRestoreIsUndone: a restore that fails while writing removes
// the keys it wrote, its tables and the database it created.
func TestFailedRestoreIsUndone(t *testing.T) {
	s, _ := rawTable(t, 500)
	ctx := context.Background()
	ext := localAt(t, filepath.Join(t.TempDir(), "bk"))
	meta, err := backupTo(ctx, s, []string{"db"}, ext, BackupOptions{})
	if err != nil {
		t.Fatal(err)
	}
	files := meta.Databases[0].Tables[0].Files
	// The second open of the last file is its write pass (the first
	// verified it); the earlier files are written by then.
	flaky := &flakyStorage{ExternalStorage: ext, name: files[len(files)-1].Name, failN: 2}
	cat, err := catalog.Open(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	before := cat.InfoSchema().Version()
	_, err = restoreFrom(ctx, s, cat, nil, flaky, RestoreOptions{Concurrency: 1, BatchKeys: 50, Rename: map[string]string{"db": "db2"}})
	if err == nil || !strings.Contains(err.Error(), "injected") {
		t.Fatalf("restore with a failing read: %v", err)
	}
	is := cat.InfoSchema()
	if is.DB("db2") != nil {
		t.Fatal("the failed restore's database is still there")
	}
	if is.Version() <= before {
		t.Fatal("the restore created nothing: the failure came too early to test the undo")
	}
	// Table IDs are allocated in order: everything above the source
	// table's belongs to the restore and must be empty.
	ts, _ := s.CurrentTS(ctx)
	start := kv.Key(tablecodec.TablePrefix(meta.Databases[0].Tables[0].Info.ID + 1))
	it, err := s.GetSnapshot(ts).Iter(ctx, start, kv.Key("u"))
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	if it.Valid() {
		t.Fatalf("key %x of the failed restore is still there", it.Key())
	}
}

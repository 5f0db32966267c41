// Package slowfs is a Pebble vfs.FS for tests and benchmarks that makes
// every sync of a write-ahead-log file take a fixed extra time and counts
// those syncs, to model a disk whose fsync is slow and to observe how many
// commits share one.
package slowfs

import (
	"strings"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// FS wraps a vfs.FS.
type FS struct {
	vfs.FS
	// Delay is added to every WAL sync.
	Delay time.Duration
	syncs atomic.Int64
}

// New wraps base (vfs.Default if nil).
func New(base vfs.FS, delay time.Duration) *FS {
	if base == nil {
		base = vfs.Default
	}
	return &FS{FS: base, Delay: delay}
}

// WALSyncs returns how many WAL syncs were issued so far.
func (fs *FS) WALSyncs() int64 { return fs.syncs.Load() }

func (fs *FS) wrap(name string, f vfs.File, err error) (vfs.File, error) {
	if err != nil || !strings.HasSuffix(name, ".log") {
		return f, err
	}
	return &file{File: f, fs: fs}, nil
}

func (fs *FS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, c)
	return fs.wrap(name, f, err)
}

func (fs *FS) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(oldname, newname, c)
	return fs.wrap(newname, f, err)
}

func (fs *FS) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := fs.FS.OpenReadWrite(name, c, opts...)
	return fs.wrap(name, f, err)
}

type file struct {
	vfs.File
	fs *FS
}

func (f *file) slow() {
	f.fs.syncs.Add(1)
	time.Sleep(f.fs.Delay)
}

func (f *file) Sync() error     { f.slow(); return f.File.Sync() }
func (f *file) SyncData() error { f.slow(); return f.File.SyncData() }
func (f *file) SyncTo(n int64) (bool, error) {
	f.slow()
	return f.File.SyncTo(n)
}

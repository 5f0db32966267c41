package br

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// ExternalStorage is where a backup lives: a flat namespace of files.
// Implementations must make Create's file appear under its name only when
// the writer is committed (so a crash never leaves a partial file under a
// final name).
type ExternalStorage interface {
	// URI is the storage as the user named it.
	URI() string
	// Create starts writing a new file. Commit publishes it under name;
	// Abort discards it.
	Create(name string) (FileWriter, error)
	// CreateExclusive creates an empty file, failing with fs.ErrExist if
	// it exists (the backup lock).
	CreateExclusive(name string) error
	// Open reads a file; a missing file is fs.ErrNotExist.
	Open(name string) (io.ReadCloser, error)
	// Exists reports whether the file exists.
	Exists(name string) (bool, error)
}

// FileWriter is a file being written to an ExternalStorage.
type FileWriter interface {
	io.Writer
	// Commit makes the file durable and visible under its name.
	Commit() error
	// Abort discards the file.
	Abort()
}

// errUnsupportedStorage: the URI names a storage br cannot use.
var errUnsupportedStorage = errors.New("unsupported storage")

// OpenStorage parses a storage URI. Supported: local:///abs/path (and its
// alias file:///abs/path), a directory on the SQL node's file system,
// created if absent, which must lie at or below one of allowedDirs once
// cleaned and its symlinks resolved (allowedDirs.go).
func OpenStorage(uri string, allowedDirs []string) (ExternalStorage, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return nil, fmt.Errorf("%w %q: %v", errUnsupportedStorage, uri, err)
	}
	switch strings.ToLower(u.Scheme) {
	case "local", "file":
	case "":
		return nil, fmt.Errorf("%w %q: no scheme (use local:///absolute/path)", errUnsupportedStorage, uri)
	default:
		return nil, fmt.Errorf("%w %q: scheme %q is not supported (use local:///absolute/path)", errUnsupportedStorage, uri, u.Scheme)
	}
	if u.Host != "" {
		return nil, fmt.Errorf("%w %q: a local path has no host (use local:///absolute/path, three slashes)", errUnsupportedStorage, uri)
	}
	if u.Path == "" || !filepath.IsAbs(u.Path) {
		return nil, fmt.Errorf("%w %q: the path must be absolute (local:///absolute/path)", errUnsupportedStorage, uri)
	}
	if u.RawQuery != "" {
		return nil, fmt.Errorf("%w %q: local storage takes no parameters", errUnsupportedStorage, uri)
	}
	dir, err := allowedDir(u.Path, allowedDirs)
	if err != nil {
		return nil, err
	}
	return &localStorage{uri: uri, dir: dir}, nil
}

// localStorage is a directory. Files are written to a temporary name,
// fsynced, renamed into place, and the directory fsynced.
type localStorage struct {
	uri string
	dir string
}

func (s *localStorage) URI() string { return s.uri }

// path is where file name lives; names that would leave the directory
// (restore reads them from a backupmeta, which may be forged) are refused.
func (s *localStorage) path(name string) (string, error) {
	if !filepath.IsLocal(filepath.FromSlash(name)) {
		return "", fmt.Errorf("file name %q leaves the backup directory", name)
	}
	return filepath.Join(s.dir, filepath.FromSlash(name)), nil
}

func (s *localStorage) Create(name string) (FileWriter, error) {
	final, err := s.path(name)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(filepath.Dir(final), filepath.Base(final)+".tmp*")
	if err != nil {
		return nil, err
	}
	return &localFile{f: f, final: final}, nil
}

func (s *localStorage) CreateExclusive(name string) error {
	p, err := s.path(name)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func (s *localStorage) Open(name string) (io.ReadCloser, error) {
	p, err := s.path(name)
	if err != nil {
		return nil, err
	}
	return os.Open(p)
}

func (s *localStorage) Exists(name string) (bool, error) {
	p, err := s.path(name)
	if err != nil {
		return false, err
	}
	_, err = os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

type localFile struct {
	f     *os.File
	final string
	done  bool
}

func (w *localFile) Write(p []byte) (int, error) { return w.f.Write(p) }

func (w *localFile) Commit() error {
	w.done = true
	tmp := w.f.Name()
	if err := w.f.Sync(); err != nil {
		w.f.Close()
		os.Remove(tmp)
		return err
	}
	if err := w.f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, w.final); err != nil {
		os.Remove(tmp)
		return err
	}
	// The rename is durable only once the directory is synced.
	d, err := os.Open(filepath.Dir(w.final))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func (w *localFile) Abort() {
	if w.done {
		return
	}
	w.done = true
	w.f.Close()
	os.Remove(w.f.Name())
}

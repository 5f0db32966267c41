package pd

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"sync/atomic"
)

// StateFileName is the name of the file Local keeps in its directory.
const StateFileName = "PD_STATE"

// Local is the embedded, in-process PD: an Allocator persisting its window
// to a small file (written to a temporary file, fsynced, renamed over the
// old one, and the directory fsynced). The allocator saves the next window
// in the background before the current one runs out, so GetTS does not
// wait for that fsync in the steady state.
type Local struct {
	alloc  *Allocator
	closed atomic.Bool
}

var _ Client = (*Local)(nil)

// OpenLocal opens (or creates) the embedded PD state in dir.
func OpenLocal(dir string, o AllocatorOptions) (*Local, error) {
	fp := &filePersister{dir: dir}
	st, err := fp.load()
	if err != nil {
		return nil, err
	}
	return &Local{alloc: NewAllocator(st, fp, o)}, nil
}

// GetTS implements Client.
func (l *Local) GetTS(ctx context.Context) (uint64, error) {
	if l.closed.Load() {
		return 0, ErrClosed
	}
	return l.alloc.GetTS()
}

// AllocID implements Client.
func (l *Local) AllocID(ctx context.Context) (uint64, error) {
	if l.closed.Load() {
		return 0, ErrClosed
	}
	return l.alloc.AllocID()
}

// Close implements Client.
func (l *Local) Close() {
	l.closed.Store(true)
	l.alloc.Close()
}

// filePersister stores a State as 16 bytes + a CRC32.
type filePersister struct{ dir string }

func (f *filePersister) load() (State, error) {
	b, err := os.ReadFile(filepath.Join(f.dir, StateFileName))
	if errors.Is(err, os.ErrNotExist) {
		return State{}, nil
	}
	if err != nil {
		return State{}, fmt.Errorf("pd: read state: %w", err)
	}
	if len(b) != 20 || crc32.ChecksumIEEE(b[:16]) != binary.BigEndian.Uint32(b[16:]) {
		return State{}, fmt.Errorf("pd: state file %s is corrupt", filepath.Join(f.dir, StateFileName))
	}
	return State{
		TSOLimit: int64(binary.BigEndian.Uint64(b[0:8])),
		IDLimit:  binary.BigEndian.Uint64(b[8:16]),
	}, nil
}

func (f *filePersister) Save(s State) error {
	var b [20]byte
	binary.BigEndian.PutUint64(b[0:8], uint64(s.TSOLimit))
	binary.BigEndian.PutUint64(b[8:16], s.IDLimit)
	binary.BigEndian.PutUint32(b[16:], crc32.ChecksumIEEE(b[:16]))
	final := filepath.Join(f.dir, StateFileName)
	tmp := final + ".tmp"
	fh, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := fh.Write(b[:]); err != nil {
		fh.Close()
		return err
	}
	if err := fh.Sync(); err != nil {
		fh.Close()
		return err
	}
	if err := fh.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, final); err != nil {
		return err
	}
	d, err := os.Open(f.dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

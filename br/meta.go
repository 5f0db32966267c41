package br

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"time"

	"github.com/shoaldb/shoal/sql/catalog"
)

const (
	// metaFileName is the backupmeta, written last.
	metaFileName = "backupmeta"
	// lockFileName is created first, exclusively, so two backups never
	// share a destination.
	lockFileName = "backup.lock"
	// metaVersion is the format of the backupmeta and data files.
	metaVersion = 1
)

// Meta is the backupmeta: what a backup holds and how to check it.
type Meta struct {
	Version int `json:"version"`
	// BackupTS is the one timestamp every key and the schema were read at.
	BackupTS  uint64      `json:"backup_ts"`
	StartedAt time.Time   `json:"started_at"`
	EndedAt   time.Time   `json:"ended_at"`
	Databases []*DBBackup `json:"databases"`
}

// DBBackup is one backed-up database.
type DBBackup struct {
	Info   *catalog.DBInfo `json:"info"`
	Tables []*TableBackup  `json:"tables"`
}

// TableBackup is one backed-up table (or view: no files).
type TableBackup struct {
	// Info is the table's record as the catalog stored it at BackupTS.
	Info *catalog.TableInfo `json:"info"`
	// AutoIDBase: every auto-increment value and hidden row id the table
	// had used at BackupTS is at most this (the allocator's persisted
	// high-water mark, or the largest int row handle if larger).
	AutoIDBase int64         `json:"auto_id_base"`
	Checksum   TableChecksum `json:"checksum"`
	Files      []*FileMeta   `json:"files"`
}

// FileMeta describes one data file: the keys of [StartKey, EndKey) of one
// table, with their original table ID.
type FileMeta struct {
	Name     string `json:"name"`
	StartKey []byte `json:"start_key"`
	EndKey   []byte `json:"end_key"`
	KVs      int64  `json:"kvs"`
	Size     int64  `json:"size"`
	CRC32    uint32 `json:"crc32"`
}

// Size is the total size of the backup's data files.
func (m *Meta) Size() int64 {
	var n int64
	for _, db := range m.Databases {
		for _, t := range db.Tables {
			for _, f := range t.Files {
				n += f.Size
			}
		}
	}
	return n
}

// writeMeta publishes the backupmeta (atomically, through Create/Commit).
func writeMeta(s ExternalStorage, m *Meta) error {
	b, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return err
	}
	w, err := s.Create(metaFileName)
	if err != nil {
		return err
	}
	if _, err := w.Write(b); err != nil {
		w.Abort()
		return err
	}
	return w.Commit()
}

// errNoBackup: the storage holds no (complete) backup.
var errNoBackup = errors.New("no backup")

// ReadMeta reads the backupmeta of the backup in s.
func ReadMeta(s ExternalStorage) (*Meta, error) {
	rc, err := s.Open(metaFileName)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w at %s: it holds no backupmeta (not a backup, or one that did not finish)", errNoBackup, s.URI())
	}
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return nil, err
	}
	m := &Meta{}
	if err := json.Unmarshal(b, m); err != nil {
		return nil, fmt.Errorf("%w: backupmeta at %s does not decode: %v", errCorrupt, s.URI(), err)
	}
	if m.Version != metaVersion {
		return nil, fmt.Errorf("backupmeta at %s has format version %d; this shoal reads version %d", s.URI(), m.Version, metaVersion)
	}
	for _, db := range m.Databases {
		if db.Info == nil {
			return nil, fmt.Errorf("%w: backupmeta at %s has a database without info", errCorrupt, s.URI())
		}
		for _, t := range db.Tables {
			if t.Info == nil {
				return nil, fmt.Errorf("%w: backupmeta at %s has a table without info in %s", errCorrupt, s.URI(), db.Info.Name)
			}
		}
	}
	return m, nil
}

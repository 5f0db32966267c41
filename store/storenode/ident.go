package storenode

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// identFile names the file holding the store's identity in the data dir.
const identFile = "ident.json"

// ident is who this data directory belongs to.
type ident struct {
	ClusterID uint64 `json:"cluster_id"`
	StoreID   uint64 `json:"store_id"`
}

// loadIdent reads the identity; ok is false if the directory has none.
func loadIdent(dir string) (id ident, ok bool, err error) {
	b, err := os.ReadFile(filepath.Join(dir, identFile))
	if errors.Is(err, os.ErrNotExist) {
		return ident{}, false, nil
	}
	if err != nil {
		return ident{}, false, err
	}
	if err := json.Unmarshal(b, &id); err != nil || id.StoreID == 0 {
		return ident{}, false, fmt.Errorf("storenode: corrupt %s in %s", identFile, dir)
	}
	return id, true, nil
}

// saveIdent writes the identity durably (temp file, fsync, rename, fsync
// of the directory), so a crash leaves either no identity or this one.
func saveIdent(dir string, id ident) error {
	b, err := json.Marshal(id)
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, identFile+".tmp")
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, identFile)); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

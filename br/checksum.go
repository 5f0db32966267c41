package br

import (
	"context"
	"encoding/binary"
	"hash/crc64"

	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/tablecodec"
)

// TableChecksum summarizes a table's keys independently of its table ID
// and of the order the keys are visited in, so a backup's ranges can be
// summed in parallel and a restored table (new ID) compared with its
// backup.
type TableChecksum struct {
	// CRC64 is the XOR over all keys of CRC64(ECMA) of
	// uvarint(len(suffix)) suffix value, where suffix is the key without
	// its 't' tableID prefix.
	CRC64 uint64 `json:"crc64"`
	// KVs counts keys (rows and index entries), Bytes their key+value
	// bytes (with the prefix), Rows the record keys alone.
	KVs   int64 `json:"kvs"`
	Bytes int64 `json:"bytes"`
	Rows  int64 `json:"rows"`
}

var crc64Table = crc64.MakeTable(crc64.ECMA)

// add folds one key of the table into the checksum.
func (c *TableChecksum) add(key, value []byte) {
	suffix := key[tablePrefixLen:]
	var lenBuf [binary.MaxVarintLen64]byte
	n := binary.PutUvarint(lenBuf[:], uint64(len(suffix)))
	h := crc64.Update(0, crc64Table, lenBuf[:n])
	h = crc64.Update(h, crc64Table, suffix)
	h = crc64.Update(h, crc64Table, value)
	c.CRC64 ^= h
	c.KVs++
	c.Bytes += int64(len(key) + len(value))
	if tablecodec.IsRecordKey(key) {
		c.Rows++
	}
}

// merge folds another part of the same table into c.
func (c *TableChecksum) merge(o TableChecksum) {
	c.CRC64 ^= o.CRC64
	c.KVs += o.KVs
	c.Bytes += o.Bytes
	c.Rows += o.Rows
}

// tablePrefixLen is the length of 't' tableID.
var tablePrefixLen = len(tablecodec.TablePrefix(0))

// ChecksumTable computes the checksum of every key of table tableID as r
// sees it.
func ChecksumTable(ctx context.Context, r kv.Retriever, tableID int64) (TableChecksum, error) {
	var c TableChecksum
	prefix := kv.Key(tablecodec.TablePrefix(tableID))
	it, err := r.Iter(ctx, prefix, prefix.PrefixNext())
	if err != nil {
		return c, err
	}
	defer it.Close()
	for it.Valid() {
		c.add(it.Key(), it.Value())
		if err := it.Next(); err != nil {
			return c, err
		}
	}
	return c, nil
}

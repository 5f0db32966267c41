package br

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
)

// Data file format (one file per backed-up key range):
//
//	"SHOALBR1"                            magic and format version
//	{ uvarint len(key) key uvarint len(value) value }*   in key order
//
// The file's CRC32 (Castagnoli, over every byte), size and entry count are
// recorded in the backupmeta, which is written after the file: the file
// itself carries no trailer, so a truncated or altered file is caught by the
// meta's numbers, never trusted on its own.
const dataFileMagic = "SHOALBR1"

// maxEntryLen bounds a key or value length read from a file, so a corrupted
// length cannot make the reader allocate gigabytes before the CRC check.
const maxEntryLen = 64 << 20

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// dataFileWriter encodes entries into a FileWriter and tracks what the meta
// records about the file.
type dataFileWriter struct {
	w    FileWriter
	buf  *bufio.Writer
	crc  hash.Hash32
	size int64
	kvs  int64
	tmp  [binary.MaxVarintLen64]byte
}

func newDataFileWriter(w FileWriter) (*dataFileWriter, error) {
	d := &dataFileWriter{w: w, crc: crc32.New(crcTable)}
	d.buf = bufio.NewWriterSize(io.MultiWriter(w, d.crc), 256<<10)
	if err := d.write([]byte(dataFileMagic)); err != nil {
		return nil, err
	}
	return d, nil
}

func (d *dataFileWriter) write(p []byte) error {
	n, err := d.buf.Write(p)
	d.size += int64(n)
	return err
}

func (d *dataFileWriter) writeBytes(p []byte) error {
	n := binary.PutUvarint(d.tmp[:], uint64(len(p)))
	if err := d.write(d.tmp[:n]); err != nil {
		return err
	}
	return d.write(p)
}

// add appends one entry; keys must come in ascending order.
func (d *dataFileWriter) add(key, value []byte) error {
	if err := d.writeBytes(key); err != nil {
		return err
	}
	d.kvs++
	return d.writeBytes(value)
}

// commit flushes and publishes the file.
func (d *dataFileWriter) commit() error {
	if err := d.buf.Flush(); err != nil {
		d.w.Abort()
		return err
	}
	return d.w.Commit()
}

// errCorrupt marks a data file that does not match its meta entry.
var errCorrupt = errors.New("corrupted backup file")

// readDataFile reads the file described by fm from s, calling fn for each
// entry (key and value are valid only during the call), and fails with
// errCorrupt unless the file's size, CRC32, entry count, key order and key
// range all match the meta. fn may see entries of a file that then turns
// out corrupted: callers that must not act on bad data verify first.
func readDataFile(s ExternalStorage, fm *FileMeta, fn func(key, value []byte) error) error {
	rc, err := s.Open(fm.Name)
	if err != nil {
		return fmt.Errorf("open %s: %w", fm.Name, err)
	}
	defer rc.Close()
	crc := crc32.New(crcTable)
	counted := &countingReader{r: rc}
	r := bufio.NewReaderSize(io.TeeReader(counted, crc), 256<<10)
	corrupt := func(format string, args ...any) error {
		return fmt.Errorf("%w %s: %s", errCorrupt, fm.Name, fmt.Sprintf(format, args...))
	}
	magic := make([]byte, len(dataFileMagic))
	if _, err := io.ReadFull(r, magic); err != nil || string(magic) != dataFileMagic {
		return corrupt("bad header")
	}
	var key, value, prev []byte
	var kvs int64
	readBytes := func(buf []byte) ([]byte, error) {
		n, err := binary.ReadUvarint(r)
		if err != nil {
			return nil, err
		}
		if n > maxEntryLen {
			return nil, corrupt("entry length %d out of bounds", n)
		}
		if uint64(cap(buf)) < n {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, corrupt("truncated entry")
		}
		return buf, nil
	}
	for {
		key, err = readBytes(key)
		if err == io.EOF {
			break
		}
		if err != nil {
			if errors.Is(err, errCorrupt) {
				return err
			}
			return corrupt("truncated entry")
		}
		if value, err = readBytes(value); err != nil {
			if errors.Is(err, errCorrupt) {
				return err
			}
			return corrupt("truncated entry")
		}
		if kvs > 0 && string(key) <= string(prev) {
			return corrupt("keys out of order")
		}
		if string(key) < string(fm.StartKey) || (len(fm.EndKey) > 0 && string(key) >= string(fm.EndKey)) {
			return corrupt("key %x outside the file's range", key)
		}
		prev = append(prev[:0], key...)
		kvs++
		if err := fn(key, value); err != nil {
			return err
		}
	}
	if counted.n != fm.Size {
		return corrupt("size %d, backupmeta says %d", counted.n, fm.Size)
	}
	if got := crc.Sum32(); got != fm.CRC32 {
		return corrupt("crc32 %08x, backupmeta says %08x", got, fm.CRC32)
	}
	if kvs != fm.KVs {
		return corrupt("%d entries, backupmeta says %d", kvs, fm.KVs)
	}
	return nil
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

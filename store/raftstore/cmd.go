package raftstore

import (
	"encoding/binary"
	"errors"

	"github.com/shoaldb/shoal/proto/metapb"
)

// Commands are the payloads of raft entries. They are persisted in the
// raft log, so their encoding is versioned:
//
//	version(1) kind(1) proposal_id(8, big-endian) region_id epoch.conf_ver
//	epoch.version (uvarints), then the kind's body.
//
// The proposal id sits at a fixed offset so the Ready loop can match the
// entries it persists to waiting proposers without decoding bodies.
const cmdVersion byte = 1

type cmdKind byte

const (
	cmdWrite      cmdKind = 1 // engine writes (Set/Delete of data keys)
	cmdSplit      cmdKind = 2 // admin: split the region at a user key
	cmdCompactLog cmdKind = 3 // admin: truncate the raft log
	cmdConfChange cmdKind = 4 // the context of a ConfChangeV2 entry
)

const cmdHeaderFixed = 10 // version, kind, proposal id

type opKind byte

const (
	opSet    opKind = 1
	opDelete opKind = 2
)

type command struct {
	kind       cmdKind
	proposalID uint64
	regionID   uint64
	confVer    uint64
	version    uint64

	// cmdWrite: the encoded ops (see appendOp); decoded lazily at apply.
	ops []byte

	// cmdSplit: the right part [splitKey, end) becomes region newRegionID
	// with peers newPeerIDs (in the order of the region's peers).
	splitKey    []byte
	newRegionID uint64
	newPeerIDs  []uint64

	// cmdCompactLog: truncate the log up to and including index.
	compactIndex uint64
	compactTerm  uint64

	// cmdConfChange: the peer added, promoted or removed.
	peer *metapb.Peer
}

var errBadCommand = errors.New("raftstore: malformed command")

func appendOp(dst []byte, kind opKind, key, value []byte) []byte {
	dst = append(dst, byte(kind))
	dst = binary.AppendUvarint(dst, uint64(len(key)))
	dst = append(dst, key...)
	if kind == opSet {
		dst = binary.AppendUvarint(dst, uint64(len(value)))
		dst = append(dst, value...)
	}
	return dst
}

// forEachOp decodes ops; key and value alias ops.
func forEachOp(ops []byte, fn func(kind opKind, key, value []byte) error) error {
	for len(ops) > 0 {
		kind := opKind(ops[0])
		ops = ops[1:]
		key, rest, err := readBytes(ops)
		if err != nil {
			return err
		}
		ops = rest
		var value []byte
		switch kind {
		case opSet:
			if value, ops, err = readBytes(ops); err != nil {
				return err
			}
		case opDelete:
		default:
			return errBadCommand
		}
		if err := fn(kind, key, value); err != nil {
			return err
		}
	}
	return nil
}

func readBytes(b []byte) ([]byte, []byte, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || uint64(len(b)-k) < n {
		return nil, nil, errBadCommand
	}
	return b[k : k+int(n)], b[k+int(n):], nil
}

func readUvarint(b []byte) (uint64, []byte, error) {
	v, k := binary.Uvarint(b)
	if k <= 0 {
		return 0, nil, errBadCommand
	}
	return v, b[k:], nil
}

func (c *command) encode() []byte {
	n := cmdHeaderFixed + 30 + len(c.ops) + len(c.splitKey) + 10*len(c.newPeerIDs)
	b := make([]byte, 0, n)
	b = append(b, cmdVersion, byte(c.kind))
	b = binary.BigEndian.AppendUint64(b, c.proposalID)
	b = binary.AppendUvarint(b, c.regionID)
	b = binary.AppendUvarint(b, c.confVer)
	b = binary.AppendUvarint(b, c.version)
	switch c.kind {
	case cmdWrite:
		b = append(b, c.ops...)
	case cmdSplit:
		b = binary.AppendUvarint(b, uint64(len(c.splitKey)))
		b = append(b, c.splitKey...)
		b = binary.AppendUvarint(b, c.newRegionID)
		b = binary.AppendUvarint(b, uint64(len(c.newPeerIDs)))
		for _, id := range c.newPeerIDs {
			b = binary.AppendUvarint(b, id)
		}
	case cmdCompactLog:
		b = binary.AppendUvarint(b, c.compactIndex)
		b = binary.AppendUvarint(b, c.compactTerm)
	case cmdConfChange:
		b = binary.AppendUvarint(b, c.peer.GetId())
		b = binary.AppendUvarint(b, c.peer.GetStoreId())
		b = binary.AppendUvarint(b, uint64(c.peer.GetRole()))
	}
	return b
}

// peekProposalID returns the proposal id of an encoded command.
func peekProposalID(data []byte) (uint64, bool) {
	if len(data) < cmdHeaderFixed || data[0] != cmdVersion {
		return 0, false
	}
	return binary.BigEndian.Uint64(data[2:cmdHeaderFixed]), true
}

func decodeCommand(data []byte) (*command, error) {
	if len(data) < cmdHeaderFixed || data[0] != cmdVersion {
		return nil, errBadCommand
	}
	c := &command{kind: cmdKind(data[1]), proposalID: binary.BigEndian.Uint64(data[2:cmdHeaderFixed])}
	b := data[cmdHeaderFixed:]
	var err error
	for _, p := range []*uint64{&c.regionID, &c.confVer, &c.version} {
		if *p, b, err = readUvarint(b); err != nil {
			return nil, err
		}
	}
	switch c.kind {
	case cmdWrite:
		c.ops = b
	case cmdSplit:
		if c.splitKey, b, err = readBytes(b); err != nil {
			return nil, err
		}
		if c.newRegionID, b, err = readUvarint(b); err != nil {
			return nil, err
		}
		var n uint64
		if n, b, err = readUvarint(b); err != nil || n > 1024 {
			return nil, errBadCommand
		}
		for i := uint64(0); i < n; i++ {
			var id uint64
			if id, b, err = readUvarint(b); err != nil {
				return nil, err
			}
			c.newPeerIDs = append(c.newPeerIDs, id)
		}
	case cmdCompactLog:
		if c.compactIndex, b, err = readUvarint(b); err != nil {
			return nil, err
		}
		if c.compactTerm, _, err = readUvarint(b); err != nil {
			return nil, err
		}
	case cmdConfChange:
		var id, store, role uint64
		if id, b, err = readUvarint(b); err != nil {
			return nil, err
		}
		if store, b, err = readUvarint(b); err != nil {
			return nil, err
		}
		if role, _, err = readUvarint(b); err != nil {
			return nil, err
		}
		c.peer = &metapb.Peer{Id: id, StoreId: store, Role: metapb.PeerRole(role)}
	default:
		return nil, errBadCommand
	}
	return c, nil
}

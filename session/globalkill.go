package session

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/kv/metakey"
)

// Global kill (as TiDB's): in a cluster every SQL node takes a server id
// from a counter in kv at start, and its connection ids carry it in their
// high 32 bits. KILL of an id of another node writes a kill request under
// that node's prefix; each node takes its requests on every sync tick
// (Config.SchemaSyncInterval), deletes them and carries them out, with
// the requesting user's rights. Such a KILL answers OK at once, before
// the other node acted (as TiDB's).
var (
	serverIDKey       = kv.Key(metakey.ServerIDCounter)
	killRequestPrefix = kv.Key(metakey.KillRequestPrefix)
)

// connIDShift places the server id in a connection id.
const connIDShift = 32

type killRequest struct {
	Query bool   `json:"query"`
	User  string `json:"user"`
	// Any: the requester may kill other users' connections (its node
	// judged that, since only it knows the session's privileges).
	Any bool `json:"any,omitempty"`
}

func killRequestKey(serverID, connID uint64) kv.Key {
	k := append(kv.Key{}, killRequestPrefix...)
	k = binary.BigEndian.AppendUint64(k, serverID)
	return binary.BigEndian.AppendUint64(k, connID)
}

// allocServerID takes the next server id from the counter in kv.
func (b *Backend) allocServerID(ctx context.Context) (uint64, error) {
	for attempt := 0; ; attempt++ {
		txn, err := b.store.Begin(ctx, kv.TxnOptions{Mode: kv.Optimistic, Enable1PC: true})
		if err != nil {
			return 0, err
		}
		v, err := txn.Get(ctx, serverIDKey)
		if err != nil && !errors.Is(err, kv.ErrNotExist) {
			_ = txn.Rollback()
			return 0, err
		}
		id := uint64(0)
		if len(v) > 0 {
			id, _ = strconv.ParseUint(string(v), 10, 64)
		}
		id++
		if err := txn.Set(serverIDKey, []byte(strconv.FormatUint(id, 10))); err != nil {
			_ = txn.Rollback()
			return 0, err
		}
		err = txn.Commit(ctx)
		if err == nil {
			return id, nil
		}
		if !errors.Is(err, kv.ErrWriteConflict) || attempt >= 50 {
			return 0, err
		}
	}
}

// ConnectionIDBase is the first connection id of this node: its server id
// in the high bits (0 on a single node). The protocol server numbers its
// connections from it.
func (b *Backend) ConnectionIDBase() uint64 { return b.serverID << connIDShift }

// remoteKill asks the node that owns connection id to kill it.
func (s *Session) remoteKill(ctx context.Context, id uint64, query bool) error {
	val, _ := json.Marshal(killRequest{Query: query, User: s.user, Any: s.mayKillAnyProcess()})
	txn, err := s.b.store.Begin(ctx, kv.TxnOptions{Mode: kv.Optimistic, Enable1PC: true})
	if err != nil {
		return toSQLError(err)
	}
	if err := txn.Set(killRequestKey(id>>connIDShift, id), val); err != nil {
		_ = txn.Rollback()
		return toSQLError(err)
	}
	if err := txn.Commit(ctx); err != nil {
		return toSQLError(err)
	}
	return nil
}

// takeKillRequests carries out the kill requests addressed to this node.
func (b *Backend) takeKillRequests(ctx context.Context) error {
	if b.serverID == 0 || b.processManager() == nil {
		return nil
	}
	prefix := killRequestKey(b.serverID, 0)[:len(killRequestPrefix)+8]
	ts, err := b.store.CurrentTS(ctx)
	if err != nil {
		return err
	}
	it, err := b.store.GetSnapshot(ts).Iter(ctx, prefix, prefix.PrefixNext())
	if err != nil {
		return err
	}
	type request struct {
		key    kv.Key
		connID uint64
		req    killRequest
	}
	var reqs []request
	for it.Valid() {
		k := it.Key()
		if len(k) == len(prefix)+8 {
			var r killRequest
			if json.Unmarshal(it.Value(), &r) == nil {
				reqs = append(reqs, request{append(kv.Key{}, k...), binary.BigEndian.Uint64(k[len(prefix):]), r})
			}
		}
		if err := it.Next(); err != nil {
			it.Close()
			return err
		}
	}
	it.Close()
	if len(reqs) == 0 {
		return nil
	}
	txn, err := b.store.Begin(ctx, kv.TxnOptions{Mode: kv.Optimistic, Enable1PC: true})
	if err != nil {
		return err
	}
	for _, r := range reqs {
		if err := txn.Delete(r.key); err != nil {
			_ = txn.Rollback()
			return err
		}
	}
	if err := txn.Commit(ctx); err != nil {
		return err // taken by nobody: retried on the next tick
	}
	for _, r := range reqs {
		for _, p := range b.processManager().Processes() {
			if p.ID == r.connID && (p.User == r.req.User || r.req.Any) {
				b.processManager().Kill(r.connID, r.req.Query)
			}
		}
	}
	return nil
}

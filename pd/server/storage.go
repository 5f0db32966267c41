package server

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/protobuf/proto"

	"github.com/shoaldb/shoal/proto/metapb"
)

// etcd key layout. Everything PD persists lives under rootPath; every write
// by a leader is a transaction guarded by leadership.guard, so a deposed
// leader cannot overwrite its successor's state.
const (
	rootPath        = "/shoal/pd"
	leaderKey       = rootPath + "/leader"        // pdpb.Member of the leader, on the leader's lease
	tsoLimitKey     = rootPath + "/tso_limit"     // uint64: physical ms no timestamp has reached
	idLimitKey      = rootPath + "/id_limit"      // uint64: no ID handed out reaches it
	bootstrapKey    = rootPath + "/bootstrapped"  // present once the cluster is bootstrapped
	gcSafePointKey  = rootPath + "/gc_safe_point" // uint64, never decreases
	gcServicePrefix = rootPath + "/gc_service/"   // + service id -> safe point, expiry (serviceSafePoint)
	storePrefix     = rootPath + "/stores/"       // + %020d id -> metapb.Store
	regionPrefix    = rootPath + "/regions/"      // + %020d id -> metapb.Region
	idKeyDigitWidth = 20
)

func storeKey(id uint64) string  { return storePrefix + paddedID(id) }
func regionKey(id uint64) string { return regionPrefix + paddedID(id) }

func paddedID(id uint64) string {
	s := strconv.FormatUint(id, 10)
	for len(s) < idKeyDigitWidth {
		s = "0" + s
	}
	return s
}

func encodeUint64(v uint64) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], v)
	return string(b[:])
}

func decodeUint64(b []byte) (uint64, error) {
	if len(b) != 8 {
		return 0, fmt.Errorf("pd: stored integer has %d bytes, want 8", len(b))
	}
	return binary.BigEndian.Uint64(b), nil
}

// errNotLeader: a guarded write failed its leadership comparison.
var errNotLeader = errors.New("pd: not leader")

// loadedState is what a new leader reads from etcd before it serves.
type loadedState struct {
	tsoLimit     int64
	idLimit      uint64
	gcSafePoint  uint64
	bootstrapped bool
	services     map[string]serviceSafePoint
	stores       []*metapb.Store
	regions      []*metapb.Region
}

func loadState(ctx context.Context, cli *clientv3.Client) (*loadedState, error) {
	st := &loadedState{}
	resp, err := cli.Txn(ctx).Then(
		clientv3.OpGet(tsoLimitKey),
		clientv3.OpGet(idLimitKey),
		clientv3.OpGet(gcSafePointKey),
		clientv3.OpGet(bootstrapKey),
		clientv3.OpGet(storePrefix, clientv3.WithPrefix()),
		clientv3.OpGet(regionPrefix, clientv3.WithPrefix()),
		clientv3.OpGet(gcServicePrefix, clientv3.WithPrefix()),
	).Commit()
	if err != nil {
		return nil, fmt.Errorf("pd: load state: %w", err)
	}
	one := func(i int) ([]byte, bool) {
		kvs := resp.Responses[i].GetResponseRange().Kvs
		if len(kvs) == 0 {
			return nil, false
		}
		return kvs[0].Value, true
	}
	if v, ok := one(0); ok {
		n, err := decodeUint64(v)
		if err != nil {
			return nil, err
		}
		st.tsoLimit = int64(n)
	}
	if v, ok := one(1); ok {
		if st.idLimit, err = decodeUint64(v); err != nil {
			return nil, err
		}
	}
	if v, ok := one(2); ok {
		if st.gcSafePoint, err = decodeUint64(v); err != nil {
			return nil, err
		}
	}
	_, st.bootstrapped = one(3)
	for _, kv := range resp.Responses[4].GetResponseRange().Kvs {
		s := &metapb.Store{}
		if err := proto.Unmarshal(kv.Value, s); err != nil {
			return nil, fmt.Errorf("pd: decode store %s: %w", kv.Key, err)
		}
		st.stores = append(st.stores, s)
	}
	for _, kv := range resp.Responses[5].GetResponseRange().Kvs {
		r := &metapb.Region{}
		if err := proto.Unmarshal(kv.Value, r); err != nil {
			return nil, fmt.Errorf("pd: decode region %s: %w", kv.Key, err)
		}
		st.regions = append(st.regions, r)
	}
	st.services = map[string]serviceSafePoint{}
	for _, kv := range resp.Responses[6].GetResponseRange().Kvs {
		sp, err := decodeServiceSafePoint(kv.Value)
		if err != nil {
			return nil, fmt.Errorf("pd: decode service safe point %s: %w", kv.Key, err)
		}
		st.services[string(kv.Key[len(gcServicePrefix):])] = sp
	}
	return st, nil
}

// serviceSafePoint is one service's claim on old versions: the GC safe
// point must not pass safePoint before expiresAt (unix seconds).
type serviceSafePoint struct {
	safePoint uint64
	expiresAt int64
}

func (sp serviceSafePoint) encode() string {
	return encodeUint64(sp.safePoint) + encodeUint64(uint64(sp.expiresAt))
}

func decodeServiceSafePoint(b []byte) (serviceSafePoint, error) {
	if len(b) != 16 {
		return serviceSafePoint{}, fmt.Errorf("pd: stored service safe point has %d bytes, want 16", len(b))
	}
	sp, _ := decodeUint64(b[:8])
	exp, _ := decodeUint64(b[8:])
	return serviceSafePoint{safePoint: sp, expiresAt: int64(exp)}, nil
}

func mustMarshal(m proto.Message) string {
	b, err := proto.Marshal(m)
	if err != nil {
		panic(fmt.Sprintf("pd: marshal %T: %v", m, err)) // only fails on invalid UTF-8 in string fields
	}
	return string(b)
}

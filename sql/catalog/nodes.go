package catalog

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/kv/metakey"
)

// Schema-version records: every registered SQL node keeps one in kv,
// prefixNodeVersion + node id -> nodeVersionRecord, saying which schema
// version it runs and until when the promise holds. A node writes version
// v only once it published v and every commit it had in flight under an
// older version finished (commits.drained), and renews the record about
// every second; the record lapses leaseTTL after the renewal began. A DDL
// that moves a table to its next state first waits until every node whose
// record has not lapsed shows its version (waitAllNodes).
//
// The lease is the other half: a node commits nothing that wrote tables
// once leaseTTL-commitLeaseMargin passed since its last successful renewal
// began (CommitGuard, 8027), so a node cut off from kv stops committing
// before the DDLs that stop waiting for it could move on. A renewal counts
// only if the stored schema version, read after the record was written,
// is still the one it recorded: otherwise a DDL that committed meanwhile
// may have looked at the records before this one and moved on.
//
// The boundary that is left (TiDB's schema lease has the same): a commit
// that passed its check with lease left but takes longer than that margin
// to reach the store may land after a DDL stopped waiting for its node.

// prefixNodeVersion + node name holds a node's loaded schema version.
var prefixNodeVersion = kv.Key(metakey.NodeSchemaVersionPrefix)

func nodeVersionKey(node string) kv.Key {
	return append(append(kv.Key{}, prefixNodeVersion...), node...)
}

// nodeVersionRecord is one node's record.
type nodeVersionRecord struct {
	Version int64 `json:"version"`
	// ExpiryMS is the TSO physical time (ms) after which the record no
	// longer counts.
	ExpiryMS int64 `json:"expiry_ms"`
}

const (
	// defaultSchemaLeaseTTL: a node commits for half of it after its last
	// renewal began, so a PD leader failover (several seconds without
	// timestamps, hence without renewals) does not stop commits; a DDL
	// waits at most this long for a node that died without deregistering
	// (TiDB's schema lease is 45 s).
	defaultSchemaLeaseTTL = 30 * time.Second
	// leaseRenewWait: how long a commit that finds the lease lapsed waits
	// for a renewal before it fails with 8027 (the renewal loop runs every
	// second, and is kicked at once).
	leaseRenewWait = 2 * time.Second
	// schemaLeaseRenewInterval: how often a registered node renews its
	// record when nothing changed.
	schemaLeaseRenewInterval = time.Second
	// nodeWaitPoll: how often a waiting DDL reads the records.
	nodeWaitPoll = 20 * time.Millisecond
	// sweepEvery: every so many renewals, a node deletes the records of
	// nodes gone for a long while (deadRecordAge).
	sweepEvery = 60
	// tsoPhysicalShift: a TSO timestamp is physical ms << 18 | logical.
	tsoPhysicalShift = 18
)

// commitLeaseMargin is how much of its lease a node keeps for the commit
// that checked it: a commit takes time, and the lease is timed with this
// node's monotonic clock while others judge the record with the TSO's.
func (c *Catalog) commitLeaseMargin() time.Duration { return c.leaseTTL / 2 }

func newNodeID() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b[:])
}

func physicalMS(ts uint64) int64 { return int64(ts >> tsoPhysicalShift) }

// NodeID is this SQL node's id in the schema-version records.
func (c *Catalog) NodeID() string { return c.nodeID }

func (c *Catalog) leaseClock() int64 { return int64(time.Since(c.clockBase)) }

// leaseValid reports whether this node may still commit under its schema.
func (c *Catalog) leaseValid() bool {
	return time.Duration(c.leaseClock()-c.leaseStart.Load()) < c.leaseTTL-c.commitLeaseMargin()
}

// awaitLease kicks a renewal and waits up to d for the lease to be valid
// again (a commit after an outage of the TSO or the stores renews first
// rather than failing).
func (c *Catalog) awaitLease(d time.Duration) {
	c.kickRenewal()
	deadline := time.Now().Add(d)
	for !c.leaseValid() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
}

func (c *Catalog) kickRenewal() {
	select {
	case c.renewKick <- struct{}{}:
	default:
	}
}

// SetSchemaLeaseTTL sets how long this node's schema-version record and
// lease last (tests shorten it to see a node lapse); call it before
// Register.
func (c *Catalog) SetSchemaLeaseTTL(d time.Duration) { c.leaseTTL = d }

// Register makes this node one of the SQL nodes that online schema
// changes wait for: it writes its schema-version record (Sync renews it)
// and from then on CommitGuard checks the lease. Call it once, before
// serving, on a catalog that syncs (EnableSync or Sync).
func (c *Catalog) Register(ctx context.Context) error {
	if err := c.renew(ctx); err != nil {
		return fmt.Errorf("catalog: register schema-version record: %w", err)
	}
	c.registered.Store(true)
	return nil
}

// deregister deletes this node's record (shutdown), so DDLs stop waiting
// for it at once rather than when it lapses.
func (c *Catalog) deregister() {
	if !c.registered.Swap(false) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	txn, err := c.store.Begin(ctx, kv.TxnOptions{Mode: kv.Optimistic, Enable1PC: true})
	if err != nil {
		return
	}
	if err := txn.Delete(nodeVersionKey(c.nodeID)); err != nil {
		_ = txn.Rollback()
		return
	}
	_ = txn.Commit(ctx)
}

// renew brings the schema up to date, records its version and, when the
// stored version is still that one afterwards, extends the lease from the
// moment the renewal began.
func (c *Catalog) renew(ctx context.Context) error {
	c.renewMu.Lock()
	defer c.renewMu.Unlock()
	start := c.leaseClock()
	for range 3 {
		if _, err := c.Refresh(ctx); err != nil {
			return err
		}
		v := c.InfoSchema().Version()
		drained := c.commits.drained()
		if err := c.writeNodeRecord(ctx, drained); err != nil {
			return err
		}
		c.recordedVersion.Store(drained)
		ts, err := c.store.CurrentTS(ctx)
		if err != nil {
			return err
		}
		stored, err := storedVersion(ctx, c.store.GetSnapshot(ts))
		if err != nil {
			return err
		}
		if stored <= v {
			c.leaseStart.Store(start)
			c.renewals++
			if c.renewals%sweepEvery == 0 {
				c.sweepDeadRecords(ctx)
			}
			return nil
		}
	}
	return errors.New("catalog: the schema kept changing while renewing the schema-version record")
}

func (c *Catalog) writeNodeRecord(ctx context.Context, version int64) error {
	txn, err := c.store.Begin(ctx, kv.TxnOptions{Mode: kv.Optimistic, Enable1PC: true})
	if err != nil {
		return err
	}
	rec := nodeVersionRecord{Version: version, ExpiryMS: physicalMS(txn.StartTS()) + c.leaseTTL.Milliseconds()}
	b, err := json.Marshal(rec)
	if err == nil {
		err = txn.Set(nodeVersionKey(c.nodeID), b)
	}
	if err != nil {
		_ = txn.Rollback()
		return err
	}
	return txn.Commit(ctx)
}

// deadRecordAge: records lapsed this long belong to nodes that are gone.
func (c *Catalog) deadRecordAge() time.Duration { return 10 * c.leaseTTL }

// sweepDeadRecords deletes long-lapsed records (best effort).
func (c *Catalog) sweepDeadRecords(ctx context.Context) {
	txn, err := c.store.Begin(ctx, kv.TxnOptions{Mode: kv.Optimistic, Enable1PC: true})
	if err != nil {
		return
	}
	cutoff := physicalMS(txn.StartTS()) - c.deadRecordAge().Milliseconds()
	dead := 0
	err = c.scanNodeRecords(ctx, txn, func(node string, rec nodeVersionRecord) error {
		if rec.ExpiryMS < cutoff {
			dead++
			return txn.Delete(nodeVersionKey(node))
		}
		return nil
	})
	if err != nil || dead == 0 {
		_ = txn.Rollback()
		return
	}
	_ = txn.Commit(ctx)
}

func (c *Catalog) scanNodeRecords(ctx context.Context, r kv.Retriever, fn func(node string, rec nodeVersionRecord) error) error {
	return scanPrefix(ctx, r, prefixNodeVersion, func(k kv.Key, v []byte) error {
		var rec nodeVersionRecord
		if err := json.Unmarshal(v, &rec); err != nil {
			return fmt.Errorf("catalog: decode schema-version record: %w", err)
		}
		return fn(string(k[len(prefixNodeVersion):]), rec)
	})
}

// nodesBehind returns the other nodes whose records have not lapsed and
// show a version below version.
func (c *Catalog) nodesBehind(ctx context.Context, version int64) ([]string, error) {
	ts, err := c.store.CurrentTS(ctx)
	if err != nil {
		return nil, err
	}
	now := physicalMS(ts)
	var behind []string
	err = c.scanNodeRecords(ctx, c.store.GetSnapshot(ts), func(node string, rec nodeVersionRecord) error {
		if node != c.nodeID && rec.ExpiryMS > now && rec.Version < version {
			behind = append(behind, fmt.Sprintf("%s@%d", node, rec.Version))
		}
		return nil
	})
	return behind, err
}

// waitAllNodes returns once this node and every other live node run
// schema version version or later (no commit checked against an older
// schema in flight), or the other node's record lapsed. This node is
// judged from memory (it published version before); an unregistered
// catalog (the embedded server: the only node) waits for itself only.
// The wait is bounded: a node that cannot load the version cannot renew
// its record either, so the record lapses within leaseTTL.
func (c *Catalog) waitAllNodes(ctx context.Context, version int64) error {
	deadline := time.Now().Add(3 * c.leaseTTL)
	for {
		var behind []string
		var err error
		if d := c.commits.drained(); d < version {
			behind = []string{fmt.Sprintf("this node@%d", d)}
		} else if c.registered.Load() {
			behind, err = c.nodesBehind(ctx, version)
		}
		if err == nil && len(behind) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = fmt.Errorf("nodes still on older versions: %v", behind)
			}
			return fmt.Errorf("catalog: waiting for every SQL node to load schema version %d: %w", version, err)
		}
		if err := kv.SleepCtx(ctx, nodeWaitPoll); err != nil {
			return err
		}
	}
}

// WaitAllNodes returns once every live SQL node runs this node's current
// schema version with no commit checked against an older one in flight:
// a DDL that changed what writers do (PreventNull) may then check the
// rows every writer left behind.
func (c *Catalog) WaitAllNodes(ctx context.Context) error {
	return c.waitAllNodes(ctx, c.InfoSchema().Version())
}

// nodeAlive reports whether node's record exists and has not lapsed.
func (c *Catalog) nodeAlive(ctx context.Context, node string) (bool, error) {
	ts, err := c.store.CurrentTS(ctx)
	if err != nil {
		return false, err
	}
	v, err := c.store.GetSnapshot(ts).Get(ctx, nodeVersionKey(node))
	if errors.Is(err, kv.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	var rec nodeVersionRecord
	if err := json.Unmarshal(v, &rec); err != nil {
		return false, err
	}
	return rec.ExpiryMS > physicalMS(ts), nil
}

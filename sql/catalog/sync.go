package catalog

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// commitRefreshTimeout bounds the schema check CommitGuard makes before a
// commit when several SQL nodes share the store.
const commitRefreshTimeout = 10 * time.Second

// Refresh reloads the schema when the version stored in kv differs from
// the current one (another SQL node ran a DDL) and reports whether it did.
// It costs one timestamp and one point read when nothing changed.
func (c *Catalog) Refresh(ctx context.Context) (bool, error) {
	ts, err := c.store.CurrentTS(ctx)
	if err != nil {
		return false, err
	}
	snap := c.store.GetSnapshot(ts)
	v, err := storedVersion(ctx, snap)
	if err != nil {
		return false, err
	}
	if v <= c.InfoSchema().version {
		return false, nil
	}
	is, err := c.load(ctx, snap)
	if err != nil {
		return false, err
	}
	c.publish(is)
	return true, nil
}

// Sync keeps the schema in step with DDLs run by other SQL nodes on the
// same store until ctx ends: it refreshes every interval, and from now on
// CommitGuard refreshes before every commit that wrote tables. A
// registered node (Register) also renews its schema-version record here:
// at once when it loaded a new version, else every
// schemaLeaseRenewInterval; when ctx ends it deletes the record. Embedded
// (single node) mode never calls it. It returns when ctx is done.
func (c *Catalog) Sync(ctx context.Context, interval time.Duration, log *slog.Logger) {
	c.syncing.Store(true)
	defer c.deregister()
	t := time.NewTicker(interval)
	defer t.Stop()
	failing := false
	lastRenewal, lastOrphanCheck := time.Now(), time.Now()
	var settling sync.WaitGroup
	defer settling.Wait()
	var settlingNow atomic.Bool
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-c.renewKick:
		}
		if c.registered.Load() && time.Since(lastOrphanCheck) >= orphanCheckInterval && !settlingNow.Load() {
			lastOrphanCheck = time.Now()
			settlingNow.Store(true)
			settling.Add(1)
			go func() {
				defer settling.Done()
				defer settlingNow.Store(false)
				if c.settler != nil {
					if err := c.settler.SettleOrphans(ctx); err != nil && ctx.Err() == nil && log != nil {
						log.Warn("settling a schema change left by a gone SQL node failed", "err", err)
					}
				}
				if _, err := c.SweepTempTables(ctx); err != nil && ctx.Err() == nil && log != nil {
					log.Warn("dropping the temporary tables of a gone SQL node failed", "err", err)
				}
			}()
		}
		rctx, cancel := context.WithTimeout(ctx, commitRefreshTimeout)
		// A renewal refreshes first itself: a due one replaces the refresh,
		// and one for a newly drained version follows it. A lapsed lease
		// (a commit waits for it) is always due.
		renew := c.registered.Load() && (time.Since(lastRenewal) >= schemaLeaseRenewInterval || !c.leaseValid())
		var err error
		if !renew {
			_, err = c.Refresh(rctx)
			renew = err == nil && c.registered.Load() && c.recordedVersion.Load() < c.commits.drained()
		}
		if renew {
			if err = c.renew(rctx); err == nil {
				lastRenewal = time.Now()
			}
		}
		cancel()
		if err != nil && ctx.Err() == nil && !failing && log != nil {
			log.Warn("schema refresh failed", "err", err)
		}
		failing = err != nil
	}
}

// EnableSync marks the catalog as shared with other SQL nodes without a
// background loop (tests); CommitGuard then refreshes before commits.
func (c *Catalog) EnableSync() { c.syncing.Store(true) }

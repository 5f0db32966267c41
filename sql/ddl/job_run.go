package ddl

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/kv/delrange"
	"github.com/shoaldb/shoal/sql/catalog"
)

// Driving the jobs of job.go: a node runs the jobs it starts (runJob),
// waits for or takes over another node's (settleJob, takeOver, and
// settleOrphans from the catalog's Sync, through JobSettler), and gives up
// the ones it cannot finish.

var (
	// errJobInterrupted: a test stopped the job (see SetJobInterrupt).
	errJobInterrupted = errno.New(mysql.ErrUnknown, "the schema change was interrupted (test)")
	// errJobWait: another node's job on the table did not finish in time.
	errJobWait = errno.New(mysql.ErrLockWaitTimeout, "Lock wait timeout exceeded: another schema change on the table is still running")
)

const (
	// jobWaitTimeout bounds how long a DDL waits for another node's job on
	// the same table.
	jobWaitTimeout = 10 * time.Minute
	jobWaitPoll    = 50 * time.Millisecond
	// maxJobSteps bounds a job's loop (every job takes at most four steps
	// each way).
	maxJobSteps = 16
	// jobGiveUpTimeout bounds the cleanup of a job that failed.
	jobGiveUpTimeout = 5 * time.Second
)

// AttachJobs makes c's DDLs and its Sync settle the jobs they meet with
// this package's state machine. Every catalog that runs DDLs needs it
// (session.NewBackend attaches the SQL node's).
func AttachJobs(c *catalog.Catalog) { c.SetJobSettler(jobSettler{c: c}) }

// jobSettler is catalog.JobSettler for one catalog.
type jobSettler struct{ c *catalog.Catalog }

func (s jobSettler) SettleJob(ctx context.Context, table *catalog.TableInfo) error {
	return settleJob(ctx, s.c, table)
}

func (s jobSettler) SettleOrphans(ctx context.Context) error { return settleOrphans(ctx, s.c) }

// reorg is what a backfill gets: the table in write-only state, the index
// to fill in, and a check that the job still runs here.
type reorg struct {
	Store kv.Storage
	Table *catalog.TableInfo
	Index *catalog.IndexInfo
	c     *catalog.Catalog
	job   int64
}

// Check fails when, as rd sees the schema, the job no longer runs on this
// node (so a backfill batch of a job settled elsewhere stops).
func (r *reorg) Check(ctx context.Context, rd kv.Retriever) error {
	t, err := catalog.ReadTable(ctx, rd, r.Table.DBID, r.Table.ID)
	if err != nil {
		return err
	}
	if t == nil || t.Job == nil || t.Job.ID != r.job || t.Job.Owner != r.c.NodeID() {
		return catalog.ErrJobLost
	}
	return nil
}

// backfill fills in an ADD INDEX's entries for the rows that existed
// before every node maintained it. A failure (a duplicate for a unique
// index) rolls the index back and is the DDL's error.
type backfill func(ctx context.Context, r *reorg) error

// jobInterrupt (tests) stops jobs before a step, as if their node died.
var jobInterrupt atomic.Pointer[func(t *catalog.TableInfo) bool]

// SetJobInterrupt makes every job this process drives call fn with its
// table before each step; when fn returns true the job stops there as if
// its node had died, left for the next DDL on the table to settle. nil
// turns it off. For tests.
func SetJobInterrupt(fn func(t *catalog.TableInfo) bool) {
	if fn == nil {
		jobInterrupt.Store(nil)
		return
	}
	jobInterrupt.Store(&fn)
}

// ddlJob starts an online schema change and runs it: fn, run as a DDL
// (again after a conflict), returns the job it started with
// Mutator.StartJob, or nil when there is nothing to do (IF [NOT] EXISTS).
func ddlJob(ctx context.Context, c *catalog.Catalog, fill backfill, fn func(m *catalog.Mutator) (*catalog.SchemaJob, error)) error {
	var job *catalog.SchemaJob
	err := c.DDL(ctx, func(m *catalog.Mutator) (err error) {
		job, err = fn(m)
		return err
	})
	if err != nil || job == nil {
		return err
	}
	return runJob(ctx, c, job, fill)
}

// runJob drives job, which this node started or took over, to its end:
// before every step it waits for every node to run the version of the
// previous one; an ADD INDEX backfills (fill) in write-only. It returns
// once the job is done and every node knows it, with the backfill's error
// if that rolled the job back. On any other failure it gives the job up
// (clears its owner), for the next DDL on the table to settle.
func runJob(ctx context.Context, c *catalog.Catalog, job *catalog.SchemaJob, fill backfill) error {
	c.MarkJobRunning(job.ID)
	defer c.ForgetJob(job.ID)
	var failure error
	for range maxJobSteps {
		if err := c.WaitAllNodes(ctx); err != nil {
			return giveUp(c, job, err)
		}
		t := c.InfoSchema().TableByID(job.TableID)
		if t == nil || t.Job == nil || t.Job.ID != job.ID {
			// Done: the last step removed the job and every node has it.
			return failure
		}
		if t.Job.Owner != c.NodeID() {
			return catalog.ErrJobLost
		}
		if fn := jobInterrupt.Load(); fn != nil && (*fn)(t) {
			return errJobInterrupted
		}
		completeTS := uint64(0)
		rollBack := false
		if jobNeedsBackfill(t.Job, t) {
			if fill == nil {
				rollBack = true
			} else if err := fill(ctx, &reorg{Store: c.Storage(), Table: t, Index: t.IndexByID(t.Job.Objects[0]), c: c, job: job.ID}); err != nil {
				if errors.Is(err, catalog.ErrJobLost) || ctx.Err() != nil {
					return giveUp(c, job, err)
				}
				failure, rollBack = err, true
			} else {
				// Every row visible from here on has its entry: the
				// backfill's batches committed before this timestamp.
				ts, err := c.Storage().CurrentTS(ctx)
				if err != nil {
					return giveUp(c, job, err)
				}
				completeTS = ts
			}
		}
		if _, err := jobStep(ctx, c, job, rollBack, completeTS); err != nil {
			return giveUp(c, job, err)
		}
	}
	return giveUp(c, job, fmt.Errorf("ddl: job %d did not finish in %d steps", job.ID, maxJobSteps))
}

// jobStep commits the job's next state (rolling it back first when
// rollBack) as one DDL transaction and returns its schema version.
func jobStep(ctx context.Context, c *catalog.Catalog, job *catalog.SchemaJob, rollBack bool, completeTS uint64) (int64, error) {
	return c.EditJob(ctx, job, c.NodeID(), func(m *catalog.Mutator, nt *catalog.TableInfo) error {
		if rollBack {
			nt.Job.RollingBack = true
		}
		dropped, err := stepJob(nt, completeTS)
		if err != nil {
			return err
		}
		// Index ids are not reused: GC destroys the entries once no
		// snapshot can read them.
		for i, r := range dropped {
			if err := delrange.Add(m.Txn(), i, r.Start, r.End); err != nil {
				return err
			}
		}
		return nil
	})
}

// giveUp clears job's owner (best effort, bounded), so any node's next
// DDL on the table settles it at once, and returns err.
func giveUp(c *catalog.Catalog, job *catalog.SchemaJob, err error) error {
	ctx, cancel := context.WithTimeout(context.Background(), jobGiveUpTimeout)
	defer cancel()
	_, _ = c.EditJob(ctx, job, c.NodeID(), func(_ *catalog.Mutator, nt *catalog.TableInfo) error {
		nt.Job.Owner = ""
		return nil
	})
	return err
}

// settleJob deals with the job under way on table (as a DDL found it):
// it waits while the job's node drives it, and takes the job over to
// finish it (an ADD rolled back, a DROP carried on) when that node is
// gone. It returns once the job is no longer the table's.
func settleJob(ctx context.Context, c *catalog.Catalog, table *catalog.TableInfo) error {
	jobID := table.Job.ID
	deadline := time.Now().Add(jobWaitTimeout)
	for {
		t, err := storedTable(ctx, c, table.DBID, table.ID)
		if err != nil {
			return err
		}
		if t == nil || t.Job == nil || t.Job.ID != jobID {
			return nil
		}
		alive, err := c.JobOwnerAlive(ctx, t.Job)
		if err != nil {
			return err
		}
		if !alive {
			return takeOver(ctx, c, t)
		}
		if time.Now().After(deadline) {
			return errJobWait
		}
		if err := kv.SleepCtx(ctx, jobWaitPoll); err != nil {
			return err
		}
	}
}

// settleOrphans settles every job of c's schema whose node is gone (the
// background check of the catalog's Sync; the next DDL on the table would
// do it too). Nodes racing for one job: one takes it over, the others find
// it taken.
func settleOrphans(ctx context.Context, c *catalog.Catalog) error {
	for _, db := range c.InfoSchema().DBs() {
		for _, t := range c.InfoSchema().Tables(db.Name) {
			if t.Job == nil {
				continue
			}
			alive, err := c.JobOwnerAlive(ctx, t.Job)
			if err != nil {
				return err
			}
			if alive {
				continue
			}
			if err := takeOver(ctx, c, t); err != nil {
				return fmt.Errorf("table %s.%s: %w", db.Name, t.Name, err)
			}
		}
	}
	return nil
}

// takeOver makes this node the owner of t's job, turning an ADD into its
// rollback, and runs it to its end.
func takeOver(ctx context.Context, c *catalog.Catalog, t *catalog.TableInfo) error {
	job := *t.Job
	c.MarkJobRunning(job.ID)
	// ErrJobLost: settled or taken by someone else meanwhile.
	_, err := c.EditJob(ctx, &job, t.Job.Owner, func(_ *catalog.Mutator, nt *catalog.TableInfo) error {
		nt.Job.Owner = c.NodeID()
		if nt.Job.Kind == JobAddIndex || nt.Job.Kind == JobAddColumn {
			nt.Job.RollingBack = true
		}
		return nil
	})
	if err != nil {
		c.ForgetJob(job.ID)
		if errors.Is(err, catalog.ErrJobLost) {
			return nil // the caller looks again
		}
		return err
	}
	return runJob(ctx, c, &job, nil)
}

// storedTable reads table id of database dbID as stored now (nil if it is
// gone).
func storedTable(ctx context.Context, c *catalog.Catalog, dbID, id int64) (*catalog.TableInfo, error) {
	ts, err := c.Storage().CurrentTS(ctx)
	if err != nil {
		return nil, err
	}
	return catalog.ReadTable(ctx, c.Storage().GetSnapshot(ts), dbID, id)
}

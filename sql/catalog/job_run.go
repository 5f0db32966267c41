package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/kv/delrange"
)

// Driving the jobs of job.go: a node runs the jobs it starts (RunJob),
// waits for or takes over another node's (settleJob, takeOver, and
// settleOrphans from Sync), and gives up the ones it cannot finish.

// jobBusyError: a DDL met a table with another job under way.
type jobBusyError struct{ table *TableInfo }

func (e *jobBusyError) Error() string {
	return fmt.Sprintf("catalog: table %s has a schema change under way (job %d)", e.table.Name, e.table.Job.ID)
}

var (
	// errJobLost: the job left this node (another node settled it after
	// this node's record lapsed) or vanished.
	errJobLost = errno.New(mysql.ErrUnknown, "the schema change was taken over or cancelled by another SQL node")
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

func (c *Catalog) markRunning(id int64) {
	c.jobsMu.Lock()
	c.running[id] = true
	c.jobsMu.Unlock()
}

func (c *Catalog) forgetJobs(jobs []*SchemaJob) {
	c.jobsMu.Lock()
	for _, j := range jobs {
		delete(c.running, j.ID)
	}
	c.jobsMu.Unlock()
}

func (c *Catalog) isRunning(id int64) bool {
	c.jobsMu.Lock()
	defer c.jobsMu.Unlock()
	return c.running[id]
}

// StartJob records an online schema change of kind on objects of t: t
// (a clone being stored by this DDL) must already hold them in their first
// state. The caller then drives the job with RunJob once the DDL
// committed.
func (m *Mutator) StartJob(db *DBInfo, t *TableInfo, kind JobKind, objects ...int64) (*SchemaJob, error) {
	id, err := m.GenID()
	if err != nil {
		return nil, err
	}
	job := &SchemaJob{ID: id, TableID: t.ID, Kind: kind, Objects: objects, Owner: m.c.nodeID}
	t.Job = job
	m.started = append(m.started, job)
	m.c.markRunning(job.ID)
	return job, m.PutTable(db, t)
}

// Reorg is what a backfill gets: the table in write-only state, the index
// to fill in, and a check that the job still runs here.
type Reorg struct {
	Store kv.Storage
	Table *TableInfo
	Index *IndexInfo
	c     *Catalog
	job   int64
}

// Check fails when, as r sees the schema, the job no longer runs on this
// node (so a backfill batch of a job settled elsewhere stops).
func (r *Reorg) Check(ctx context.Context, rd kv.Retriever) error {
	v, err := rd.Get(ctx, tableKey(r.Table.DBID, r.Table.ID))
	if errors.Is(err, kv.ErrNotExist) {
		return errJobLost
	}
	if err != nil {
		return err
	}
	var t TableInfo
	if err := json.Unmarshal(v, &t); err != nil {
		return err
	}
	if t.Job == nil || t.Job.ID != r.job || t.Job.Owner != r.c.nodeID {
		return errJobLost
	}
	return nil
}

// Backfill fills in an ADD INDEX's entries for the rows that existed
// before every node maintained it. A failure (a duplicate for a unique
// index) rolls the index back and is the DDL's error.
type Backfill func(ctx context.Context, r *Reorg) error

// jobInterrupt (tests) stops jobs before a step, as if their node died.
var jobInterrupt atomic.Pointer[func(t *TableInfo) bool]

// SetJobInterrupt makes every job this process drives call fn with its
// table before each step; when fn returns true the job stops there as if
// its node had died, left for the next DDL on the table to settle. nil
// turns it off. For tests.
func SetJobInterrupt(fn func(t *TableInfo) bool) {
	if fn == nil {
		jobInterrupt.Store(nil)
		return
	}
	jobInterrupt.Store(&fn)
}

// DDLJob starts an online schema change and runs it: fn, run as a DDL
// (again after a conflict), returns the job it started with
// Mutator.StartJob, or nil when there is nothing to do (IF [NOT] EXISTS).
func (c *Catalog) DDLJob(ctx context.Context, backfill Backfill, fn func(m *Mutator) (*SchemaJob, error)) error {
	var job *SchemaJob
	err := c.DDL(ctx, func(m *Mutator) (err error) {
		job, err = fn(m)
		return err
	})
	if err != nil || job == nil {
		return err
	}
	return c.RunJob(ctx, job, backfill)
}

// RunJob drives job, which this node started or took over, to its end:
// before every step it waits for every node to run the version of the
// previous one; an ADD INDEX backfills (backfill) in write-only. It
// returns once the job is done and every node knows it, with the
// backfill's error if that rolled the job back. On any other failure it
// gives the job up (clears its owner), for the next DDL on the table to
// settle.
func (c *Catalog) RunJob(ctx context.Context, job *SchemaJob, backfill Backfill) error {
	c.markRunning(job.ID)
	defer c.forgetJobs([]*SchemaJob{job})
	var failure error
	for range maxJobSteps {
		version := c.InfoSchema().Version()
		if err := c.waitAllNodes(ctx, version); err != nil {
			return c.giveUp(job, err)
		}
		t := c.InfoSchema().TableByID(job.TableID)
		if t == nil || t.Job == nil || t.Job.ID != job.ID {
			// Done: the last step removed the job and every node has it.
			return failure
		}
		if t.Job.Owner != c.nodeID {
			return errJobLost
		}
		if fn := jobInterrupt.Load(); fn != nil && (*fn)(t) {
			return errJobInterrupted
		}
		completeTS := uint64(0)
		rollBack := false
		if t.Job.needsBackfill(t) {
			if backfill == nil {
				rollBack = true
			} else if err := backfill(ctx, &Reorg{Store: c.store, Table: t, Index: t.IndexByID(t.Job.Objects[0]), c: c, job: job.ID}); err != nil {
				if errors.Is(err, errJobLost) || ctx.Err() != nil {
					return c.giveUp(job, err)
				}
				failure, rollBack = err, true
			} else {
				// Every row visible from here on has its entry: the
				// backfill's batches committed before this timestamp.
				ts, err := c.store.CurrentTS(ctx)
				if err != nil {
					return c.giveUp(job, err)
				}
				completeTS = ts
			}
		}
		if _, err := c.jobStep(ctx, job, rollBack, completeTS); err != nil {
			return c.giveUp(job, err)
		}
	}
	return c.giveUp(job, fmt.Errorf("catalog: job %d did not finish in %d steps", job.ID, maxJobSteps))
}

// jobStep commits the job's next state (rolling it back first when
// rollBack) as one DDL transaction and returns its schema version.
func (c *Catalog) jobStep(ctx context.Context, job *SchemaJob, rollBack bool, completeTS uint64) (int64, error) {
	return c.editJob(ctx, job, c.nodeID, func(m *Mutator, nt *TableInfo) error {
		if rollBack {
			nt.Job.RollingBack = true
		}
		dropped, err := stepJob(nt, completeTS)
		if err != nil || dropped == nil {
			return err
		}
		// Index ids are not reused: GC destroys the entries once no
		// snapshot can read them.
		return delrange.Add(m.Txn(), 0, dropped.Start, dropped.End)
	})
}

// editJob runs edit, as a DDL transaction, on a copy of the table of job
// as stored, and stores the copy; errJobLost when the table no longer runs
// job under owner. It returns the schema version committed.
func (c *Catalog) editJob(ctx context.Context, job *SchemaJob, owner string, edit func(m *Mutator, nt *TableInfo) error) (int64, error) {
	return c.runDDL(ctx, job, func(m *Mutator) error {
		t := m.Schema().TableByID(job.TableID)
		if t == nil || t.Job == nil || t.Job.ID != job.ID || t.Job.Owner != owner {
			return errJobLost
		}
		nt := t.Clone()
		if err := edit(m, nt); err != nil {
			return err
		}
		db := m.Schema().DBByID(nt.DBID)
		if db == nil {
			return errJobLost
		}
		return m.PutTable(db, nt)
	})
}

// giveUp clears job's owner (best effort, bounded), so any node's next
// DDL on the table settles it at once, and returns err.
func (c *Catalog) giveUp(job *SchemaJob, err error) error {
	ctx, cancel := context.WithTimeout(context.Background(), jobGiveUpTimeout)
	defer cancel()
	_, _ = c.editJob(ctx, job, c.nodeID, func(_ *Mutator, nt *TableInfo) error {
		nt.Job.Owner = ""
		return nil
	})
	return err
}

// settleJob deals with the job under way on table (as a DDL found it):
// it waits while the job's node drives it, and takes the job over to
// finish it (an ADD rolled back, a DROP carried on) when that node is
// gone. It returns once the job is no longer the table's.
func (c *Catalog) settleJob(ctx context.Context, table *TableInfo) error {
	jobID := table.Job.ID
	deadline := time.Now().Add(jobWaitTimeout)
	for {
		t, err := c.storedTable(ctx, table.DBID, table.ID)
		if err != nil {
			return err
		}
		if t == nil || t.Job == nil || t.Job.ID != jobID {
			return nil
		}
		alive, err := c.ownerAlive(ctx, t.Job)
		if err != nil {
			return err
		}
		if !alive {
			return c.takeOver(ctx, t)
		}
		if time.Now().After(deadline) {
			return errJobWait
		}
		if err := kv.SleepCtx(ctx, jobWaitPoll); err != nil {
			return err
		}
	}
}

// ownerAlive reports whether the node driving job is still at it.
func (c *Catalog) ownerAlive(ctx context.Context, job *SchemaJob) (bool, error) {
	switch {
	case job.Owner == "":
		return false, nil
	case job.Owner == c.nodeID:
		return c.isRunning(job.ID), nil
	case !c.registered.Load():
		// No other node takes part (the embedded server): the owner is
		// a previous run of this one.
		return false, nil
	}
	return c.nodeAlive(ctx, job.Owner)
}

// orphanCheckInterval: how often a syncing node looks for jobs whose node
// is gone, so they do not wait for the next DDL on their table.
const orphanCheckInterval = 2 * time.Second

// settleOrphans settles every job of this node's schema whose node is gone
// (the background check of Sync; the next DDL on the table would do it
// too). Nodes racing for one job: one takes it over, the others find it
// taken.
func (c *Catalog) settleOrphans(ctx context.Context) error {
	for _, db := range c.InfoSchema().DBs() {
		for _, t := range c.InfoSchema().Tables(db.Name) {
			if t.Job == nil {
				continue
			}
			alive, err := c.ownerAlive(ctx, t.Job)
			if err != nil {
				return err
			}
			if alive {
				continue
			}
			if err := c.takeOver(ctx, t); err != nil {
				return fmt.Errorf("table %s.%s: %w", db.Name, t.Name, err)
			}
		}
	}
	return nil
}

// takeOver makes this node the owner of t's job, turning an ADD into its
// rollback, and runs it to its end.
func (c *Catalog) takeOver(ctx context.Context, t *TableInfo) error {
	job := *t.Job
	c.markRunning(job.ID)
	// errJobLost: settled or taken by someone else meanwhile.
	_, err := c.editJob(ctx, &job, t.Job.Owner, func(_ *Mutator, nt *TableInfo) error {
		nt.Job.Owner = c.nodeID
		if nt.Job.Kind == JobAddIndex || nt.Job.Kind == JobAddColumn {
			nt.Job.RollingBack = true
		}
		return nil
	})
	if err != nil {
		c.forgetJobs([]*SchemaJob{&job})
		if errors.Is(err, errJobLost) {
			return nil // the caller looks again
		}
		return err
	}
	return c.RunJob(ctx, &job, nil)
}

// storedTable reads table id of database dbID as stored now (nil if it is
// gone).
func (c *Catalog) storedTable(ctx context.Context, dbID, id int64) (*TableInfo, error) {
	ts, err := c.store.CurrentTS(ctx)
	if err != nil {
		return nil, err
	}
	v, err := c.store.GetSnapshot(ts).Get(ctx, tableKey(dbID, id))
	if errors.Is(err, kv.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	t := &TableInfo{}
	if err := json.Unmarshal(v, t); err != nil {
		return nil, fmt.Errorf("catalog: decode table: %w", err)
	}
	t.init()
	return t, nil
}

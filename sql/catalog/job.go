package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/kv"
)

// What an online schema change is, as the catalog keeps it: a SchemaJob
// recorded in its table (TableInfo.Job), the jobs this node drives, and
// the primitives a job driver needs (EditJob, JobOwnerAlive, ReadTable).
// How a job steps through its states, and settling the jobs of gone nodes,
// is sql/ddl's (job.go, job_run.go); the catalog reaches it through the
// JobSettler set with SetJobSettler, because its own DDL loop meets jobs
// (a DDL on a busy table) and so does Sync (the jobs of gone nodes).

// JobKind names an online schema change; sql/ddl defines the kinds and
// what their states mean.
type JobKind string

// SchemaJob is an online schema change under way on one table.
type SchemaJob struct {
	ID      int64   `json:"id"`
	TableID int64   `json:"table_id"`
	Kind    JobKind `json:"kind"`
	// Objects: the index id, or the column ids (moved together).
	Objects []int64 `json:"objects"`
	// Indexes: a DROP COLUMN's indexes over only its columns, which go
	// with them (state by state, then their entries queued for GC).
	Indexes []int64 `json:"indexes,omitempty"`
	// Owner is the node driving the job ("" once it gave up).
	Owner string `json:"owner"`
	// RollingBack: an ADD going back to absent (its backfill failed, or
	// its node died).
	RollingBack bool `json:"rolling_back,omitempty"`
}

// JobSettler drives the jobs the catalog meets but does not step itself.
// sql/ddl implements it; a catalog without one fails a DDL that meets
// another job and never settles orphans.
type JobSettler interface {
	// SettleJob returns once the job table (as a DDL found it) had under
	// way is no longer the table's: it waits while the job's node drives
	// it and finishes it when that node is gone.
	SettleJob(ctx context.Context, table *TableInfo) error
	// SettleOrphans settles every job of the current schema whose node
	// is gone (Sync's background check).
	SettleOrphans(ctx context.Context) error
}

// SetJobSettler makes s settle the jobs this catalog's DDLs and Sync
// meet. Call it once, before the catalog runs DDLs.
func (c *Catalog) SetJobSettler(s JobSettler) { c.settler = s }

// jobBusyError: a DDL met a table with another job under way.
type jobBusyError struct{ table *TableInfo }

func (e *jobBusyError) Error() string {
	return fmt.Sprintf("catalog: table %s has a schema change under way (job %d)", e.table.Name, e.table.Job.ID)
}

// ErrJobLost: the job left this node (another node settled it after this
// node's record lapsed) or vanished.
var ErrJobLost = errno.New(mysql.ErrUnknown, "the schema change was taken over or cancelled by another SQL node")

// MarkJobRunning records that this node drives job id (JobOwnerAlive then
// says so for it); ForgetJob undoes it.
func (c *Catalog) MarkJobRunning(id int64) {
	c.jobsMu.Lock()
	c.running[id] = true
	c.jobsMu.Unlock()
}

// ForgetJob records that this node no longer drives job id.
func (c *Catalog) ForgetJob(id int64) {
	c.jobsMu.Lock()
	delete(c.running, id)
	c.jobsMu.Unlock()
}

func (c *Catalog) forgetJobs(jobs []*SchemaJob) {
	for _, j := range jobs {
		c.ForgetJob(j.ID)
	}
}

func (c *Catalog) isRunning(id int64) bool {
	c.jobsMu.Lock()
	defer c.jobsMu.Unlock()
	return c.running[id]
}

// StartJob records an online schema change of kind on objects of t: t
// (a clone being stored by this DDL) must already hold them in their first
// state. The caller then drives the job once the DDL committed.
func (m *Mutator) StartJob(db *DBInfo, t *TableInfo, kind JobKind, objects ...int64) (*SchemaJob, error) {
	id, err := m.GenID()
	if err != nil {
		return nil, err
	}
	job := &SchemaJob{ID: id, TableID: t.ID, Kind: kind, Objects: objects, Owner: m.c.nodeID}
	t.Job = job
	m.started = append(m.started, job)
	m.c.MarkJobRunning(job.ID)
	return job, m.PutTable(db, t)
}

// EditJob runs edit, as a DDL transaction, on a copy of the table of job
// as stored, and stores the copy; ErrJobLost when the table no longer runs
// job under owner. It returns the schema version committed.
func (c *Catalog) EditJob(ctx context.Context, job *SchemaJob, owner string, edit func(m *Mutator, nt *TableInfo) error) (int64, error) {
	return c.runDDL(ctx, job, func(m *Mutator) error {
		t := m.Schema().TableByID(job.TableID)
		if t == nil || t.Job == nil || t.Job.ID != job.ID || t.Job.Owner != owner {
			return ErrJobLost
		}
		nt := t.Clone()
		if err := edit(m, nt); err != nil {
			return err
		}
		db := m.Schema().DBByID(nt.DBID)
		if db == nil {
			return ErrJobLost
		}
		return m.PutTable(db, nt)
	})
}

// JobOwnerAlive reports whether the node driving job is still at it.
func (c *Catalog) JobOwnerAlive(ctx context.Context, job *SchemaJob) (bool, error) {
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

// ReadTable reads table id of database dbID as r holds it (nil if it is
// gone).
func ReadTable(ctx context.Context, r kv.Retriever, dbID, id int64) (*TableInfo, error) {
	v, err := r.Get(ctx, tableKey(dbID, id))
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

// orphanCheckInterval: how often a syncing node looks for jobs whose node
// is gone, so they do not wait for the next DDL on their table.
const orphanCheckInterval = 2 * time.Second

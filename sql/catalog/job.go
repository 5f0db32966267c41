package catalog

import (
	"fmt"

	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/tablecodec"
)

// Online schema changes (F1, as TiDB runs them). The DDLs that change what
// DML writes move their object through states, one transaction and one
// schema version per step:
//
//	ADD INDEX    absent -> delete-only -> write-only -> backfill -> public
//	ADD COLUMN   absent -> delete-only -> write-only -> public
//	DROP INDEX   public -> write-only -> delete-only -> absent (entries queued for GC)
//	DROP COLUMN  public -> write-only -> delete-only -> absent
//
// Before each step the job waits until every live SQL node runs the
// version of the previous one (waitAllNodes), so DML commits only ever
// happen under two adjacent states, which are compatible: a delete-only
// writer never leaves behind an entry an absent writer would not delete,
// a write-only writer keeps the object exact for public readers, and the
// backfill starts once no writer skips the index any more.
//
// The job is recorded in its table (TableInfo.Job) with the node driving
// it: one job per table at a time; any other DDL that would change the
// table waits for it, or settles it when its node is gone (its record
// lapsed, or it is this node and the job no longer runs here); syncing
// nodes also look for such jobs in the background (settleOrphans).
// Settling rolls an ADD back (absent again, entries queued for GC) and a
// DROP forward; either way through the remaining states with their waits.
// Meanwhile readers never see the non-public object and writers keep
// maintaining it, so a job left midway costs writes, never correctness.

// JobKind names an online schema change.
type JobKind string

const (
	JobAddIndex   JobKind = "add index"
	JobDropIndex  JobKind = "drop index"
	JobAddColumn  JobKind = "add column"
	JobDropColumn JobKind = "drop column"
)

// SchemaJob is an online schema change under way on one table.
type SchemaJob struct {
	ID      int64   `json:"id"`
	TableID int64   `json:"table_id"`
	Kind    JobKind `json:"kind"`
	// Objects: the index id, or the column ids (moved together).
	Objects []int64 `json:"objects"`
	// Owner is the node driving the job ("" once it gave up).
	Owner string `json:"owner"`
	// RollingBack: an ADD going back to absent (its backfill failed, or
	// its node died).
	RollingBack bool `json:"rolling_back,omitempty"`
}

func (j *SchemaJob) onIndex() bool { return j.Kind == JobAddIndex || j.Kind == JobDropIndex }

// removing: the job takes its objects towards absent.
func (j *SchemaJob) removing() bool {
	return j.RollingBack || j.Kind == JobDropIndex || j.Kind == JobDropColumn
}

// state is the state of the job's objects in t (they move together).
func (j *SchemaJob) state(t *TableInfo) (SchemaState, error) {
	if len(j.Objects) == 0 {
		return 0, fmt.Errorf("catalog: job %d has no objects", j.ID)
	}
	if j.onIndex() {
		if idx := t.IndexByID(j.Objects[0]); idx != nil {
			return idx.State, nil
		}
	} else if c := t.ColumnByID(j.Objects[0]); c != nil {
		return c.State, nil
	}
	return 0, fmt.Errorf("catalog: job %d: object %d missing from table %s", j.ID, j.Objects[0], t.Name)
}

// needsBackfill: an ADD INDEX in write-only backfills before it goes public.
func (j *SchemaJob) needsBackfill(t *TableInfo) bool {
	st, err := j.state(t)
	return err == nil && j.Kind == JobAddIndex && !j.RollingBack && st == StateWriteOnly
}

// stepJob moves the job's objects in nt (a clone of its table) one state
// on, setting CompleteTS on an index going public. It returns the key
// range to queue for destruction (an index gone), and clears nt.Job once
// the job is done.
func stepJob(nt *TableInfo, completeTS uint64) (*kv.KeyRange, error) {
	j := nt.Job
	st, err := j.state(nt)
	if err != nil {
		return nil, err
	}
	next := st
	gone := false
	if j.removing() {
		switch st {
		case StatePublic:
			next = StateWriteOnly
		case StateWriteOnly:
			next = StateDeleteOnly
		case StateDeleteOnly:
			gone = true
		}
	} else {
		switch st {
		case StateDeleteOnly:
			next = StateWriteOnly
		case StateWriteOnly:
			next = StatePublic
		}
	}
	var dropped *kv.KeyRange
	if j.onIndex() {
		id := j.Objects[0]
		for i, idx := range nt.Indices {
			if idx.ID != id {
				continue
			}
			if gone {
				nt.Indices = append(nt.Indices[:i:i], nt.Indices[i+1:]...)
				prefix := kv.Key(tablecodec.IndexPrefix(nt.ID, id))
				dropped = &kv.KeyRange{Start: prefix, End: prefix.PrefixNext()}
			} else {
				idx.State = next
				if next == StatePublic {
					idx.CompleteTS = completeTS
				}
			}
			break
		}
	} else {
		ids := map[int64]bool{}
		for _, id := range j.Objects {
			ids[id] = true
		}
		kept := nt.Columns[:0:0]
		for _, c := range nt.Columns {
			if ids[c.ID] {
				if gone {
					continue
				}
				c.State = next
			}
			kept = append(kept, c)
		}
		nt.Columns = kept
	}
	if gone || next == StatePublic {
		nt.Job = nil
	}
	return dropped, nil
}

package ddl

import (
	"fmt"
	"slices"

	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/sql/catalog"
	"github.com/shoaldb/shoal/tablecodec"
)

// Online schema changes (F1, as TiDB runs them). The DDLs that change what
// DML writes move their object through states, one transaction and one
// schema version per step:
//
//	ADD INDEX    absent -> delete-only -> write-only -> backfill -> public
//	ADD COLUMN   absent -> delete-only -> write-only -> public
//	DROP INDEX   public -> write-only -> delete-only -> absent (entries queued for GC)
//	DROP COLUMN  public -> write-only -> delete-only -> absent (with the
//	             indexes over only its columns: catalog.SchemaJob.Indexes)
//
// Before each step the job waits until every live SQL node runs the
// version of the previous one (Catalog.WaitAllNodes), so DML commits only ever
// happen under two adjacent states, which are compatible: a delete-only
// writer never leaves behind an entry an absent writer would not delete,
// a write-only writer keeps the object exact for public readers, and the
// backfill starts once no writer skips the index any more.
//
// The job is recorded in its table (catalog.TableInfo.Job) with the node driving
// it: one job per table at a time; any other DDL that would change the
// table waits for it, or settles it when its node is gone (its record
// lapsed, or it is this node and the job no longer runs here); syncing
// nodes also look for such jobs in the background (settleOrphans). The
// catalog reaches settleJob and settleOrphans through the
// catalog.JobSettler AttachJobs sets (job_run.go).
// Settling rolls an ADD back (absent again, entries queued for GC) and a
// DROP forward; either way through the remaining states with their waits.
// Meanwhile readers never see the non-public object and writers keep
// maintaining it, so a job left midway costs writes, never correctness.

// The job kinds (catalog.SchemaJob.Kind); each moves its objects as the
// table above says.
const (
	JobAddIndex   catalog.JobKind = "add index"
	JobDropIndex  catalog.JobKind = "drop index"
	JobAddColumn  catalog.JobKind = "add column"
	JobDropColumn catalog.JobKind = "drop column"
)

// jobOnIndex: the job's object is an index (else columns).
func jobOnIndex(j *catalog.SchemaJob) bool {
	return j.Kind == JobAddIndex || j.Kind == JobDropIndex
}

// jobRemoving: the job takes its objects towards absent.
func jobRemoving(j *catalog.SchemaJob) bool {
	return j.RollingBack || j.Kind == JobDropIndex || j.Kind == JobDropColumn
}

// jobState is the state of j's objects in t (they move together).
func jobState(j *catalog.SchemaJob, t *catalog.TableInfo) (catalog.SchemaState, error) {
	if len(j.Objects) == 0 {
		return 0, fmt.Errorf("ddl: job %d has no objects", j.ID)
	}
	if jobOnIndex(j) {
		if idx := t.IndexByID(j.Objects[0]); idx != nil {
			return idx.State, nil
		}
	} else if c := t.ColumnByID(j.Objects[0]); c != nil {
		return c.State, nil
	}
	return 0, fmt.Errorf("ddl: job %d: object %d missing from table %s", j.ID, j.Objects[0], t.Name)
}

// needsBackfill: an ADD INDEX in write-only backfills before it goes public.
func jobNeedsBackfill(j *catalog.SchemaJob, t *catalog.TableInfo) bool {
	st, err := jobState(j, t)
	return err == nil && j.Kind == JobAddIndex && !j.RollingBack && st == catalog.StateWriteOnly
}

// stepJob moves the job's objects in nt (a clone of its table) one state
// on, setting CompleteTS on an index going public. It returns the key
// range to queue for destruction (an index gone), and clears nt.Job once
// the job is done.
func stepJob(nt *catalog.TableInfo, completeTS uint64) ([]kv.KeyRange, error) {
	j := nt.Job
	st, err := jobState(j, nt)
	if err != nil {
		return nil, err
	}
	next := st
	gone := false
	if jobRemoving(j) {
		switch st {
		case catalog.StatePublic:
			next = catalog.StateWriteOnly
		case catalog.StateWriteOnly:
			next = catalog.StateDeleteOnly
		case catalog.StateDeleteOnly:
			gone = true
		}
	} else {
		switch st {
		case catalog.StateDeleteOnly:
			next = catalog.StateWriteOnly
		case catalog.StateWriteOnly:
			next = catalog.StatePublic
		}
	}
	var dropped []kv.KeyRange
	stepIndexes := func(ids ...int64) {
		kept := nt.Indices[:0:0]
		for _, idx := range nt.Indices {
			if !slices.Contains(ids, idx.ID) {
				kept = append(kept, idx)
				continue
			}
			if gone {
				prefix := kv.Key(tablecodec.IndexPrefix(nt.ID, idx.ID))
				dropped = append(dropped, kv.KeyRange{Start: prefix, End: prefix.PrefixNext()})
				continue
			}
			idx.State = next
			if next == catalog.StatePublic {
				idx.CompleteTS = completeTS
			}
			kept = append(kept, idx)
		}
		nt.Indices = kept
	}
	if jobOnIndex(j) {
		stepIndexes(j.Objects[0])
	} else {
		stepIndexes(j.Indexes...)
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
	if gone || next == catalog.StatePublic {
		nt.Job = nil
	}
	return dropped, nil
}

// Package ddl executes DDL statements: it decides what each statement
// changes in the schema, checks the names it creates (names.go) and the
// defaults it declares (defaults.go; DEFAULT and ON UPDATE
// CURRENT_TIMESTAMP in current_timestamp.go), and does the data work an online
// schema change needs (backfill.go). One file per DDL kind: database.go,
// create_table.go, create_table_like.go, drop_table.go,
// truncate_table.go, create_index.go, drop_index.go, add_column.go,
// drop_column.go, add_primary_key.go, modify_column.go (MODIFY, CHANGE,
// RENAME COLUMN, SET/DROP DEFAULT, RENAME INDEX), rename_table.go,
// create_view.go; alter_table.go dispatches ALTER TABLE's specs (the
// metadata-only ones together in one DDL), ddl.go the statements.
// CREATE TABLE ... SELECT is driven by the session, which plans the
// SELECT (DDL.SelectColumns) and copies the rows. CHECK constraints are
// in check_constraint.go (ALTER TABLE ADD/DROP/ALTER CHECK); table_exprs.go
// judges the expressions a table keeps (generated columns, CHECK
// constraints, expression defaults: MySQL's rules, check names unique per
// schema) and expr_text.go prints them as MySQL does, which is also the
// text the catalog keeps.
// temporary.go is the TEMPORARY-table side of CREATE, DROP and TRUNCATE:
// those change only the session's DDL.Temp, never the shared schema.
//
// The online schema changes (F1) are here too, statement and state
// machine together: the job kinds and how each steps through its states
// (job.go: stepJob), running a job, waiting for or taking over another
// node's, settling the jobs of gone nodes (job_run.go), and the backfill
// a step needs (backfill.go).
//
// The seam with sql/catalog: the catalog holds the schema objects, their
// storage and what every SQL node takes part in: the DDL transaction
// (Catalog.DDL: reruns after a conflict), what a job is (SchemaJob,
// recorded in its table; the jobs this node drives), schema leases and
// the commit gate (nodes.go, gate.go, sync.go). A single-version change
// is one Catalog.DDL; an online one starts a job (Mutator.StartJob inside
// ddlJob) and steps it here with the catalog's primitives (EditJob,
// WaitAllNodes, JobOwnerAlive). The catalog meets jobs itself, in a DDL
// on a table whose job is under way and in Sync's look for jobs of gone
// nodes; it calls back here through the catalog.JobSettler that
// AttachJobs sets on it (session.NewBackend does, for the SQL node's
// catalog). This package imports sql/catalog, never the reverse.
//
// Invariants:
//   - A DDL function works from the Mutator alone (m.Schema(), never the
//     catalog's current schema): it runs again on the winner's schema
//     after losing to a concurrent DDL.
//   - A DDL judges a table only after Mutator.RequireNoJob (tableFor does
//     it), so it never decides on states a running job is changing.
//   - Names are refused before anything runs (checkDDLNames).
//   - A job moves one state per schema version and, before the next,
//     waits for every live SQL node to run that version (F1's
//     two-version invariant; see job.go).
//   - A change that forbids values existing rows may hold (a column made
//     NOT NULL) first makes writers refuse them (ColumnInfo.PreventNull),
//     waits for every node to run that version, then checks the rows.
//   - A backfill writes exactly the entries writers would (through
//     executor.DecodeRecord and executor.IndexValues), in batches that
//     lock their rows, so concurrent DML makes them conflict and rerun.
//
// Adding a DDL kind (a type change that rewrites rows, a clustered
// primary key on an existing table, ...):
//  1. Dispatch: a case in Exec (a statement) or alterTable (an ALTER
//     TABLE spec) calling a method in a new file named for the kind
//     (rename_table.go, modify_column.go, ...).
//  2. Names: the names it creates or renames are checked in
//     checkDDLNames (names.go).
//  3. A change no DML needs to see in steps (renames, metadata only, a
//     new table): one d.Catalog.DDL whose function finds the table with
//     d.tableFor, clones it, changes the clone and stores it with
//     m.PutTable; data that goes away is queued for GC through
//     kv/delrange (see queueTableData).
//  4. A change writers must follow in steps (adding or removing what
//     they write): ddlJob with a function that puts the object in its
//     first state and calls m.StartJob. A new job kind is all here: its
//     JobKind constant and its states in job.go (stepJob, jobState; what
//     a node that takes it over does in takeOver), and, when existing
//     rows need work before it goes public, a backfill like
//     backfillIndex run by runJob; outside this package only the
//     writers' handling of its non-public states in sql/executor.
//  5. Tests: its states in job_test.go (TestStepJobStates), datadriven
//     SQL in session/testdata (ddl, online_ddl), concurrent DML and node
//     failures in session/online_ddl_test.go.
package ddl

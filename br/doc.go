// Package br backs up databases to external storage and restores them: the
// engine behind the BACKUP DATABASE and RESTORE DATABASE statements (and the
// `shoal backup` / `shoal restore` commands that send them).
//
// Backup reads every table of the named databases from one kv.Snapshot,
// range by range with a small worker pool, and writes one data file per
// non-empty range plus a backupmeta file describing them. Restore verifies
// the backup, creates the databases and tables through the catalog under
// new table IDs, rewrites each key's table ID and writes the keys back in
// bounded transactions, then verifies the restored tables' checksums.
//
// Invariants:
//   - A backup is a consistent snapshot: everything is read at ONE
//     timestamp (taken from the TSO), schema included (the catalog records
//     as stored at that timestamp, not the node's in-memory schema). The
//     timestamp is held by an open read-only transaction for the whole
//     backup, so the embedded GC never collects versions the backup reads.
//     (That holds the GC of this process only; once the cluster runs GC,
//     a backup from a SQL node must also register a service safe point
//     with PD.)
//   - A table's whole key prefix is copied ('t' tableID: rows and every
//     index), so a restore needs no index rebuild; keys are stored with
//     their original table ID and rewritten only at restore.
//   - The backupmeta file is written last, atomically (temporary file then
//     rename), after every data file is complete: a directory with a
//     backupmeta holds a complete backup, and one without it holds none.
//     A destination that already holds a backupmeta (or a backup.lock from
//     a backup in progress or one that failed) is refused, so a backup
//     never mixes with or overwrites another.
//   - Every data file carries a CRC32 and size in the meta, and every table
//     a checksum (CRC64 of each key without its table prefix and value,
//     XORed; with key, byte and row counts) that does not depend on the
//     table ID. Restore checks all files and table checksums before it
//     creates anything, and checks the table checksums again on the
//     restored data: a corrupted backup is refused, never half-restored.
//   - Restore never writes into an existing table: the target tables must
//     not exist (1050). Restored tables get new IDs from the catalog (IDs
//     are never reused), and their id allocators start above the backed-up
//     high-water mark and the largest row handle, so later inserts do not
//     collide with restored rows. If restore fails after creating tables,
//     it deletes their keys and drops them (and the database it created).
//   - Restore is not atomic for readers (as TiDB's): the new tables are
//     visible, and fill up, while it runs. It expects no other writers on
//     the tables it creates.
package br

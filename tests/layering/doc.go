// Package layering holds tests that keep the package graph as
// ARCHITECTURE.md describes it: the SQL node (kv/..., sql/..., session,
// and sqlnode, which wires them) reaches a store only through the
// contract (store/kvrpc and its wire codec), never through the store's
// implementation (mvcc, engine, service, raftstore, grpcserver), and
// within the SQL layer imports run down: catalog and expression, planner,
// executor, ddl, session. Tests are not checked: sqlnode's own start a
// store in-process.
package layering

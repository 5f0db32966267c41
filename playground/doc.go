// Package playground runs a local shoal cluster on 127.0.0.1: N PD members,
// N stores and N SQL nodes (each the shoal binary as its own process) and
// the real HAProxy in front of the SQL nodes, like `tiup playground`.
//
// Job: start the processes in dependency order, wait until each is
// healthy (PD: its status reports health with a known leader; stores:
// registered and heartbeating, and with three or more stores every region
// of the bootstrapped cluster has its voters; SQL nodes: PD reachable),
// write and start HAProxy, and on Stop tear everything down in reverse
// order: HAProxy, SQL nodes, stores, PD.
//
// Invariants:
//   - Everything listens on 127.0.0.1 only. Ports derive from BasePort
//     (see Layout) and are all checked free before any process starts.
//   - Every process gets its own data directory DataDir/<name> and log
//     file DataDir/<name>.log.
//   - Every wait is bounded; every stop sends SIGTERM, waits a bounded
//     time, then SIGKILLs. A Cluster whose Start failed has already
//     stopped what it started; Stop is idempotent.
//   - Children get Pdeathsig SIGKILL (Linux), so a killed playground does
//     not leave processes behind.
package playground

// Package playground runs a local shoal cluster on 127.0.0.1: N PD members,
// N stores and N SQL nodes (each the shoal binary as its own process) and
// the real HAProxy in front of the SQL nodes, like `tiup playground`.
//
// Job: start the processes in dependency order, wait until each is
// healthy (PD: its status reports health with a known leader; stores:
// registered and heartbeating, and with three or more stores every region
// of the bootstrapped cluster has its voters; SQL nodes: PD reachable),
// write and start HAProxy, and on Stop tear everything down in reverse
// order: HAProxy, SQL nodes, stores, PD. For fault tests it also kills,
// restarts, pauses and resumes single processes (control.go) and, with
// Options.FaultProxies, puts a fault proxy (playground/faultproxy) on every
// store's and PD member's advertised ports so that Isolate partitions one
// process from the others in both directions (partition.go).
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
//   - With fault proxies, every store and PD member listens behind its
//     proxy and advertises the proxy's address, so all traffic to it (SQL
//     nodes, other stores' raft messages, PD peers) passes a proxy; the
//     proxies are closed after the processes stopped.
package playground

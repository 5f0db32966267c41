// Package metakey is the one place the meta keyspace is laid out: the
// keys and key prefixes under 'm' where the SQL layer keeps cluster-wide
// state (catalog, globals, GC lease, delete-range queue, schema versions,
// accounts, server ids, kill requests and temporary tables). Every prefix is defined once, here, with its owner, so two
// owners cannot collide. It imports nothing, so any package of the SQL
// node (sql/catalog, sql/privilege, session, kv/delrange, kv/gcworker)
// can use it.
//
// Every key starts with Prefix ('m'), which sorts before all table data
// ('t', see tablecodec); the second byte (0x00..0x0a) separates owners,
// and a short tag follows so a stray key reads well in a dump. What is
// stored under each key is its owner's business.
package metakey

// Prefix is the first byte of every meta key.
const Prefix byte = 'm'

// Keys and prefixes, by owner. A name ending in Prefix is followed by the
// owner's suffix (an ID, a name, a timestamp); the others are whole keys.
const (
	// SchemaVersion is the catalog's schema version (sql/catalog).
	SchemaVersion = "m\x00ver"
	// GlobalID is the catalog's global ID counter (database, table, ... IDs).
	GlobalID = "m\x00gid"
	// DatabasePrefix + database ID holds a database definition.
	DatabasePrefix = "m\x01db"
	// TablePrefix + database ID + table ID holds a table definition.
	TablePrefix = "m\x02tb"
	// AutoIDPrefix + table ID holds a table's auto-increment allocator.
	AutoIDPrefix = "m\x03ai"
	// GlobalVarPrefix + variable name holds a persisted global system
	// variable, normalized (session).
	GlobalVarPrefix = "m\x04gv"
	// GCLeaderLease holds the GC leader's lease (kv/gcworker).
	GCLeaderLease = "m\x05gc_leader"
	// DeleteRangePrefix + start ts + sequence holds a queued range
	// deletion left by a DROP or TRUNCATE (kv/delrange).
	DeleteRangePrefix = "m\x06dr"
	// NodeSchemaVersionPrefix + node name holds the schema version a SQL
	// node has loaded (sql/catalog).
	NodeSchemaVersionPrefix = "m\x07sv"
	// PrivilegeVersion is bumped by every account or grant change
	// (sql/privilege).
	PrivilegeVersion = "m\x08pv"
	// AccountPrefix + user + "\x00" + host holds an account or role
	// (sql/privilege).
	AccountPrefix = "m\x08pa"
	// ServerIDCounter hands every SQL node of a cluster its server id,
	// the high bits of its connection ids (session/globalkill.go).
	ServerIDCounter = "m\x09sid"
	// KillRequestPrefix + server id + connection id holds a KILL for a
	// connection of another SQL node (session/globalkill.go).
	KillRequestPrefix = "m\x09kill"
	// TempTablePrefix + node id + "\x00" + table ID records a session's
	// TEMPORARY table, so that a sweeper destroys its rows once its node
	// is gone (sql/catalog).
	TempTablePrefix = "m\x0atmp"
)

// All lists every key and prefix above, for checks that they stay apart.
var All = []string{
	SchemaVersion, GlobalID, DatabasePrefix, TablePrefix, AutoIDPrefix,
	GlobalVarPrefix, GCLeaderLease, DeleteRangePrefix, NodeSchemaVersionPrefix,
	PrivilegeVersion, AccountPrefix, ServerIDCounter, KillRequestPrefix,
	TempTablePrefix,
}

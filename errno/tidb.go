package errno

// TiDB's own codes that shoal returns (they are not in MySQL's tables, so
// their SQLSTATE is HY000, as in TiDB).
const (
	// ErrMemoryExceedForQuery: a statement over tidb_mem_quota_query that
	// cannot spill.
	ErrMemoryExceedForQuery uint16 = 8175
	// ErrMemoryExceedForInstance: the server's tracked memory passed
	// tidb_server_memory_limit and the statement cannot spill.
	ErrMemoryExceedForInstance uint16 = 8176
)

// MemoryExceedForQuery is TiDB's 8175.
func MemoryExceedForQuery() *SQLError {
	return New(ErrMemoryExceedForQuery, "Your query has been cancelled due to exceeding the allowed memory limit for a single SQL query. Please try narrowing your query scope or increase the tidb_mem_quota_query limit and try again.")
}

// MemoryExceedForInstance is TiDB's 8176.
func MemoryExceedForInstance() *SQLError {
	return New(ErrMemoryExceedForInstance, "Your query has been cancelled due to exceeding the allowed memory limit for the tidb-server instance and this query is currently using the most memory. Please try narrowing your query scope or increase the tidb_server_memory_limit and try again.")
}

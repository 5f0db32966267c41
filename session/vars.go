package session

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/types"
)

// sysVar describes a system variable: its default and whether it is a
// number (SELECT @@x returns an integer then).
type sysVar struct {
	def     string
	numeric bool
	// globalOnly variables cannot be set per session.
	globalOnly bool
	// boolean variables take only 0/1 (ON/OFF).
	boolean bool
	// readOnly variables cannot be set at all (they reflect the node's
	// configuration).
	readOnly bool
}

// sysVars are the system variables shoal knows. Variables that drivers and
// tools read (and the reference reports set) are here even where shoal has
// no mechanism behind them yet; setting those is accepted and remembered.
//
// The reference reports' globals, and what they do in shoal:
//   - tidb_enable_1pc: 0 makes every commit two-phase (Enable1PC off).
//   - tidb_prepared_plan_cache_size: how many prepared statements of a
//     session keep their plan (plancache.go); 0 plans every execution.
//   - tidb_enable_async_commit: 1 lets transactions that cannot commit in
//     one phase (several regions) and are small commit asynchronously:
//     the commit returns once every key is prewritten (kv/txnkv).
//   - tidb_guarantee_linearizability: 1 makes an async commit take a fresh
//     timestamp before prewriting as its least commit ts; 0 skips that
//     round trip (commit ts then only exceed the reads stores served).
//   - tidb_enable_clustered_index: ON (1, the default) makes a new table's
//     primary key its row key unless it says NONCLUSTERED; INT_ONLY does
//     so only for a single integer column; OFF (0) for none (the primary
//     key is then a unique index over a hidden row id). CLUSTERED and
//     NONCLUSTERED in the DDL override it.
//   - tidb_hashagg_final_concurrency / tidb_hashagg_partial_concurrency:
//     shoal's hash aggregation runs in the statement's goroutine, which is
//     what 1 asks for; other values are remembered, not applied.
//
// MVCC GC (the embedded server's GC loop, a cluster's kv/gcworker) reads
// tidb_gc_life_time (how long old versions stay readable; a Go duration of
// at least 1s, "10m0s" by default or the node's gc-life-time setting),
// tidb_gc_run_interval (a cluster runs a round when the safe point would
// move this far) and tidb_gc_enable (0 pauses the rounds) through
// Backend.GCSettings; their defaults are the node's configuration.
//
// SET GLOBAL values are persisted in kv and shared by all SQL nodes of a
// cluster (cluster.go).
var sysVars = map[string]sysVar{
	"autocommit":                       {def: "1", numeric: true},
	"sql_mode":                         {def: "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION"},
	"version":                          {def: "8.0.11-shoal"},
	"version_comment":                  {def: "shoal, a MySQL-compatible distributed database"},
	"version_compile_os":               {def: "Linux"},
	"version_compile_machine":          {def: "x86_64"},
	"innodb_lock_wait_timeout":         {def: "50", numeric: true},
	"lock_wait_timeout":                {def: "31536000", numeric: true},
	"max_allowed_packet":               {def: "67108864", numeric: true},
	"net_buffer_length":                {def: "16384", numeric: true},
	"transaction_isolation":            {def: "REPEATABLE-READ"},
	"tx_isolation":                     {def: "REPEATABLE-READ"},
	"transaction_read_only":            {def: "0", numeric: true},
	"tx_read_only":                     {def: "0", numeric: true},
	"character_set_client":             {def: "utf8mb4"},
	"character_set_connection":         {def: "utf8mb4"},
	"character_set_results":            {def: "utf8mb4"},
	"character_set_server":             {def: "utf8mb4"},
	"character_set_database":           {def: "utf8mb4"},
	"character_set_system":             {def: "utf8"},
	"collation_connection":             {def: "utf8mb4_bin"},
	"collation_server":                 {def: "utf8mb4_bin"},
	"collation_database":               {def: "utf8mb4_bin"},
	"time_zone":                        {def: "SYSTEM"},
	"system_time_zone":                 {def: "UTC", globalOnly: true, readOnly: true},
	"lower_case_table_names":           {def: "2", numeric: true, globalOnly: true},
	"auto_increment_increment":         {def: "1", numeric: true},
	"auto_increment_offset":            {def: "1", numeric: true},
	"wait_timeout":                     {def: "28800", numeric: true},
	"interactive_timeout":              {def: "28800", numeric: true},
	"net_write_timeout":                {def: "60", numeric: true},
	"net_read_timeout":                 {def: "30", numeric: true},
	"sql_select_limit":                 {def: "18446744073709551615", numeric: true},
	"sql_safe_updates":                 {def: "0", numeric: true},
	"sql_quote_show_create":            {def: "1", numeric: true, boolean: true},
	"sql_auto_is_null":                 {def: "0", numeric: true},
	"foreign_key_checks":               {def: "1", numeric: true},
	"unique_checks":                    {def: "1", numeric: true},
	"license":                          {def: "Apache-2.0"},
	"init_connect":                     {def: ""},
	"performance_schema":               {def: "0", numeric: true},
	"query_cache_type":                 {def: "OFF"},
	"query_cache_size":                 {def: "0", numeric: true},
	"have_ssl":                         {def: "DISABLED", globalOnly: true, readOnly: true},
	"have_openssl":                     {def: "DISABLED", globalOnly: true, readOnly: true},
	"ssl_ca":                           {def: "", globalOnly: true, readOnly: true},
	"ssl_cert":                         {def: "", globalOnly: true, readOnly: true},
	"ssl_key":                          {def: "", globalOnly: true, readOnly: true},
	"require_secure_transport":         {def: "0", numeric: true, globalOnly: true},
	"port":                             {def: "4000", numeric: true, globalOnly: true},
	"hostname":                         {def: "localhost", globalOnly: true},
	"datadir":                          {def: "", globalOnly: true},
	"default_storage_engine":           {def: "InnoDB"},
	"storage_engine":                   {def: "InnoDB"},
	"explicit_defaults_for_timestamp":  {def: "1", numeric: true},
	"div_precision_increment":          {def: "4", numeric: true},
	"group_concat_max_len":             {def: "1024", numeric: true},
	"max_execution_time":               {def: "0", numeric: true},
	"last_insert_id":                   {def: "0", numeric: true},
	"identity":                         {def: "0", numeric: true},
	"warning_count":                    {def: "0", numeric: true, readOnly: true},
	"error_count":                      {def: "0", numeric: true, readOnly: true},
	"max_error_count":                  {def: "1024", numeric: true},
	"tidb_txn_mode":                    {def: "pessimistic"},
	"tidb_enable_async_commit":         {def: "0", numeric: true},
	"tidb_enable_1pc":                  {def: "1", numeric: true},
	"tidb_mem_quota_query":             {def: "1073741824", numeric: true},
	"tidb_guarantee_linearizability":   {def: "1", numeric: true},
	"tidb_enable_clustered_index":      {def: "ON"},
	"tidb_prepared_plan_cache_size":    {def: "100", numeric: true},
	"tidb_hashagg_final_concurrency":   {def: "1", numeric: true},
	"tidb_hashagg_partial_concurrency": {def: "1", numeric: true},
	"tidb_gc_enable":                   {def: "1", numeric: true, globalOnly: true},
	"tidb_gc_life_time":                {def: "10m0s", globalOnly: true},
	"tidb_gc_run_interval":             {def: "10m0s", globalOnly: true},
}

// globalVars holds values SET GLOBAL changed (process-wide, in memory).
type globalVars struct {
	mu   sync.RWMutex
	vals map[string]string
	// gen counts changes, so that sessions can tell their cached copies
	// (hotVars) are current without taking mu.
	gen atomic.Uint64
}

func (g *globalVars) get(name string) (string, bool) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	v, ok := g.vals[name]
	return v, ok
}

func (g *globalVars) set(name, v string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.vals[name] = v
	g.gen.Add(1)
}

func errUnknownSysVar(name string) error { return errno.NewStd(mysql.ErrUnknownSystemVariable, name) }

// normalizeVar validates and canonicalizes a value being set.
func normalizeVar(name, val string) (string, error) {
	sv := sysVars[name]
	up := strings.ToUpper(val)
	if sv.numeric {
		switch up {
		case "ON", "TRUE":
			return "1", nil
		case "OFF", "FALSE":
			return "0", nil
		}
		if _, err := strconv.ParseFloat(val, 64); err != nil || (sv.boolean && val != "0" && val != "1") {
			return "", errno.NewStd(mysql.ErrWrongValueForVar, name, val)
		}
		return val, nil
	}
	switch name {
	case "tidb_txn_mode":
		low := strings.ToLower(val)
		if low != "pessimistic" && low != "optimistic" && low != "" {
			return "", errno.NewStd(mysql.ErrWrongValueForVar, name, val)
		}
		return low, nil
	case "sql_mode":
		norm, _, err := normalizeSQLMode(val)
		return norm, err
	case "time_zone":
		z, err := types.LoadTimeZone(val)
		if err != nil {
			return "", errno.NewStd(mysql.ErrUnknownTimeZone, val)
		}
		return z.Name(), nil
	case "tidb_enable_clustered_index":
		switch up {
		case "ON", "1":
			return "ON", nil
		case "OFF", "0":
			return "OFF", nil
		case "INT_ONLY":
			return "INT_ONLY", nil
		}
		return "", errno.NewStd(mysql.ErrWrongValueForVar, name, val)
	case "tidb_server_memory_limit":
		return normalizeServerMemoryLimit(name, val)
	case "tidb_gc_life_time", "tidb_gc_run_interval":
		d, err := time.ParseDuration(strings.ToLower(val))
		if err != nil || d < time.Second {
			return "", errno.NewStd(mysql.ErrWrongValueForVar, name, val)
		}
		return d.String(), nil
	case "transaction_isolation", "tx_isolation":
		up = strings.ReplaceAll(up, " ", "-")
		switch up {
		case "REPEATABLE-READ":
			return up, nil
		case "READ-COMMITTED", "READ-UNCOMMITTED":
			// Every transaction reads one snapshot: a READ COMMITTED one
			// would silently miss rows committed after it began.
			return "", notSupported("transaction isolation level " + up)
		case "SERIALIZABLE":
			return "", errno.New(8048, "The isolation level 'SERIALIZABLE' is not supported: shoal runs snapshot isolation")
		}
		return "", errno.NewStd(mysql.ErrWrongValueForVar, name, val)
	}
	return val, nil
}

func varDatum(name, val string) types.Datum {
	if sysVars[name].numeric {
		if i, err := strconv.ParseInt(val, 10, 64); err == nil {
			return types.NewInt(i)
		}
		if u, err := strconv.ParseUint(val, 10, 64); err == nil {
			return types.NewUint(u)
		}
	}
	return types.NewString(val)
}

// GCSettings are the MVCC GC variables as the GC workers use them.
type GCSettings struct {
	Disabled    bool
	LifeTime    time.Duration // 10m if 0
	RunInterval time.Duration // 10m if 0
}

func (g GCSettings) withDefaults() GCSettings {
	if g.LifeTime <= 0 {
		g.LifeTime = 10 * time.Minute
	}
	if g.RunInterval <= 0 {
		g.RunInterval = 10 * time.Minute
	}
	return g
}

// GCSettings returns the GC variables in force: SET GLOBAL values where
// set, else the node's configuration (Config.GC).
func (b *Backend) GCSettings() GCSettings {
	out := b.cfg.GC.withDefaults()
	if v, ok := b.globals.get("tidb_gc_enable"); ok {
		out.Disabled = v == "0"
	}
	if v, ok := b.globals.get("tidb_gc_life_time"); ok {
		if d, err := time.ParseDuration(v); err == nil {
			out.LifeTime = d
		}
	}
	if v, ok := b.globals.get("tidb_gc_run_interval"); ok {
		if d, err := time.ParseDuration(v); err == nil {
			out.RunInterval = d
		}
	}
	return out
}

// varDefault is a variable's value when nobody set it: the node's
// configuration for the GC variables, else the built-in default.
func (b *Backend) varDefault(name string) string {
	gc := b.cfg.GC.withDefaults()
	switch name {
	case "tidb_gc_enable":
		if gc.Disabled {
			return "0"
		}
		return "1"
	case "tidb_gc_life_time":
		return gc.LifeTime.String()
	case "tidb_gc_run_interval":
		return gc.RunInterval.String()
	case "have_ssl", "have_openssl", "ssl_ca", "ssl_cert", "ssl_key":
		return b.sslVarDefault(name)
	case "system_time_zone":
		return types.SystemZoneName()
	}
	return sysVars[name].def
}

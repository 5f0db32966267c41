package catalog

import (
	"sort"
	"strings"
)

// InfoSchema is an immutable snapshot of the whole schema at one version.
type InfoSchema struct {
	version int64
	dbs     map[string]*DBInfo // by lower-case name
	tables  map[string]map[string]*TableInfo
	byID    map[int64]*TableInfo
	// newestCompleteTS is the largest CompleteTS of any index (a snapshot
	// below it may not read through every public index).
	newestCompleteTS uint64
	// temp is a session's temporary tables overlaid on the snapshot
	// (WithTemp); nil in the shared snapshot.
	temp *TempTables
}

func newInfoSchema(version int64) *InfoSchema {
	return &InfoSchema{
		version: version,
		dbs:     map[string]*DBInfo{},
		tables:  map[string]map[string]*TableInfo{},
		byID:    map[int64]*TableInfo{},
	}
}

// Version is the schema version this snapshot was built at.
func (is *InfoSchema) Version() int64 { return is.version }

// NewestCompleteTS is the largest IndexInfo.CompleteTS in the schema: a
// read at a snapshot at or above it may use every public index.
func (is *InfoSchema) NewestCompleteTS() uint64 { return is.newestCompleteTS }

// DB returns the database named name or nil.
func (is *InfoSchema) DB(name string) *DBInfo { return is.dbs[strings.ToLower(name)] }

// Table returns the table db.name or nil.
func (is *InfoSchema) Table(db, name string) *TableInfo {
	if t := is.tempTable(db, name); t != nil {
		return t
	}
	return is.tables[strings.ToLower(db)][strings.ToLower(name)]
}

// DBByID returns the database with the given id or nil.
func (is *InfoSchema) DBByID(id int64) *DBInfo {
	for _, db := range is.dbs {
		if db.ID == id {
			return db
		}
	}
	return nil
}

// TableByID returns the table with the given id or nil.
func (is *InfoSchema) TableByID(id int64) *TableInfo {
	if t := is.temp.TableByID(id); t != nil {
		return t
	}
	return is.byID[id]
}

// BaseTable returns the base (shared, not temporary) table db.name or nil.
func (is *InfoSchema) BaseTable(db, name string) *TableInfo {
	return is.tables[strings.ToLower(db)][strings.ToLower(name)]
}

// DBs returns all databases sorted by name.
func (is *InfoSchema) DBs() []*DBInfo {
	out := make([]*DBInfo, 0, len(is.dbs))
	for _, db := range is.dbs {
		out = append(out, db)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Tables returns the base tables of db sorted by name (never temporary
// ones).
func (is *InfoSchema) Tables(db string) []*TableInfo {
	m := is.tables[strings.ToLower(db)]
	out := make([]*TableInfo, 0, len(m))
	for _, t := range m {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// clone copies the maps (not the infos) for a DDL to build the next version.
func (is *InfoSchema) clone(version int64) *InfoSchema {
	n := newInfoSchema(version)
	n.newestCompleteTS = is.newestCompleteTS
	for k, v := range is.dbs {
		n.dbs[k] = v
	}
	for k, m := range is.tables {
		nm := make(map[string]*TableInfo, len(m))
		for tk, tv := range m {
			nm[tk] = tv
		}
		n.tables[k] = nm
	}
	for k, v := range is.byID {
		n.byID[k] = v
	}
	return n
}

func (is *InfoSchema) putDB(db *DBInfo) {
	key := strings.ToLower(db.Name)
	is.dbs[key] = db
	if is.tables[key] == nil {
		is.tables[key] = map[string]*TableInfo{}
	}
}

func (is *InfoSchema) dropDB(db *DBInfo) {
	key := strings.ToLower(db.Name)
	for _, t := range is.tables[key] {
		delete(is.byID, t.ID)
	}
	delete(is.tables, key)
	delete(is.dbs, key)
}

func (is *InfoSchema) putTable(db *DBInfo, t *TableInfo) {
	key := strings.ToLower(db.Name)
	if old := is.byID[t.ID]; old != nil {
		delete(is.tables[key], strings.ToLower(old.Name))
	}
	is.tables[key][strings.ToLower(t.Name)] = t
	is.byID[t.ID] = t
	for _, idx := range t.Indices {
		is.newestCompleteTS = max(is.newestCompleteTS, idx.CompleteTS)
	}
}

func (is *InfoSchema) dropTable(db *DBInfo, t *TableInfo) {
	delete(is.tables[strings.ToLower(db.Name)], strings.ToLower(t.Name))
	delete(is.byID, t.ID)
}

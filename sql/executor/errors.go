package executor

import (
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/sql/catalog"
	"github.com/shoaldb/shoal/types"
)

func errUnsupportedPlan(p any) error {
	return errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support plan %T", p)
}

// ErrDupEntry builds MySQL's 1062 error for a key of t.
func ErrDupEntry(t *catalog.TableInfo, idx *catalog.IndexInfo, vals []types.Datum) error {
	name := "PRIMARY"
	if idx != nil && !idx.Primary {
		name = idx.Name
	}
	s := ""
	for i, v := range vals {
		if i > 0 {
			s += "-"
		}
		s += v.String()
	}
	return errno.NewStd(mysql.ErrDupEntry, s, t.Name+"."+name)
}

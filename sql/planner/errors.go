package planner

import (
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
)

func errUnknownColumn(name, where string) error {
	return errno.NewStd(mysql.ErrBadField, name, where)
}

func errNoSuchTable(db, table string) error {
	return errno.NewStd(mysql.ErrNoSuchTable, db, table)
}

func errNoDB() error { return errno.NewStd(mysql.ErrNoDB) }

func errBadDB(db string) error { return errno.NewStd(mysql.ErrBadDB, db) }

func errNotSupported(what string) error {
	return errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support '%s'", what)
}

func errAmbiguous(name, where string) error {
	return errno.NewStd(mysql.ErrNonUniq, name, where)
}

func errInvalidGroupFunc() error { return errno.NewStd(mysql.ErrInvalidGroupFuncUse) }

func errWrongValueCount(row int) error { return errno.NewStd(mysql.ErrWrongValueCountOnRow, row) }

package ddl

import (
	"time"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/sql/catalog"
	"github.com/shoaldb/shoal/sql/executor"
	"github.com/shoaldb/shoal/sql/expression"
	"github.com/shoaldb/shoal/sql/sqlmode"
	"github.com/shoaldb/shoal/types"
)

// checkColumnDefault refuses a literal DEFAULT the column cannot hold
// (1067, in every SQL mode, as MySQL): it would be refused by every INSERT
// that relies on it, or stored clipped.
func checkColumnDefault(c *catalog.ColumnInfo) error {
	if c.Default == nil || executor.IsCurrentTimestamp(*c.Default) {
		return nil
	}
	ctx := &executor.Context{Eval: &expression.Context{StmtTime: time.Now()}, StrictMode: true,
		// Zero dates are refused whatever the session's mode (MySQL
		// accepts them in DEFAULT when NO_ZERO_DATE is off).
		SQLMode: sqlmode.NoZeroDate | sqlmode.NoZeroInDate}
	if _, err := executor.CastToColumn(ctx, types.NewString(*c.Default), c, 0); err != nil {
		return errno.NewStd(mysql.ErrInvalidDefault, c.Name)
	}
	return nil
}

package planner

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/format"
)

func fmtType(v any) string { return fmt.Sprintf("%T", v) }

func newRestoreCtx(sb *strings.Builder) *format.RestoreCtx {
	return format.NewRestoreCtx(format.DefaultRestoreFlags, sb)
}

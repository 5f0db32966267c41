package executor

import (
	"github.com/shoaldb/shoal/types"
)

type dualExec struct{ done, empty bool }

func (e *dualExec) Open() error { e.done = e.empty; return nil }
func (e *dualExec) Next() (types.Row, error) {
	if e.done {
		return nil, nil
	}
	e.done = true
	return types.Row{}, nil
}
func (e *dualExec) Close() error { return nil }

package expression

import (
	"github.com/shoaldb/shoal/types"
)

// Information functions: current database and user, connection id,
// last insert id, server version.

func init() {
	registerBuiltins("info", map[string]builtin{
		"database":       {0, 0, evalSession(func(s SessionInfo) types.Datum { return nullIfEmpty(s.CurrentDB()) }), stringType, true},
		"schema":         {0, 0, evalSession(func(s SessionInfo) types.Datum { return nullIfEmpty(s.CurrentDB()) }), stringType, true},
		"user":           {0, 0, evalSession(func(s SessionInfo) types.Datum { return types.NewString(s.User()) }), stringType, true},
		"current_user":   {0, 0, evalSession(func(s SessionInfo) types.Datum { return types.NewString(s.CurrentUser()) }), stringType, true},
		"session_user":   {0, 0, evalSession(func(s SessionInfo) types.Datum { return types.NewString(s.User()) }), stringType, true},
		"system_user":    {0, 0, evalSession(func(s SessionInfo) types.Datum { return types.NewString(s.User()) }), stringType, true},
		"connection_id":  {0, 0, evalSession(func(s SessionInfo) types.Datum { return types.NewUint(s.ConnectionID()) }), intType, true},
		"last_insert_id": {0, 0, evalSession(func(s SessionInfo) types.Datum { return types.NewUint(s.LastInsertID()) }), intType, true},
		"version":        {0, 0, evalSession(func(s SessionInfo) types.Datum { v, _ := s.SysVar("version"); return v }), stringType, true},
	})
}

func evalSession(get func(s SessionInfo) types.Datum) evalFunc {
	return func(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
		if ctx.Session == nil {
			return types.Datum{}, nil
		}
		return get(ctx.Session), nil
	}
}

func nullIfEmpty(s string) types.Datum {
	if s == "" {
		return types.Datum{}
	}
	return types.NewString(s)
}

package sqlnode

import (
	"context"
	"net/http"
	"time"

	"github.com/shoaldb/shoal/kv/gcworker"
	"github.com/shoaldb/shoal/status"
)

// Status is the /status document of a SQL node.
type Status struct {
	status.Status
	// Health: PD answered a timestamp request just now.
	Health        bool            `json:"health"`
	SchemaVersion int64           `json:"schema_version"`
	GC            gcworker.Status `json:"gc"`
	Error         string          `json:"error,omitempty"`
}

// statusHandler serves /status for the node and everything else
// (/metrics, /debug/pprof) from the status package.
func (n *Node) statusHandler(info status.Info) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", status.Handler(info))
	mux.HandleFunc("/status", func(w http.ResponseWriter, r *http.Request) {
		st := Status{Status: info.Now()}
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		_, err := n.pd.GetTS(ctx)
		cancel()
		st.Health = err == nil
		if err != nil {
			st.Error = err.Error()
		}
		st.SchemaVersion = n.backend.SchemaVersion()
		st.GC = n.gc.Status()
		status.WriteJSON(w, st)
	})
	return mux
}

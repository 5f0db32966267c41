// Package status serves a node's status HTTP endpoints: /status (JSON with
// role, version and uptime), /metrics (Prometheus) and, when enabled,
// /debug/pprof.
package status

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/pprof"
	"runtime"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Info describes the node.
type Info struct {
	Role      string // "server" (embedded), later "pd", "store", "sql"
	Version   string
	GitHash   string
	Addr      string // the MySQL (or service) address
	StartTime time.Time
	// EnablePprof serves /debug/pprof. Off by default: profiles and the
	// process's command line are not for anyone who reaches the port.
	EnablePprof bool
}

// Status is the JSON document served at /status.
type Status struct {
	Role          string  `json:"role"`
	Version       string  `json:"version"`
	GitHash       string  `json:"git_hash,omitempty"`
	Addr          string  `json:"addr,omitempty"`
	StartTime     string  `json:"start_time"`
	UptimeSeconds float64 `json:"uptime_seconds"`
	GoVersion     string  `json:"go_version"`
	Goroutines    int     `json:"goroutines"`
}

// Now returns the process's status fields as of now; roles with more to
// say embed it in their own /status document.
func (info Info) Now() Status {
	return Status{
		Role:          info.Role,
		Version:       info.Version,
		GitHash:       info.GitHash,
		Addr:          info.Addr,
		StartTime:     info.StartTime.UTC().Format(time.RFC3339),
		UptimeSeconds: time.Since(info.StartTime).Seconds(),
		GoVersion:     runtime.Version(),
		Goroutines:    runtime.NumGoroutine(),
	}
}

// WriteJSON writes v as an indented JSON document.
func WriteJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// Handler returns the mux serving all status endpoints.
func Handler(info Info) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/status", func(w http.ResponseWriter, r *http.Request) {
		WriteJSON(w, info.Now())
	})
	mux.Handle("/metrics", promhttp.Handler())
	if info.EnablePprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	return mux
}

// Server is a running status HTTP server.
type Server struct {
	srv  *http.Server
	done chan error
}

// Serve starts serving the status endpoints on ln in the background.
func Serve(ln net.Listener, info Info) *Server {
	return ServeHandler(ln, Handler(info))
}

// ServeHandler serves h on ln in the background: a role whose /status
// says more than Info wraps Handler in its own mux.
func ServeHandler(ln net.Listener, h http.Handler) *Server {
	s := &Server{
		srv:  &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second},
		done: make(chan error, 1),
	}
	go func() {
		err := s.srv.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		s.done <- err
	}()
	return s
}

// Close stops the server, giving in-flight requests a moment to finish.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		return s.srv.Close()
	}
	return <-s.done
}

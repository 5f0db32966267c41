package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"time"

	"github.com/shoaldb/shoal/config"
	"github.com/shoaldb/shoal/embedded"
	"github.com/shoaldb/shoal/server"
	"github.com/shoaldb/shoal/session"
)

// node is the embedded server's wiring: storage -> SQL backend -> MySQL
// protocol server.
type node struct {
	srv          *server.Server
	closeStorage func() error
}

func openNode(cfg config.Config, log *slog.Logger) (*node, error) {
	gcLife, _ := time.ParseDuration(cfg.GCLifeTime) // validated
	store, err := embedded.Open(cfg.DataDir, embedded.Options{GCLifeTime: gcLife})
	if err != nil {
		return nil, fmt.Errorf("cannot open storage in %s: %w", cfg.DataDir, err)
	}
	tlsCfg, ssl, err := mysqlTLS(cfg.Security, cfg.DataDir, log)
	if err != nil {
		store.Close()
		return nil, err
	}
	backend, err := session.NewBackend(store, session.Config{Password: cfg.RootPassword,
		GC: session.GCSettings{LifeTime: gcLife}, BackupDirs: cfg.Security.BackupDirs,
		TempDir: filepath.Join(cfg.DataDir, "tmp"), SSL: ssl})
	if err != nil {
		store.Close()
		return nil, fmt.Errorf("cannot start SQL layer: %w", err)
	}
	store.SetGCPolicy(func() (time.Duration, bool) {
		gc := backend.GCSettings()
		return gc.LifeTime, !gc.Disabled
	})
	if cfg.InitFile != "" {
		if err := runInitFile(context.Background(), backend, cfg.InitFile); err != nil {
			backend.Close()
			store.Close()
			return nil, err
		}
	}
	srv := server.New(server.Config{
		Addr:          cfg.Addr(),
		ServerVersion: "8.0.11-shoal-" + version,
		Logger:        log,
		TLS:           tlsCfg,
	}, backend)
	return &node{srv: srv, closeStorage: store.Close}, nil
}

// Serve serves MySQL clients on ln until Close; it returns nil after Close.
func (n *node) Serve(ln net.Listener) error {
	if err := n.srv.Serve(ln); err != nil && !errors.Is(err, server.ErrServerClosed) {
		return err
	}
	return nil
}

// Close stops accepting, closes the sessions, then closes the storage.
func (n *node) Close() error {
	return errors.Join(n.srv.Close(), n.closeStorage())
}

package bench

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/shoaldb/shoal/tests/testserver"
)

// runningTarget is a started (or external) server the plan talks to.
type runningTarget struct {
	target   Target
	endpoint endpoint
	// version is `shoal version` of the binary (shoal targets only).
	version string
	stop    func() error
	logTail func() string
}

// startTarget starts an embedded server, a playground or a private MariaDB
// under workDir, or checks that an external one answers. The caller stops
// it (stop is a no-op for external targets).
func startTarget(ctx context.Context, p *Plan, t Target, workDir string) (*runningTarget, error) {
	rt := &runningTarget{target: t, stop: func() error { return nil }, logTail: func() string { return "" }}
	if t.IsShoal() {
		bin, err := shoalBinary(p, t)
		if err != nil {
			return nil, err
		}
		vctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		out, err := exec.CommandContext(vctx, bin, "version").Output()
		cancel()
		if err != nil {
			return nil, fmt.Errorf("%s version: %v", bin, err)
		}
		rt.version = strings.TrimSpace(string(out))
		t.Binary = bin
		rt.target = t
	}
	dir := filepath.Join(workDir, t.Label)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	switch t.Kind {
	case KindEmbedded:
		s, err := testserver.StartShoal(testserver.ShoalOptions{Bin: t.Binary, DataDir: filepath.Join(dir, "data"),
			LogPath: filepath.Join(dir, "shoal.log"), Args: append([]string{"--log-level", "warn", "--backup-dirs", backupDir(dir)}, t.Args...)})
		if err != nil {
			return nil, err
		}
		rt.endpoint = endpoint{Host: s.Host, Port: fmt.Sprint(s.Port), User: "root"}
		rt.stop = func() error { return s.Stop(2 * time.Minute) }
		rt.logTail = func() string { return s.LogTail(3000) }
	case KindPlayground:
		if len(t.Args) > 0 {
			return nil, errors.New("args are not supported for playground targets yet")
		}
		pg, err := testserver.StartPlayground(testserver.PlaygroundOptions{Bin: t.Binary, PD: t.PD, Store: t.Store, SQL: t.SQL,
			DataDir: filepath.Join(dir, "playground"), LogPath: filepath.Join(dir, "playground.log"), SplitSize: t.SplitSize,
			BackupDirs: []string{backupDir(dir)}})
		if err != nil {
			return nil, err
		}
		rt.endpoint = endpoint{Host: pg.Server.Host, Port: fmt.Sprint(pg.Server.Port), User: "root"}
		rt.stop = func() error { return pg.Stop(2 * time.Minute) }
		rt.logTail = func() string { return pg.LogTail(3000) }
	case KindMariaDB:
		s, err := testserver.StartMariaDB(filepath.Join(dir, "mariadb"))
		if err != nil {
			return nil, err
		}
		rt.endpoint = endpoint{Host: s.Host, Port: fmt.Sprint(s.Port), User: "root"}
		rt.stop = func() error { return s.Stop(2 * time.Minute) }
		rt.logTail = func() string { return s.LogTail(3000) }
	case KindExternal:
		host, port, err := net.SplitHostPort(t.Address)
		if err != nil {
			return nil, fmt.Errorf("target %s: address %q: %v", t.Label, t.Address, err)
		}
		rt.endpoint = endpoint{Host: host, Port: port, User: t.User, Password: t.Password}
	default:
		return nil, fmt.Errorf("target %s: unknown kind %q", t.Label, t.Kind)
	}
	return rt, nil
}

// shoalBinary resolves a shoal target's binary: relative to the plan's
// directory, or the running executable when the plan names none (so
// `shoal bench` benchmarks itself).
func shoalBinary(p *Plan, t Target) (string, error) {
	if t.Binary == "" {
		return os.Executable()
	}
	bin := t.Binary
	if !filepath.IsAbs(bin) {
		bin = filepath.Join(p.Dir, bin)
	}
	if fi, err := os.Stat(bin); err != nil || fi.IsDir() {
		return "", fmt.Errorf("target %s: binary %s is not a file", t.Label, bin)
	}
	return bin, nil
}

// open connects to the target without a default database. Statement
// deadlines come from the contexts passed to each call.
func (rt *runningTarget) open() (*sql.DB, error) {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd = rt.endpoint.User, rt.endpoint.Password
	cfg.Net, cfg.Addr = "tcp", net.JoinHostPort(rt.endpoint.Host, rt.endpoint.Port)
	cfg.Timeout = 10 * time.Second
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		return nil, err
	}
	// One connection: the statements run in order, and SET GLOBAL must
	// not race a prepare on another connection.
	db.SetMaxOpenConns(1)
	return db, nil
}

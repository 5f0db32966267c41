// Package testserver starts and stops database servers for tests and tools:
// the shoal binary built from this tree, or a private MariaDB (mariadbd from
// Debian's packages) used to prove the test harnesses themselves. Every
// server listens on a free 127.0.0.1 port with its own data directory, and
// every wait is bounded.
package testserver

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
)

// ModuleRoot returns the directory holding go.mod, searching up from the
// working directory.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above the working directory")
		}
		dir = parent
	}
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// BuildShoal builds ./cmd/shoal into dir and returns the binary's path.
func BuildShoal(dir string) (string, error) {
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "shoal")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/shoal")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build ./cmd/shoal: %v\n%s", err, out)
	}
	return bin, nil
}

// InCI reports whether the tests run in CI (CI=true), where a missing tool
// is a failure rather than a reason to skip.
func InCI() bool {
	v := strings.ToLower(os.Getenv("CI"))
	return v != "" && v != "0" && v != "false"
}

// Server is a running (or stopped) database server process.
type Server struct {
	Kind       string // "shoal" or "mariadb"
	Host       string
	Port       int
	StatusPort int
	DataDir    string
	LogPath    string
	// Password is root's password, used by DSN (and the readiness ping).
	Password string

	args []string // command line, for restarts
	env  []string // extra environment, for restarts
	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	log  *os.File
}

// Addr is host:port of the MySQL protocol.
func (s *Server) Addr() string { return net.JoinHostPort(s.Host, strconv.Itoa(s.Port)) }

// DSN returns a go-sql-driver DSN for root on db (may be empty).
func (s *Server) DSN(db string) string {
	cfg := mysql.NewConfig()
	cfg.User = "root"
	cfg.Passwd = s.Password
	cfg.Net = "tcp"
	cfg.Addr = s.Addr()
	cfg.DBName = db
	cfg.Timeout = 10 * time.Second
	cfg.ReadTimeout = 60 * time.Second
	cfg.WriteTimeout = 60 * time.Second
	return cfg.FormatDSN()
}

// Open opens a connection pool to db.
func (s *Server) Open(db string) (*sql.DB, error) { return sql.Open("mysql", s.DSN(db)) }

// ShoalOptions configures StartShoal.
type ShoalOptions struct {
	Bin     string   // path of the shoal binary
	DataDir string   // data directory (created if missing)
	LogPath string   // server output; default DataDir + ".log"
	Args    []string // extra flags
	// NoFileLimit > 0 runs the server under `prlimit --nofile=N:N`, so
	// tests can run it out of file descriptors.
	NoFileLimit int
	// RootPassword is given to the server in SHOAL_ROOT_PASSWORD (never
	// on the command line) and used by the Server's DSN.
	RootPassword string
}

// StartShoal starts `shoal server` on free ports and waits until it answers
// a ping (at most 60 s).
func StartShoal(o ShoalOptions) (*Server, error) {
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		port, err := FreePort()
		if err != nil {
			return nil, err
		}
		sport, err := FreePort()
		if err != nil {
			return nil, err
		}
		s := &Server{Kind: "shoal", Host: "127.0.0.1", Port: port, StatusPort: sport, DataDir: o.DataDir, LogPath: o.LogPath,
			Password: o.RootPassword}
		if o.RootPassword != "" {
			s.env = []string{"SHOAL_ROOT_PASSWORD=" + o.RootPassword}
		}
		if s.LogPath == "" {
			s.LogPath = strings.TrimRight(o.DataDir, "/") + ".log"
		}
		s.args = append([]string{o.Bin, "server",
			"--host", s.Host, "--port", strconv.Itoa(port), "--status-port", strconv.Itoa(sport),
			"--data-dir", o.DataDir}, o.Args...)
		if o.NoFileLimit > 0 {
			// prlimit execs the server, which keeps its pid.
			n := strconv.Itoa(o.NoFileLimit)
			s.args = append([]string{"prlimit", "--nofile=" + n + ":" + n, "--"}, s.args...)
		}
		if err := s.Start(60 * time.Second); err != nil {
			lastErr = err
			if strings.Contains(err.Error(), "address already in use") {
				continue
			}
			return nil, err
		}
		return s, nil
	}
	return nil, lastErr
}

// MariaDBAvailable reports whether mariadbd and mariadb-install-db exist.
func MariaDBAvailable() error {
	for _, b := range []string{"mariadbd", "mariadb-install-db"} {
		if _, err := lookPath(b); err != nil {
			return fmt.Errorf("%s not found (apt-get install mariadb-server)", b)
		}
	}
	return nil
}

func lookPath(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, d := range []string{"/usr/sbin", "/usr/bin", "/usr/local/sbin"} {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

// StartMariaDB initialises a data directory under baseDir and starts a
// private mariadbd on a free loopback port (root without password, grant
// tables skipped), waiting until it answers a ping.
func StartMariaDB(baseDir string) (*Server, error) {
	if err := MariaDBAvailable(); err != nil {
		return nil, err
	}
	installDB, _ := lookPath("mariadb-install-db")
	mariadbd, _ := lookPath("mariadbd")
	dataDir := filepath.Join(baseDir, "data")
	if err := os.MkdirAll(baseDir, 0o755); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, installDB, "--no-defaults", "--datadir="+dataDir,
		"--auth-root-authentication-method=normal", "--skip-test-db", "--user=root").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("mariadb-install-db: %v\n%s", err, out)
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		port, err := FreePort()
		if err != nil {
			return nil, err
		}
		s := &Server{Kind: "mariadb", Host: "127.0.0.1", Port: port, DataDir: dataDir, LogPath: filepath.Join(baseDir, "mariadbd.log")}
		s.args = []string{mariadbd, "--no-defaults", "--datadir=" + dataDir, "--port=" + strconv.Itoa(port),
			"--bind-address=127.0.0.1", "--socket=" + filepath.Join(baseDir, "mysqld.sock"),
			"--pid-file=" + filepath.Join(baseDir, "mysqld.pid"), "--user=root", "--skip-grant-tables",
			"--skip-name-resolve", "--max-connections=1000", "--innodb-buffer-pool-size=256M",
			"--max-allowed-packet=64M", "--log-error=" + s.LogPath}
		if err := s.Start(90 * time.Second); err != nil {
			lastErr = err
			if strings.Contains(s.LogTail(4096), "already in use") {
				continue
			}
			return nil, err
		}
		return s, nil
	}
	return nil, lastErr
}

// Start (re)starts the process with its original command line and waits
// until it answers a ping or readyTimeout passes.
func (s *Server) Start(readyTimeout time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return errors.New("server already running")
	}
	logf, err := os.OpenFile(s.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(s.args[0], s.args[1:]...)
	if len(s.env) > 0 {
		cmd.Env = append(os.Environ(), s.env...)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return err
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	s.cmd, s.done, s.log = cmd, done, logf
	if err := s.waitReady(readyTimeout); err != nil {
		s.killLocked()
		return fmt.Errorf("%s on %s did not become ready: %w\n--- log tail ---\n%s", s.Kind, s.Addr(), err, s.LogTail(4096))
	}
	return nil
}

func (s *Server) waitReady(timeout time.Duration) error {
	db, err := s.Open("")
	if err != nil {
		return err
	}
	defer db.Close()
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			return fmt.Errorf("process exited (%v)", s.cmd.ProcessState)
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		last = db.PingContext(ctx)
		cancel()
		if last == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("timeout after %s: %v", timeout, last)
}

// PID is the server process's id, or 0 when it is not running.
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// Running reports whether the process is alive.
func (s *Server) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return false
	}
	select {
	case <-s.done:
		return false
	default:
		return true
	}
}

// Kill sends SIGKILL and waits for the process to be gone.
func (s *Server) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.killLocked()
}

func (s *Server) killLocked() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
	}
	s.log.Close()
	s.cmd = nil
}

// Stop sends SIGTERM and waits up to timeout for a clean exit, then
// SIGKILLs. It returns the exit error of a clean stop (nil for exit 0).
func (s *Server) Stop(timeout time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return nil
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
		var err error
		if st := s.cmd.ProcessState; st != nil && !st.Success() {
			err = fmt.Errorf("exit status: %v", st)
		}
		s.log.Close()
		s.cmd = nil
		return err
	case <-time.After(timeout):
		s.killLocked()
		return fmt.Errorf("%s did not stop within %s after SIGTERM; killed", s.Kind, timeout)
	}
}

// LogTail returns the last n bytes of the server's output.
func (s *Server) LogTail(n int) string {
	b, err := os.ReadFile(s.LogPath)
	if err != nil {
		return ""
	}
	if len(b) > n {
		b = b[len(b)-n:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	return string(b)
}

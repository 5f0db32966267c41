package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
)

// runBackup is `shoal backup`: it connects to a SQL node over the MySQL
// protocol and runs BACKUP DATABASE ... TO ..., printing the result row.
func runBackup(args []string, stdout, stderr io.Writer) int {
	return runBRCommand("backup", args, stdout, stderr)
}

// runRestore is `shoal restore`: RESTORE DATABASE ... FROM ... over the
// MySQL protocol.
func runRestore(args []string, stdout, stderr io.Writer) int {
	return runBRCommand("restore", args, stdout, stderr)
}

// brCommand is what `shoal backup` and `shoal restore` were asked to do.
type brCommand struct {
	kind        string // "backup" or "restore"
	host        string
	port        int
	user        string
	password    string
	dbs         string // comma-separated, or *
	storage     string // --to (backup) or --from (restore)
	concurrency int
	checksum    bool
	timeout     time.Duration
}

func brFlags(kind string, args []string, stderr io.Writer) (*brCommand, error) {
	c := &brCommand{kind: kind}
	fs := flag.NewFlagSet("shoal "+kind, flag.ContinueOnError)
	fs.StringVar(&c.host, "host", "127.0.0.1", "host of the SQL node (MySQL protocol)")
	fs.IntVar(&c.port, "port", 4000, "MySQL protocol port of the SQL node")
	fs.StringVar(&c.user, "user", "root", "user")
	fs.StringVar(&c.password, "password", "", "password")
	verb, dir, what := "back up", "to", "destination of the backup"
	if kind == "restore" {
		verb, dir, what = "restore", "from", "the backup to restore"
		fs.BoolVar(&c.checksum, "checksum", true, "check the restored tables against the backup's checksums")
	}
	fs.StringVar(&c.dbs, "db", "", "database(s) to "+verb+": a name, a comma-separated list, or * for all")
	fs.StringVar(&c.storage, dir, "", what+": local:///absolute/path (a directory on the SQL node's machine)")
	fs.IntVar(&c.concurrency, "concurrency", 0, "ranges or files handled at once (0: the server's default)")
	fs.DurationVar(&c.timeout, "timeout", 0, "give up after this long (0: no limit)")
	fs.SetOutput(stderr)
	usage := fmt.Sprintf("usage: shoal %s --db DB --%s local:///path [flags]\n\nRuns %s DATABASE on a shoal SQL node over the MySQL protocol and prints its result.", kind, dir, strings.ToUpper(kind))
	fs.Usage = func() {
		fmt.Fprintf(stderr, "%s\n\nflags:\n", usage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	if c.dbs == "" {
		return nil, errors.New("--db is required (a name, a comma-separated list, or *)")
	}
	if c.storage == "" {
		return nil, fmt.Errorf("--%s is required (local:///absolute/path)", dir)
	}
	if c.port <= 0 || c.port > 65535 {
		return nil, fmt.Errorf("--port %d is not a port", c.port)
	}
	return c, nil
}

// statement builds the BACKUP or RESTORE statement, quoting names and the
// storage URI so no input can change the statement's shape.
func (c *brCommand) statement() string {
	var b strings.Builder
	b.WriteString(strings.ToUpper(c.kind))
	b.WriteString(" DATABASE ")
	if strings.TrimSpace(c.dbs) == "*" {
		b.WriteString("*")
	} else {
		for i, name := range strings.Split(c.dbs, ",") {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("`" + strings.ReplaceAll(strings.TrimSpace(name), "`", "``") + "`")
		}
	}
	if c.kind == "backup" {
		b.WriteString(" TO ")
	} else {
		b.WriteString(" FROM ")
	}
	b.WriteString("'" + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(c.storage) + "'")
	if c.concurrency > 0 {
		fmt.Fprintf(&b, " CONCURRENCY = %d", c.concurrency)
	}
	if c.kind == "restore" && !c.checksum {
		b.WriteString(" CHECKSUM = FALSE")
	}
	return b.String()
}

func runBRCommand(kind string, args []string, stdout, stderr io.Writer) int {
	c, err := brFlags(kind, args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "shoal %s: %v\n", kind, err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	start := time.Now()
	cols, row, err := c.run(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "shoal %s: %v\n", kind, err)
		return 1
	}
	for i, col := range cols {
		fmt.Fprintf(stdout, "%-15s %s\n", col+":", row[i])
	}
	fmt.Fprintf(stdout, "%-15s %s\n", "Took:", time.Since(start).Round(time.Millisecond))
	return 0
}

// run sends the statement on one connection and returns its result row.
func (c *brCommand) run(ctx context.Context) ([]string, []string, error) {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd = c.user, c.password
	cfg.Net, cfg.Addr = "tcp", net.JoinHostPort(c.host, strconv.Itoa(c.port))
	cfg.Timeout = 10 * time.Second // connecting; the statement itself may run long
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, nil, err
	}
	db := sql.OpenDB(connector)
	defer db.Close()
	rows, err := db.QueryContext(ctx, c.statement())
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, nil, err
	}
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, nil, err
		}
		return nil, nil, errors.New("the server returned no result row")
	}
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return nil, nil, err
	}
	out := make([]string, len(cols))
	for i, v := range vals {
		out[i] = v.String
	}
	return cols, out, rows.Err()
}

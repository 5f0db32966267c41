package bench

import (
	"strconv"
	"strings"
)

// endpoint is where a tool connects. Port is a string so that the report
// can print the same command lines with "$host" and "$port" in them.
type endpoint struct {
	Host, Port, User, Password string
}

// placeholderEndpoint is the endpoint the report's command lines show.
var placeholderEndpoint = endpoint{Host: "$host", Port: "$port", User: "root"}

func (p *Plan) sysbenchConnArgs(e endpoint) []string {
	return []string{"--db-driver=mysql", "--mysql-host=" + e.Host, "--mysql-port=" + e.Port,
		"--mysql-user=" + e.User, "--mysql-password=" + e.Password, "--mysql-db=" + p.Database,
		"--tables=" + strconv.Itoa(p.Sysbench.Tables), "--table-size=" + strconv.Itoa(p.Sysbench.TableSize)}
}

// sysbenchPrepareArgs: `sysbench oltp_common ... prepare`, one table per
// thread at a time.
func (p *Plan) sysbenchPrepareArgs(e endpoint) []string {
	args := append([]string{"oltp_common"}, p.sysbenchConnArgs(e)...)
	args = append(args, "--threads="+strconv.Itoa(min(p.Sysbench.PrepareThreads, p.Sysbench.Tables)))
	args = append(args, p.Sysbench.Args...)
	return append(args, "prepare")
}

// sysbenchRunArgs: `sysbench <workload> ... run`. workload and threads may
// be placeholders ("$workload", "$threads") for the report.
func (p *Plan) sysbenchRunArgs(e endpoint, workload, threads string) []string {
	args := append([]string{workload}, p.sysbenchConnArgs(e)...)
	args = append(args, "--threads="+threads,
		"--time="+strconv.Itoa(int(p.Duration.Seconds())),
		"--report-interval="+strconv.Itoa(int(p.ReportInterval.Seconds())),
		"--rand-type="+p.Sysbench.RandType)
	if p.Sysbench.IgnoreErrors != "" {
		args = append(args, "--mysql-ignore-errors="+p.Sysbench.IgnoreErrors)
	}
	args = append(args, p.Sysbench.Args...)
	return append(args, "run")
}

func (p *Plan) goTPCConnArgs(e endpoint) []string {
	args := []string{"-H", e.Host, "-P", e.Port, "-U", e.User}
	if e.Password != "" {
		args = append(args, "-p", e.Password)
	}
	return append(args, "-D", p.Database, "--warehouses", strconv.Itoa(p.TPCC.Warehouses))
}

func (p *Plan) goTPCPrepareArgs(e endpoint) []string {
	args := append([]string{"tpcc", "prepare"}, p.goTPCConnArgs(e)...)
	args = append(args, "--threads", strconv.Itoa(p.TPCC.PrepareThreads))
	if !p.TPCC.CheckAfterPrepare {
		args = append(args, "--no-check")
	}
	return append(args, p.TPCC.Args...)
}

func (p *Plan) goTPCRunArgs(e endpoint, threads string) []string {
	args := append([]string{"tpcc", "run"}, p.goTPCConnArgs(e)...)
	args = append(args, "--threads", threads, "--time", p.Duration.Duration.String(),
		"--interval", p.ReportInterval.Duration.String())
	return append(args, p.TPCC.Args...)
}

// redact hides a password in a recorded command line.
func redact(args []string, password string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if password != "" && strings.Contains(a, password) {
			a = strings.ReplaceAll(a, password, "***")
		}
		out[i] = a
	}
	return out
}

// shellLine prints a command as the reports do: the tool and its leading
// words on the first line, then one flag (with its value) per line.
func shellLine(tool string, args []string) string {
	var b strings.Builder
	b.WriteString(tool)
	i := 0
	for ; i < len(args) && !strings.HasPrefix(args[i], "-"); i++ {
		b.WriteString(" " + args[i])
	}
	for ; i < len(args); i++ {
		b.WriteString(" \\\n    " + args[i])
		if strings.HasPrefix(args[i], "-") && !strings.Contains(args[i], "=") && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			i++
			b.WriteString(" " + args[i])
		}
	}
	return b.String()
}

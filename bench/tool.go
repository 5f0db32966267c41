package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"
)

// goTPCVersion is the go-tpc that scripts/go-tpc-path.sh builds.
const goTPCVersion = "v1.0.12"

// findSysbench returns the sysbench to run: the plan's, or PATH's.
func findSysbench(p *Plan) (string, error) {
	if p.Sysbench.Binary != "" {
		return p.Sysbench.Binary, nil
	}
	bin, err := exec.LookPath("sysbench")
	if err != nil {
		return "", errors.New("sysbench not found on PATH (apt-get install sysbench)")
	}
	return bin, nil
}

// FindGoTPC returns the go-tpc to run: the plan's, SHOAL_GO_TPC, the cache
// scripts/go-tpc-path.sh fills, then PATH.
func FindGoTPC(planBinary string) (string, error) {
	if planBinary != "" {
		return planBinary, nil
	}
	if p := os.Getenv("SHOAL_GO_TPC"); p != "" {
		return p, nil
	}
	if cache, err := os.UserCacheDir(); err == nil {
		p := filepath.Join(cache, "shoal-tools", "go-tpc-"+goTPCVersion, "go-tpc")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	if p, err := exec.LookPath("go-tpc"); err == nil {
		return p, nil
	}
	return "", errors.New("go-tpc not found: run scripts/go-tpc-path.sh (it builds " + goTPCVersion + " into ~/.cache/shoal-tools), set SHOAL_GO_TPC, or set tpcc.binary in the plan")
}

var reGoTPCRelease = regexp.MustCompile(`Release version: (\S+)`)

// toolVersion asks the tool for its version, for the report.
func toolVersion(ctx context.Context, tool, bin string) string {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if tool == ToolSysbench {
		out, err := exec.CommandContext(ctx, bin, "--version").Output()
		if err != nil {
			return "sysbench (version unknown)"
		}
		return "sysbench " + sysbenchVersion(string(out))
	}
	out, _ := exec.CommandContext(ctx, bin, "version").CombinedOutput()
	release := "unknown"
	if m := reGoTPCRelease.FindSubmatch(out); m != nil {
		release = string(m[1])
	}
	// A go-tpc built from the module (scripts/go-tpc-path.sh) says "dev";
	// its cache directory names the version.
	if release == "dev" || release == "unknown" {
		if d := filepath.Base(filepath.Dir(bin)); strings.HasPrefix(d, "go-tpc-v") {
			return "go-tpc " + strings.TrimPrefix(d, "go-tpc-")
		}
	}
	return "go-tpc " + release
}

// runTool runs a benchmark tool with stdout and stderr into rawPath,
// calling onLine for every output line as it arrives (live progress). The
// tool gets its own process group, which is killed when limit passes or
// ctx ends, so no sysbench or go-tpc outlives the plan.
func runTool(ctx context.Context, bin string, args []string, rawPath string, limit time.Duration, onLine func(string)) (string, error) {
	if err := os.MkdirAll(filepath.Dir(rawPath), 0o755); err != nil {
		return "", err
	}
	raw, err := os.Create(rawPath)
	if err != nil {
		return "", err
	}
	defer raw.Close()
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		return "", err
	}
	var all strings.Builder
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			line := sc.Text()
			all.WriteString(line + "\n")
			fmt.Fprintln(raw, line)
			if onLine != nil {
				onLine(line)
			}
		}
		_, _ = io.Copy(io.Discard, pr) // a line over 1 MiB: drain, keep going
	}()
	waitErr := cmd.Wait()
	pw.Close()
	<-scanned
	out := all.String()
	if parent.Err() != nil {
		return out, fmt.Errorf("%s %s: %w", filepath.Base(bin), args[0], parent.Err())
	}
	if ctx.Err() != nil {
		return out, fmt.Errorf("%s %s: no result within %v", filepath.Base(bin), args[0], limit)
	}
	if waitErr != nil {
		return out, fmt.Errorf("%s %s: %v\n%s", filepath.Base(bin), args[0], waitErr, lastLines(out, 15))
	}
	return out, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

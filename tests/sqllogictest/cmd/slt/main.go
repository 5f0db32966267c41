// Command slt runs sqllogictest files against a MySQL-protocol server:
//
//	go run ./tests/sqllogictest/cmd/slt -addr 127.0.0.1:4000 ../shared/sqllogictest/select1.test
//
// Directories are searched for *.test files. It prints one summary line per
// file, the first failures of each, and a total; the exit status is 1 when
// any record failed.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/shoaldb/shoal/tests/sqllogictest"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:4000", "server host:port")
	user := flag.String("user", "root", "user")
	pass := flag.String("password", "", "password")
	engine := flag.String("engine", "mysql", "engine name for skipif/onlyif")
	maxFail := flag.Int("failures", 5, "failures to show per file")
	verbose := flag.Bool("v", false, "print every failure as it happens")
	fileTimeout := flag.Duration("file-timeout", 30*time.Minute, "time limit per file")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: slt [flags] file-or-dir...\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	files, err := expand(flag.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = *user, *pass, "tcp", *addr
	cfg.Timeout = 10 * time.Second
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	defer db.Close()
	r := &sqllogictest.Runner{DB: db, Engine: *engine, MaxFailures: *maxFail}
	if *verbose {
		r.Verbose = func(s string) { fmt.Println(s) }
	}
	var run, passed, failed, skipped int
	exit := 0
	for _, f := range files {
		ctx, cancel := context.WithTimeout(context.Background(), *fileTimeout)
		res, err := r.RunFile(ctx, f)
		cancel()
		if err != nil {
			fmt.Printf("%s: ERROR %v\n", f, err)
			exit = 1
			continue
		}
		fmt.Println(res.Summary())
		if !*verbose {
			for _, fl := range res.Failures {
				fmt.Println("  " + strings.ReplaceAll(fl.String(), "\n", "\n  "))
			}
		}
		run += res.Run
		passed += res.Passed
		failed += res.Failed
		skipped += res.Skipped
		if res.Failed > 0 || res.Aborted != nil {
			exit = 1
		}
	}
	rate := 100.0
	if run > 0 {
		rate = 100 * float64(passed) / float64(run)
	}
	fmt.Printf("total: %d files, run %d, passed %d, failed %d, skipped %d (%.1f%% pass)\n", len(files), run, passed, failed, skipped, rate)
	os.Exit(exit)
}

func expand(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		fi, err := os.Stat(a)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			out = append(out, a)
			continue
		}
		var found []string
		err = filepath.WalkDir(a, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".test") {
				found = append(found, p)
			}
			return err
		})
		if err != nil {
			return nil, err
		}
		sort.Strings(found)
		out = append(out, found...)
	}
	return out, nil
}

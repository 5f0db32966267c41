package embedded

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/store/kvrpc"
)

var ctx = context.Background()

func put(t *testing.T, s kv.Storage, k, v string) {
	t.Helper()
	txn, err := s.Begin(ctx, kv.TxnOptions{Mode: kv.Optimistic, Enable1PC: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := txn.Set(kv.Key(k), []byte(v)); err != nil {
		t.Fatal(err)
	}
	if err := txn.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}

func get(t *testing.T, s kv.Storage, k string) string {
	t.Helper()
	ts, err := s.CurrentTS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.GetSnapshot(ts).Get(ctx, kv.Key(k))
	if errors.Is(err, kv.ErrNotExist) {
		return "<nil>"
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(v)
}

func TestReopen(t *testing.T) {
	dir := t.TempDir()
	e, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	put(t, e, "a", "1")
	last, _ := e.CurrentTS(ctx)
	// A second open of a live directory fails clearly.
	if _, err := Open(dir, Options{}); err == nil || !strings.Contains(err.Error(), "another shoal") {
		t.Fatalf("second open: %v", err)
	}
	// Leave a dangling prewrite, as a crash between prewrite and commit would.
	start, _ := e.CurrentTS(ctx)
	if _, err := e.Service.KvPrewrite(ctx, kvrpc.PrewriteRequest{
		Mutations:   []kvrpc.Mutation{{Op: kvrpc.OpPut, Key: []byte("a"), Value: []byte("dangling")}},
		PrimaryLock: []byte("a"), StartTS: start, LockTTL: 60000,
	}); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Begin(ctx, kv.TxnOptions{}); !errors.Is(err, kv.ErrClosed) {
		t.Fatalf("begin after close: %v", err)
	}
	e, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if ts, _ := e.CurrentTS(ctx); ts <= last {
		t.Fatal("timestamps went back across a restart")
	}
	// The dangling lock was rolled back at open; the read does not wait.
	begin := time.Now()
	if got := get(t, e, "a"); got != "1" {
		t.Fatalf("a = %s", got)
	}
	if time.Since(begin) > time.Second {
		t.Fatal("read waited for a dead lock")
	}
}

func TestUnusableDir(t *testing.T) {
	f := filepath.Join(t.TempDir(), "file")
	os.WriteFile(f, nil, 0o644)
	if _, err := Open(f, Options{}); err == nil {
		t.Fatal("opened a file as a directory")
	}
}

// TestKill9 commits in a child process, kills it with SIGKILL, and checks
// that every acknowledged commit survived.
func TestKill9(t *testing.T) {
	if dir := os.Getenv("SHOAL_KILL9_DIR"); dir != "" {
		kill9Child(dir)
		return
	}
	if testing.Short() {
		t.Skip("short")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKill9$")
	cmd.Env = append(os.Environ(), "SHOAL_KILL9_DIR="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	acked := 0
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "acked ") {
			fmt.Sscanf(sc.Text(), "acked %d", &acked)
			if acked >= 50 {
				break
			}
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	if acked < 50 {
		t.Fatalf("child acknowledged only %d commits", acked)
	}
	e, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for i := 1; i <= acked; i++ {
		if got := get(t, e, fmt.Sprintf("k%04d", i)); got != fmt.Sprint(i) {
			t.Fatalf("acknowledged commit %d lost: %s", i, got)
		}
	}
}

func kill9Child(dir string) {
	e, err := Open(dir, Options{})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(1)
	}
	for i := 1; ; i++ {
		txn, _ := e.Begin(ctx, kv.TxnOptions{Mode: kv.Optimistic, Enable1PC: i%2 == 0})
		txn.Set(kv.Key(fmt.Sprintf("k%04d", i)), []byte(fmt.Sprint(i)))
		if err := txn.Commit(ctx); err != nil {
			fmt.Println("commit:", err)
			os.Exit(1)
		}
		fmt.Printf("acked %d\n", i)
	}
}

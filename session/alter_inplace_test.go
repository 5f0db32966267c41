package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
)

// queryRows runs sql and returns its rows, one line each, values tab
// separated.
func queryRows(t *testing.T, s *Session, sql string) string {
	t.Helper()
	out, err := tryQueryText(s, sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return out
}

func tryQueryText(s *Session, sql string) (string, error) {
	rs, err := s.Execute(context.Background(), sql)
	if err != nil {
		return "", err
	}
	rows, err := drainResult(rs[0])
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, r := range rows {
		for i, d := range r {
			if i > 0 {
				b.WriteByte('\t')
			}
			if d.IsNull() {
				b.WriteString("NULL")
			} else {
				b.WriteString(d.String())
			}
		}
		b.WriteByte('\n')
	}
	return b.String(), nil
}

// eventually retries check until it passes or 5 s passed (the other node
// reloads the schema in the background).
func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func errCode(err error) uint16 {
	var se *errno.SQLError
	if errors.As(err, &se) {
		return se.Code
	}
	return 0
}

// In-place ALTERs run on node A show on node B: SHOW CREATE TABLE,
// information_schema.COLUMNS, SELECT * order, renamed tables and
// columns its statements use, defaults its inserts get, the
// AUTO_INCREMENT floor its allocator honours.
func TestInPlaceAlterAcrossNodes(t *testing.T) {
	st, _ := openProbe(t)
	cfg := Config{SchemaSyncInterval: 50 * time.Millisecond}
	na, nb := newNode(t, st, cfg), newNode(t, st, cfg)
	sa, sb := newSess(t, na), newSess(t, nb)
	mustExec(t, sa, "CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, a INT, b VARCHAR(10), KEY ia (a))")
	mustExec(t, sb, "INSERT INTO t (a, b) VALUES (1, 'x'), (2, 'y')")

	sameOnB := func(sql string) {
		t.Helper()
		want := queryRows(t, sa, sql)
		eventually(t, sql, func() error {
			got, err := tryQueryText(sb, sql)
			if err != nil {
				return err
			}
			if got != want {
				return fmt.Errorf("node B:\n%s\nnode A:\n%s", got, want)
			}
			return nil
		})
	}
	steps := []string{
		"ALTER TABLE t RENAME COLUMN a TO a2",
		"ALTER TABLE t CHANGE b bb VARCHAR(20) NOT NULL DEFAULT 'q' FIRST",
		"ALTER TABLE t ALTER COLUMN a2 SET DEFAULT 7, RENAME INDEX ia TO ia2",
		"ALTER TABLE t MODIFY a2 BIGINT NOT NULL DEFAULT 7 AFTER id",
		"ALTER TABLE t AUTO_INCREMENT = 50000",
		"RENAME TABLE t TO t2",
	}
	for _, step := range steps {
		mustExec(t, sa, step)
		tbl := "t"
		if strings.HasPrefix(step, "RENAME") {
			tbl = "t2"
		}
		sameOnB("SHOW CREATE TABLE " + tbl)
		sameOnB("SELECT column_name, ordinal_position, is_nullable, column_default, column_type FROM information_schema.columns WHERE table_name = '" + tbl + "' ORDER BY ordinal_position")
		sameOnB("SELECT * FROM " + tbl + " ORDER BY id")
	}
	// Node B writes through the new names and gets the new defaults and
	// the AUTO_INCREMENT floor.
	mustExec(t, sb, "INSERT INTO t2 (bb) VALUES ('z')")
	if got, want := queryRows(t, sb, "SELECT bb, id, a2 FROM t2 WHERE bb = 'z'"), "z\t50000\t7\n"; got != want {
		t.Fatalf("node B's insert: %q, want %q", got, want)
	}
	if _, err := sb.Execute(context.Background(), "INSERT INTO t2 (bb, a2) VALUES ('n', NULL)"); errCode(err) != mysql.ErrBadNull {
		t.Fatalf("NULL into the NOT NULL column on node B: %v, want 1048", err)
	}
	mustExec(t, sb, "ADMIN CHECK TABLE t2")
	if _, err := sb.Execute(context.Background(), "SELECT * FROM t"); errCode(err) != mysql.ErrNoSuchTable {
		t.Fatalf("old name on node B: %v, want 1146", err)
	}
	// Tables made from it on node A: node B sees their definition and
	// rows.
	mustExec(t, sa, "CREATE TABLE t3 LIKE t2")
	mustExec(t, sa, "CREATE TABLE t4 AS SELECT * FROM t2")
	sameOnB("SHOW CREATE TABLE t3")
	sameOnB("SHOW CREATE TABLE t4")
	sameOnB("SELECT * FROM t4 ORDER BY id")
	mustExec(t, sb, "INSERT INTO t3 (bb) VALUES ('w')")
	if got := queryRows(t, sa, "SELECT bb, id, a2 FROM t3"); got != "w\t1\t7\n" {
		t.Fatalf("node B's insert into the LIKE copy: %q", got)
	}
	// ADD / DROP PRIMARY KEY on node A: node B enforces, then drops it.
	mustExec(t, sa, "CREATE TABLE np (a INT, b INT)")
	mustExec(t, sb, "INSERT INTO np VALUES (1, 1), (2, 2)")
	mustExec(t, sa, "ALTER TABLE np ADD PRIMARY KEY (a)")
	sameOnB("SHOW CREATE TABLE np")
	if _, err := sb.Execute(context.Background(), "INSERT INTO np VALUES (1, 3)"); errCode(err) != mysql.ErrDupEntry {
		t.Fatalf("duplicate primary key on node B: %v, want 1062", err)
	}
	if _, err := sb.Execute(context.Background(), "INSERT INTO np VALUES (NULL, 3)"); errCode(err) != mysql.ErrBadNull {
		t.Fatalf("NULL primary key on node B: %v, want 1048", err)
	}
	mustExec(t, sa, "ALTER TABLE np DROP PRIMARY KEY")
	sameOnB("SHOW CREATE TABLE np")
	mustExec(t, sb, "INSERT INTO np VALUES (1, 3)")
	mustExec(t, sb, "ADMIN CHECK TABLE np")
}

// A tightening ALTER (MODIFY ... NOT NULL, a shorter VARCHAR) while both
// nodes insert misfits and fix them up: each ALTER either fails with
// the misfit's error or, once it succeeds, no row holds a misfit and
// neither node stores one any more. The workers stop fixing rows up once
// an ALTER succeeded, so a misfit committed behind the ALTER's check
// (what PreventNull / Pending prevent) stays to be counted.
type tighteningRace struct {
	create      string
	insertBad   string // fmt with the row id
	fix         string // fmt with the row id (twice)
	alter       string
	relax       string
	countBad    string
	checkErr    uint16 // the ALTER's error for a misfit
	refusedCode uint16 // a writer's error for a misfit once the ALTER runs
}

func (r tighteningRace) run(t *testing.T) {
	st, _ := openProbe(t)
	cfg := Config{SchemaSyncInterval: 50 * time.Millisecond}
	na, nb := newNode(t, st, cfg), newNode(t, st, cfg)
	sa := newSess(t, na)
	mustExec(t, sa, r.create)

	var stop, altered atomic.Bool
	var wg sync.WaitGroup
	var refused atomic.Int64
	for w := range 4 {
		s := newSess(t, []*Backend{na, nb}[w%2])
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				id := w*1000000 + i
				_, err := s.Execute(context.Background(), fmt.Sprintf(r.insertBad, id))
				switch code := errCode(err); {
				case err == nil:
					for !altered.Load() {
						_, err := s.Execute(context.Background(), fmt.Sprintf(r.fix, id, id))
						if err == nil {
							break
						}
						if errCode(err) != 8028 {
							t.Errorf("fix: %v", err)
							return
						}
					}
				case code == r.refusedCode:
					refused.Add(1)
					time.Sleep(time.Millisecond)
				case code == 8028:
				default:
					t.Errorf("insert: %v", err)
					return
				}
			}
		}()
	}
	defer func() {
		stop.Store(true)
		wg.Wait()
	}()
	succeeded := 0
	deadline := time.Now().Add(3 * time.Second)
	for succeeded < 5 && time.Now().Before(deadline) {
		_, err := sa.Execute(context.Background(), r.alter)
		if errCode(err) == r.checkErr {
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", r.alter, err)
		}
		altered.Store(true)
		succeeded++
		time.Sleep(30 * time.Millisecond) // statements under way finish
		if got := queryRows(t, sa, r.countBad); got != "0\n" {
			t.Fatalf("round %d: misfits after the ALTER: %s", succeeded, got)
		}
		eventually(t, "node B loads the tightened column", func() error {
			for _, c := range nb.catalog.InfoSchema().Table("test", "t").Columns {
				if c.PreventNull || c.Pending != nil {
					return fmt.Errorf("column %s on node B still marked", c.Name)
				}
			}
			return nil
		})
		mustExec(t, sa, r.relax)
		altered.Store(false)
	}
	if succeeded == 0 {
		t.Fatalf("no %s succeeded", r.alter)
	}
	if refused.Load() == 0 {
		t.Fatalf("no misfit was refused: the workers never met the tightened column")
	}
}

func TestNotNullAlterRacesNullInserts(t *testing.T) {
	tighteningRace{
		create:    "CREATE TABLE t (id INT PRIMARY KEY, a INT)",
		insertBad: "INSERT INTO t VALUES (%d, NULL)", fix: "UPDATE t SET a = %d WHERE id = %d",
		alter: "ALTER TABLE t MODIFY a INT NOT NULL", relax: "ALTER TABLE t MODIFY a INT",
		countBad: "SELECT COUNT(*) FROM t WHERE a IS NULL",
		checkErr: mysql.ErrInvalidUseOfNull, refusedCode: mysql.ErrBadNull,
	}.run(t)
}

func TestNarrowingAlterRacesLongInserts(t *testing.T) {
	tighteningRace{
		create:    "CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(20), KEY is1 (s))",
		insertBad: "INSERT INTO t VALUES (%d, 'too long for three')", fix: "UPDATE t SET s = LEFT(%d, 3) WHERE id = %d",
		alter: "ALTER TABLE t MODIFY s VARCHAR(3)", relax: "ALTER TABLE t MODIFY s VARCHAR(20)",
		countBad: "SELECT COUNT(*) FROM t WHERE CHAR_LENGTH(s) > 3",
		checkErr: mysql.WarnDataTruncated, refusedCode: mysql.ErrDataTooLong,
	}.run(t)
}

package privilege

import (
	"context"
	"crypto/sha256"
	"testing"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/embedded"
)

func TestHostMatches(t *testing.T) {
	for _, c := range []struct {
		pattern, host string
		want          bool
	}{
		{"%", "10.1.2.3", true},
		{"", "10.1.2.3", true},
		{"localhost", "127.0.0.1", true},
		{"localhost", "::1", true},
		{"localhost", "10.0.0.1", false},
		{"127.0.0.1", "127.0.0.1", true},
		{"10.0.%", "10.0.3.4", true},
		{"10.0.%", "10.1.3.4", false},
		{"10.0.0._", "10.0.0.7", true},
		{"10.0.0._", "10.0.0.17", false},
		{"LOCALHOST", "127.0.0.1", true},
	} {
		if got := hostMatches(c.pattern, c.host); got != c.want {
			t.Errorf("hostMatches(%q, %q) = %v, want %v", c.pattern, c.host, got, c.want)
		}
	}
}

func TestMatchMostSpecificFirst(t *testing.T) {
	accts := map[Ident]*Account{}
	for _, id := range []Ident{{"u", "%"}, {"u", "127.0.%"}, {"u", "127.0.0.1"}, {"", "localhost"}, {"v", "%"}} {
		accts[id] = &Account{Ident: id}
	}
	snap := newSnapshot(1, accts)
	for _, c := range []struct {
		user, host string
		want       Ident
	}{
		{"u", "127.0.0.1", Ident{"u", "127.0.0.1"}},
		{"u", "127.0.0.2", Ident{"u", "127.0.%"}},
		{"u", "10.0.0.1", Ident{"u", "%"}},
		// MySQL's classic surprise: the anonymous user at localhost sorts
		// before v@'%' for a local client.
		{"v", "127.0.0.1", Ident{"", "localhost"}},
		{"v", "10.0.0.1", Ident{"v", "%"}},
	} {
		got := snap.Match(c.user, c.host)
		if got == nil || got.Ident != c.want {
			t.Errorf("Match(%q, %q) = %v, want %v", c.user, c.host, got, c.want)
		}
	}
	if snap.Match("w", "10.0.0.1") != nil {
		t.Error("an unknown user from a non-local host matched an account")
	}
}

func TestPasswordHashes(t *testing.T) {
	native := HashPassword(mysql.AuthNativePassword, "secret")
	// SELECT PASSWORD('secret') in MySQL 5.7 / MariaDB.
	if native != "*14E65567ABDB5135D0CFD9A70B3032C179A49EE7" {
		t.Fatalf("native hash %s", native)
	}
	salt := []byte("01234567890123456789")
	if !CheckNativeScramble(native, salt, nativeScramble(salt, "secret")) || CheckNativeScramble(native, salt, nativeScramble(salt, "other")) {
		t.Fatal("native scramble check")
	}
	sha2 := HashPassword(mysql.AuthCachingSha2Password, "secret")
	if !ValidAuthString(mysql.AuthCachingSha2Password, sha2) || !CheckCachingSha2Password(sha2, "secret") || CheckCachingSha2Password(sha2, "other") {
		t.Fatalf("caching_sha2 hash %q", sha2)
	}
	d := Sha2Digest("secret")
	if !CheckSha2Scramble(d, salt, sha2Scramble(salt, "secret")) || CheckSha2Scramble(d, salt, sha2Scramble(salt, "other")) {
		t.Fatal("caching_sha2 fast-path scramble check")
	}
}

func nativeScramble(salt []byte, pw string) []byte {
	h, _ := decodeHex(HashPassword(mysql.AuthNativePassword, pw)[1:]) // SHA1(SHA1(pw))
	return xorScramble(salt, pw, h)
}

// xorScramble computes SHA1(pw) XOR SHA1(salt + stage2) the client's way.
func xorScramble(salt []byte, pw string, stage2 []byte) []byte {
	s1 := sha1Sum([]byte(pw))
	x := sha1Sum(append(append([]byte{}, salt...), stage2...))
	for i := range x {
		x[i] ^= s1[i]
	}
	return x
}

func sha2Scramble(salt []byte, pw string) []byte {
	h1 := sha256.Sum256([]byte(pw))
	h2 := sha256.Sum256(h1[:])
	h3 := sha256.Sum256(append(h2[:], salt...))
	for i := range h3 {
		h3[i] ^= h1[i]
	}
	return h3[:]
}

func TestStoreBootstrapUpdateReload(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	kvs, err := embedded.Open(dir, embedded.Options{NoSync: true, BlockCacheSize: 8 << 20, MemTableSize: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer kvs.Close()
	s1, err := Open(ctx, kvs, "pw")
	if err != nil {
		t.Fatal(err)
	}
	root := s1.Snapshot().Match("root", "10.9.8.7")
	if root == nil || root.Host != "%" || !root.Global.Has(mysql.SuperPriv) || !root.Global.Has(mysql.GrantPriv) || !root.Dynamic["BACKUP_ADMIN"] {
		t.Fatalf("bootstrap root: %+v", root)
	}
	// A second node on the same store does not bootstrap again and sees
	// a change once it reloads.
	s2, err := Open(ctx, kvs, "other")
	if err != nil {
		t.Fatal(err)
	}
	if got := s2.Snapshot().Match("root", "1.2.3.4").AuthString; got != root.AuthString {
		t.Fatalf("second open rewrote root: %s", got)
	}
	err = s1.Update(ctx, func(m *Mutation) error {
		m.Put(&Account{Ident: Ident{"alice", "LOCALHOST"}, Plugin: mysql.AuthNativePassword,
			DB: map[string]Privs{"test": Privs(mysql.SelectPriv)}})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if s2.Snapshot().Account(Ident{"alice", "localhost"}) != nil {
		t.Fatal("s2 saw the change before reloading")
	}
	if err := s2.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	a := s2.Snapshot().Account(Ident{"alice", "localhost"})
	if a == nil || !a.DB["test"].Has(mysql.SelectPriv) {
		t.Fatalf("s2 after reload: %+v", a)
	}
	m := s2.Snapshot().Merge(a.Ident, nil)
	if !m.Has(mysql.SelectPriv, "TEST", "t") || m.Has(mysql.InsertPriv, "test", "t") || !m.AnyOnDB("test") || m.AnyOnDB("other") {
		t.Fatalf("merged: %+v", m)
	}
	if err := s1.Update(ctx, func(m *Mutation) error { m.Delete(Ident{"alice", "localhost"}); return nil }); err != nil {
		t.Fatal(err)
	}
	if s1.Snapshot().Account(Ident{"alice", "localhost"}) != nil {
		t.Fatal("delete not visible")
	}
}

func TestMergeRoles(t *testing.T) {
	r1 := &Account{Ident: Ident{"r1", "%"}, Role: true, Table: map[string]Privs{"d.t": Privs(mysql.InsertPriv)}, Roles: []Ident{{"r2", "%"}}}
	r2 := &Account{Ident: Ident{"r2", "%"}, Role: true, Column: map[string]Privs{"d.u.c": Privs(mysql.SelectPriv)}}
	u := &Account{Ident: Ident{"u", "%"}, Roles: []Ident{{"r1", "%"}}}
	snap := newSnapshot(1, map[Ident]*Account{r1.Ident: r1, r2.Ident: r2, u.Ident: u})
	if m := snap.Merge(u.Ident, nil); m.Has(mysql.InsertPriv, "d", "t") {
		t.Fatal("a granted but inactive role's privileges count")
	}
	m := snap.Merge(u.Ident, []Ident{{"r1", "%"}})
	if !m.Has(mysql.InsertPriv, "d", "t") || !m.HasColumn(mysql.SelectPriv, "d", "u", "C") || m.HasColumn(mysql.SelectPriv, "d", "u", "x") ||
		!m.HasColumnsOf(mysql.SelectPriv, "d", "u") || m.HasColumnsOf(mysql.InsertPriv, "d", "u") || !m.AnyOnTable("d", "u") || m.AnyOnTable("d", "v") {
		t.Fatalf("merged with roles: %+v", m)
	}
}

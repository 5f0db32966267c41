package server

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/x509"
	"encoding/binary"
	"encoding/pem"
	"testing"

	"github.com/pingcap/tidb/pkg/parser/mysql"
)

// sha2Scramble is the client side of caching_sha2_password's fast path:
// SHA256(pw) XOR SHA256(SHA256(SHA256(pw)) + salt).
func sha2Scramble(salt []byte, pw string) []byte {
	h1 := sha256.Sum256([]byte(pw))
	h2 := sha256.Sum256(h1[:])
	h3 := sha256.Sum256(append(h2[:], salt...))
	for i := range h3 {
		h3[i] ^= h1[i]
	}
	return h3[:]
}

// sha2Login logs in as a caching_sha2_password client that answers a full
// authentication request by fetching the server's RSA key; it returns the
// server's final packet and whether the fast path was taken.
func sha2Login(t *testing.T, addr, user, pw string) (final []byte, fast bool) {
	t.Helper()
	rc := dialRaw(t, addr)
	defer rc.c.Close()
	rc.seq = 0
	g := rc.mustRead()
	r := newReader(g[1:])
	r.nulString()
	r.uint32()
	salt := append([]byte(nil), r.bytes(8)...)
	r.byte1()
	r.uint16()
	r.byte1()
	r.uint16()
	r.uint16()
	r.byte1()
	r.bytes(10)
	salt = append(salt, r.bytes(12)...)
	var b []byte
	b = binary.LittleEndian.AppendUint32(b, rawCaps&^mysql.ClientConnectWithDB&^mysql.ClientConnectAtts)
	b = binary.LittleEndian.AppendUint32(b, 1<<24)
	b = append(b, 45)
	b = append(b, make([]byte, 23)...)
	b = append(b, user...)
	b = append(b, 0)
	b = appendLenEncBytes(b, sha2Scramble(salt, pw))
	b = append(b, mysql.AuthCachingSha2Password...)
	b = append(b, 0)
	if err := rc.writePacket(b); err != nil {
		t.Fatal(err)
	}
	p := rc.mustRead()
	if p[0] != 0x01 || len(p) != 2 {
		return append([]byte(nil), p...), false
	}
	if p[1] == sha2FastAuthOK {
		return append([]byte(nil), rc.mustRead()...), true
	}
	if p[1] != sha2PerformFullAuth {
		t.Fatalf("auth more data %v", p)
	}
	if err := rc.writePacket([]byte{sha2RequestPubKey}); err != nil {
		t.Fatal(err)
	}
	p = rc.mustRead()
	block, _ := pem.Decode(p[1:])
	if p[0] != 0x01 || block == nil {
		t.Fatalf("public key packet %q", p)
	}
	key, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	plain := append([]byte(pw), 0)
	for i := range plain {
		plain[i] ^= salt[i%len(salt)]
	}
	enc, err := rsa.EncryptOAEP(sha1.New(), rand.Reader, key.(*rsa.PublicKey), plain, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := rc.writePacket(enc); err != nil {
		t.Fatal(err)
	}
	return append([]byte(nil), rc.mustRead()...), false
}

func TestCachingSha2Login(t *testing.T) {
	env := startServer(t, Config{})
	// Wrong password first: full authentication, refused, nothing cached.
	if p, _ := sha2Login(t, env.addr, "carol", "wrong"); errCode(p) != mysql.ErrAccessDenied {
		t.Fatalf("wrong password: %q", p)
	}
	p, fast := sha2Login(t, env.addr, "carol", "sha2pw")
	if p[0] != 0 || fast {
		t.Fatalf("first login: %q fast=%v, want OK after full authentication", p, fast)
	}
	p, fast = sha2Login(t, env.addr, "carol", "sha2pw")
	if p[0] != 0 || !fast {
		t.Fatalf("second login: %q fast=%v, want OK through the fast path", p, fast)
	}
	if p, _ := sha2Login(t, env.addr, "carol", "wrong"); errCode(p) != mysql.ErrAccessDenied {
		t.Fatalf("wrong password with a cached digest: %q", p)
	}
	// A mysql_native_password account asked with caching_sha2 is switched.
	rc := dialRaw(t, env.addr)
	defer rc.c.Close()
	if p := rc.handshake("alice", "secret", "", mysql.AuthCachingSha2Password, rawCaps); p[0] != 0 {
		t.Fatalf("native account from a caching_sha2 client: %q", p)
	}
}

func TestLockedAccountLogin(t *testing.T) {
	env := startServer(t, Config{})
	rc := dialRaw(t, env.addr)
	defer rc.c.Close()
	p := rc.handshake("locked", "pw", "", mysql.AuthNativePassword, rawCaps)
	if errCode(p) != errAccountLocked || string(p[9:]) != "Access denied for user 'locked'@'%'. Account is locked." {
		t.Fatalf("locked account: %q", p)
	}
}

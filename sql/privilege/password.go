package privilege

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"

	"github.com/pingcap/tidb/pkg/parser/auth"
	"github.com/pingcap/tidb/pkg/parser/mysql"
)

// HashPassword returns the authentication_string MySQL stores for password
// under plugin: "*" + hex(SHA1(SHA1(pw))) for mysql_native_password, the
// salted SHA-256 crypt string "$A$005$..." for caching_sha2_password; an
// empty password is stored as the empty string.
func HashPassword(plugin, password string) string {
	if password == "" {
		return ""
	}
	if plugin == mysql.AuthCachingSha2Password {
		return auth.NewHashPassword(password, mysql.AuthCachingSha2Password)
	}
	return auth.EncodePassword(password)
}

// ValidAuthString reports whether s could be a stored hash of plugin (for
// IDENTIFIED WITH plugin AS 'hash').
func ValidAuthString(plugin, s string) bool {
	if s == "" {
		return true
	}
	switch plugin {
	case mysql.AuthNativePassword:
		_, err := auth.DecodePassword(s)
		return err == nil && len(s) == 41
	case mysql.AuthCachingSha2Password:
		return len(s) == 70 && bytes.HasPrefix([]byte(s), []byte("$A$"))
	}
	return false
}

// CheckNativeScramble verifies a mysql_native_password answer to salt
// against the stored authentication_string.
func CheckNativeScramble(authString string, salt, resp []byte) bool {
	if authString == "" {
		return len(resp) == 0
	}
	hpwd, err := auth.DecodePassword(authString)
	if err != nil || len(resp) == 0 {
		return false
	}
	return auth.CheckScrambledPassword(salt, hpwd, resp)
}

// CheckCachingSha2Password verifies a clear-text password (caching_sha2
// full authentication) against the stored crypt string.
func CheckCachingSha2Password(authString, password string) bool {
	if authString == "" {
		return password == ""
	}
	ok, err := auth.CheckHashingPassword([]byte(authString), password, mysql.AuthCachingSha2Password)
	return err == nil && ok
}

// Sha2Digest is SHA256(SHA256(password)): what caching_sha2_password's
// fast path checks a scramble against once a full authentication cached
// it.
func Sha2Digest(password string) [sha256.Size]byte {
	h1 := sha256.Sum256([]byte(password))
	return sha256.Sum256(h1[:])
}

// CheckSha2Scramble verifies a caching_sha2_password fast-path answer:
// resp = SHA256(pw) XOR SHA256(SHA256(SHA256(pw)) + salt).
func CheckSha2Scramble(digest [sha256.Size]byte, salt, resp []byte) bool {
	if len(resp) != sha256.Size {
		return false
	}
	h := sha256.New()
	h.Write(digest[:])
	h.Write(salt)
	x := h.Sum(nil)
	for i := range x {
		x[i] ^= resp[i] // now SHA256(pw), if resp is right
	}
	h2 := sha256.Sum256(x)
	return subtle.ConstantTimeCompare(h2[:], digest[:]) == 1
}

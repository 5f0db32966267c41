package server

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"sync"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/session"
	"github.com/shoaldb/shoal/sql/privilege"
)

// errAccountLocked is ER_ACCOUNT_HAS_BEEN_LOCKED (3118), which the parser
// module has no constant for.
const errAccountLocked = 3118

// caching_sha2_password protocol bytes (after the 0x01 "more data" tag).
const (
	sha2FastAuthOK      = 3
	sha2PerformFullAuth = 4
	sha2RequestPubKey   = 2
)

// sha2Cache holds SHA256(SHA256(password)) of caching_sha2_password
// accounts after one full authentication (keyed by the stored hash, so a
// new password drops the entry), as MySQL's cache for its fast path.
type sha2Cache struct {
	mu      sync.Mutex
	digests map[string][sha256.Size]byte

	keyOnce sync.Once
	key     *rsa.PrivateKey
	keyErr  error
	pubPEM  []byte
}

func (sc *sha2Cache) get(authString string) ([sha256.Size]byte, bool) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	d, ok := sc.digests[authString]
	return d, ok
}

func (sc *sha2Cache) put(authString string, d [sha256.Size]byte) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.digests == nil {
		sc.digests = map[string][sha256.Size]byte{}
	}
	sc.digests[authString] = d
}

// rsaKey returns the server's RSA key pair for caching_sha2_password's
// password exchange over unencrypted connections (made once per process,
// as MySQL's auto-generated key when none is configured).
func (sc *sha2Cache) rsaKey() (*rsa.PrivateKey, []byte, error) {
	sc.keyOnce.Do(func() {
		sc.key, sc.keyErr = rsa.GenerateKey(rand.Reader, 2048)
		if sc.keyErr != nil {
			return
		}
		der, err := x509.MarshalPKIXPublicKey(&sc.key.PublicKey)
		if err != nil {
			sc.keyErr = err
			return
		}
		sc.pubPEM = pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	})
	return sc.key, sc.pubPEM, sc.keyErr
}

// authenticate verifies the client's login as user against the account it
// matches from c.host, switching the client to the account's plugin
// (mysql_native_password or caching_sha2_password) when it answered with
// another. On failure it has sent the client an ERR packet (if it could)
// and returns an error.
func (c *conn) authenticate(user string, resp []byte, plugin string) error {
	acct, found := c.srv.backend.LookupAccount(user, c.host)
	want := mysql.AuthNativePassword
	if found && acct.Plugin == mysql.AuthCachingSha2Password {
		want = mysql.AuthCachingSha2Password
	}
	if plugin != want && !(plugin == "" && want == mysql.AuthNativePassword) {
		var err error
		if resp, err = c.switchAuthPlugin(want); err != nil {
			return err
		}
	}
	ok := false
	if found {
		var err error
		if want == mysql.AuthCachingSha2Password {
			ok, err = c.checkCachingSha2(acct, resp)
			if err != nil {
				return err
			}
		} else {
			ok = privilege.CheckNativeScramble(acct.AuthString, c.salt[:], resp)
		}
	}
	if !ok {
		using := "NO"
		if len(resp) > 0 {
			using = "YES"
		}
		return c.denyLogin(errno.NewStd(mysql.ErrAccessDenied, user, c.host, using))
	}
	if acct.Locked {
		return c.denyLogin(errno.New(errAccountLocked, "Access denied for user '%s'@'%s'. Account is locked.", acct.User, acct.Host))
	}
	return nil
}

func (c *conn) denyLogin(e *errno.SQLError) error {
	_ = c.writeError(e)
	_ = c.pkt.flush()
	return fmt.Errorf("login refused: %s", e.Message)
}

// switchAuthPlugin sends an AuthSwitchRequest for plugin with the
// connection's salt and returns the client's answer.
func (c *conn) switchAuthPlugin(plugin string) ([]byte, error) {
	p := c.pkt
	start := p.startPacket()
	p.wbuf = append(p.wbuf, 0xfe)
	p.wbuf = append(p.wbuf, plugin...)
	p.wbuf = append(p.wbuf, 0)
	p.wbuf = append(p.wbuf, c.salt[:]...)
	p.wbuf = append(p.wbuf, 0)
	if err := p.endPacket(start); err != nil {
		return nil, err
	}
	if err := p.flush(); err != nil {
		return nil, err
	}
	data, err := p.readPacket()
	if err != nil {
		c.fatalBeforeAuth(err)
		return nil, err
	}
	return append([]byte(nil), data...), nil
}

// checkCachingSha2 runs caching_sha2_password's exchange after the
// client's scramble resp: the fast path when a digest is cached, else the
// full authentication, in which the client sends its password encrypted
// in clear over TLS, else encrypted with the server's RSA public key.
func (c *conn) checkCachingSha2(acct session.LoginAccount, resp []byte) (bool, error) {
	if acct.AuthString == "" || len(resp) == 0 {
		return acct.AuthString == "" && len(resp) == 0, nil
	}
	if d, ok := c.srv.sha2.get(acct.AuthString); ok {
		if !privilege.CheckSha2Scramble(d, c.salt[:], resp) {
			return false, nil
		}
		return true, c.writeAuthMoreData([]byte{sha2FastAuthOK})
	}
	if err := c.writeAuthMoreData([]byte{sha2PerformFullAuth}); err != nil {
		return false, err
	}
	data, err := c.pkt.readPacket()
	if err != nil {
		c.fatalBeforeAuth(err)
		return false, err
	}
	if c.Secure() {
		// Over TLS the client sends its password in clear, NUL-ended.
		password := string(bytes.TrimRight(data, "\x00"))
		if !privilege.CheckCachingSha2Password(acct.AuthString, password) {
			return false, nil
		}
		c.srv.sha2.put(acct.AuthString, privilege.Sha2Digest(password))
		return true, nil
	}
	key, pubPEM, err := c.srv.sha2.rsaKey()
	if err != nil {
		return false, err
	}
	if len(data) == 1 && data[0] == sha2RequestPubKey {
		if err := c.writeAuthMoreData(pubPEM); err != nil {
			return false, err
		}
		if data, err = c.pkt.readPacket(); err != nil {
			c.fatalBeforeAuth(err)
			return false, err
		}
	}
	plain, err := rsa.DecryptOAEP(sha1.New(), nil, key, data, nil)
	if err != nil {
		// A clear-text password (the client believes the channel is
		// secure) or garbage: refuse, as MySQL does without TLS.
		return false, nil
	}
	for i := range plain {
		plain[i] ^= c.salt[i%len(c.salt)]
	}
	password := string(bytes.TrimRight(plain, "\x00"))
	if !privilege.CheckCachingSha2Password(acct.AuthString, password) {
		return false, nil
	}
	c.srv.sha2.put(acct.AuthString, privilege.Sha2Digest(password))
	return true, nil
}

// writeAuthMoreData sends an AuthMoreData packet (0x01 + data).
func (c *conn) writeAuthMoreData(data []byte) error {
	p := c.pkt
	start := p.startPacket()
	p.wbuf = append(p.wbuf, 0x01)
	p.wbuf = append(p.wbuf, data...)
	if err := p.endPacket(start); err != nil {
		return err
	}
	return p.flush()
}

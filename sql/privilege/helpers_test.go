package privilege

import (
	"crypto/sha1"
	"encoding/hex"
)

func decodeHex(s string) ([]byte, error) { return hex.DecodeString(s) }

func sha1Sum(b []byte) []byte { h := sha1.Sum(b); return h[:] }

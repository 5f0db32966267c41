package session

import (
	"time"
)

// SetInteractive is called for a client that set CLIENT_INTERACTIVE at
// handshake: as in MySQL, its session's wait_timeout starts at the global
// interactive_timeout.
func (s *Session) SetInteractive() {
	if v, err := s.getSysVar("interactive_timeout", true); err == nil {
		s.setSessionVar("wait_timeout", v)
	}
}

// IdleTimeout is how long the connection may wait for its next command
// (wait_timeout) before the server closes it. MySQL's least wait_timeout
// is 1 second, so smaller values count as 1.
func (s *Session) IdleTimeout() time.Duration {
	return s.hot().waitTimeout
}

package tikvclient

import (
	"errors"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Only a failure to connect proves a request never left: a 1PC prewrite
// that failed so may be resent; any other failure is undetermined.
func TestNotSent(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{status.Error(codes.Unavailable, `connection error: desc = "transport: Error while dialing: dial tcp 127.0.0.1:1: connect: connection refused"`), true},
		{status.Error(codes.Unavailable, "error reading from server: EOF"), false},
		{status.Error(codes.DeadlineExceeded, "context deadline exceeded"), false},
		{errors.New("connection refused"), false},
	} {
		if got := notSent(c.err); got != c.want {
			t.Errorf("notSent(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

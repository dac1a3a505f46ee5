package testenv

import (
	"net"
	"testing"
)

// FreeLoopbackPort is a TCP port on 127.0.0.1 that no one listened on a moment ago: for a test
// server that must be given its address before it starts.
func FreeLoopbackPort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

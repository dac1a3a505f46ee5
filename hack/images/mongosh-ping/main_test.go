package main

import (
	"context"
	"net"
	"testing"
	"time"
)

func TestParseAcceptsOnlyThePing(t *testing.T) {
	if err := parse([]string{"--quiet", "--norc", "--eval", "db.adminCommand('ping').ok"}); err != nil {
		t.Errorf("the probe's arguments: %v", err)
	}
	for _, args := range [][]string{nil, {"--eval"}, {"--eval", "db.dropDatabase()"}, {"--host", "example.com", "--eval", "db.adminCommand('ping')"}} {
		if err := parse(args); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}

func TestPingFailsWithoutAServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close() // nothing listens there now
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if err := ping(ctx, "mongodb://"+addr+"/?directConnection=true"); err == nil {
		t.Error("a ping of a closed port succeeded")
	}
}

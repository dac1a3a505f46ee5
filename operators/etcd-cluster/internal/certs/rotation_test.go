package certs

import (
	"bytes"
	"testing"
)

func TestJoinCAsAppendsOnlyWhatTheFirstBundleLacks(t *testing.T) {
	a, b := newCA(t, "a"), newCA(t, "b")
	both := JoinCAs(a.CertPEM, b.CertPEM)
	if !bytes.HasPrefix(both, a.CertPEM) || !a.TrustedBy(both) || !b.TrustedBy(both) {
		t.Fatalf("a joined with b must keep a's bytes first and hold both:\n%s", both)
	}
	if again := JoinCAs(both, b.CertPEM); !bytes.Equal(again, both) {
		t.Fatal("joining a bundle with a CA it holds must change nothing")
	}
	if got := JoinCAs(nil, a.CertPEM); !bytes.Equal(got, a.CertPEM) {
		t.Fatalf("joining nothing with a is a, got %q", got)
	}
	if b.TrustedBy(a.CertPEM) {
		t.Fatal("a bundle of a alone does not trust b")
	}
}

func TestTowardRenewsInOneStep(t *testing.T) {
	ca := newCA(t, "ca")
	running, next := material(t, ca, "*.m.ns.svc"), material(t, ca, "*.m.ns.svc")
	if got := Toward(running, next, now); got.Hash() != next.Hash() {
		t.Fatal("certificates renewed by the same CA are the next step themselves")
	}
}

// A change of CA takes three steps, each trusted by the members still on the one before,
// and ends on the new certificates trusting the new CA alone.
func TestTowardChangesCAInThreeCompatibleSteps(t *testing.T) {
	old, ca := newCA(t, "old"), newCA(t, "new")
	running, next := material(t, old, "*.m.ns.svc"), material(t, ca, "*.m.ns.svc")
	var steps []Material
	for step := running; step.Hash() != next.Hash(); {
		if len(steps) == 4 {
			t.Fatal("no end to the steps")
		}
		moved := Toward(step, next, now)
		if err := Compatible(step, moved, now); err != nil {
			t.Fatalf("step %d: %v", len(steps)+1, err)
		}
		step = moved
		steps = append(steps, step)
	}
	if len(steps) != 3 {
		t.Fatalf("%d steps, want 3", len(steps))
	}
	first, second := steps[0], steps[1]
	if !bytes.Equal(first.Peer.Cert, running.Peer.Cert) || !old.TrustedBy(first.Peer.CA) || !ca.TrustedBy(first.Peer.CA) {
		t.Fatal("the first step is the running certificates, trusting both CAs")
	}
	if !bytes.Equal(second.Server.Cert, next.Server.Cert) || !old.TrustedBy(second.Client.CA) || !ca.TrustedBy(second.Client.CA) {
		t.Fatal("the second step is the new certificates, still trusting both CAs")
	}
	if !bytes.Equal(second.Peer.CA, first.Peer.CA) {
		t.Fatal("the bundle of both CAs keeps its bytes from one step to the next")
	}
	if got := Toward(next, next, now); got.Hash() != next.Hash() {
		t.Fatal("at the end there is no step left")
	}
}

func TestIssuedTellsTheSigningCA(t *testing.T) {
	ca, other := newCA(t, "ca"), newCA(t, "other")
	m := material(t, ca, "*.m.ns.svc")
	if !ca.Issued(m.Peer.Cert) || other.Issued(m.Peer.Cert) || ca.Issued([]byte("not PEM")) {
		t.Fatal("Issued must tell the CA that signed a certificate from another")
	}
	m = m.WithCA(JoinCAs(ca.CertPEM, other.CertPEM))
	if !ca.Issued(m.Server.Cert) || ca.Signed(m.Server) {
		t.Fatal("Issued looks at the signature only; Signed also wants the CA bundle to be the CA alone")
	}
}

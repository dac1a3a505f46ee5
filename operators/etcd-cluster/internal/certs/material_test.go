package certs

import (
	"crypto/x509"
	"strings"
	"testing"
	"time"
)

var now = time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)

const member = "m-0.m.ns.svc"

func newCA(t *testing.T, name string) CA {
	t.Helper()
	ca, err := NewCA(name, now, 365*24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

// material issues everything a cluster runs with from ca, members covering names.
func material(t *testing.T, ca CA, names ...string) Material {
	t.Helper()
	var m Material
	var err error
	if m.Peer, err = ca.Issue("peer", names, now, 24*time.Hour, x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth); err != nil {
		t.Fatal(err)
	}
	if m.Server, err = ca.Issue("server", names, now, 24*time.Hour, x509.ExtKeyUsageServerAuth); err != nil {
		t.Fatal(err)
	}
	if m.Client, err = ca.Issue("operator", nil, now, 48*time.Hour, x509.ExtKeyUsageClientAuth); err != nil {
		t.Fatal(err)
	}
	return m
}

func expectError(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v, want one containing %q", err, want)
	}
}

func TestVerifyAcceptsMaterialOfOneCAThatCoversTheMembers(t *testing.T) {
	m := material(t, newCA(t, "ca"), "*.m.ns.svc")
	if err := Verify(m, []string{member, "m-8.m.ns.svc"}, now); err != nil {
		t.Fatal(err)
	}
	e, err := ExpiryOf(m)
	if err != nil {
		t.Fatal(err)
	}
	if want := now.Add(24 * time.Hour); !e.First().Equal(want) || !e.Client.Equal(now.Add(48*time.Hour)) {
		t.Fatalf("expiry %+v, want the first at %s", e, want)
	}
}

func TestVerifyRefusesWhatWouldCutMembersOff(t *testing.T) {
	ca, other := newCA(t, "ca"), newCA(t, "other")
	tests := map[string]struct {
		m    func() Material
		at   time.Time
		want string
	}{
		"a name not covered": {func() Material { return material(t, ca, "*.x.ns.svc") }, now, "the peer certificate does not cover m-0.m.ns.svc"},
		"expired":            {func() Material { return material(t, ca, "*.m.ns.svc") }, now.Add(25 * time.Hour), "the peer certificate expired at"},
		"signed by another CA": {func() Material {
			m := material(t, ca, "*.m.ns.svc")
			m.Peer.CA = other.CertPEM
			return m
		}, now, "the peer certificate is not trusted by the peer CA"},
		"a peer certificate for servers only": {func() Material {
			m := material(t, ca, "*.m.ns.svc")
			m.Peer = m.Server
			return m
		}, now, "for client authentication"},
		"a key of another certificate": {func() Material {
			m := material(t, ca, "*.m.ns.svc")
			m.Server.Key = m.Peer.Key
			return m
		}, now, "the server certificate and key"},
		"the operator's certificate not signed by the members' client CA": {func() Material {
			m := material(t, ca, "*.m.ns.svc")
			m.Server.CA = other.CertPEM
			return m
		}, now, "the operator's client certificate is not trusted by the members' server-ca.crt"},
		"no CA": {func() Material {
			m := material(t, ca, "*.m.ns.svc")
			m.Client.CA = []byte("not PEM")
			return m
		}, now, "the operator's client CA holds no PEM certificate"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) { expectError(t, Verify(tt.m(), []string{member}, tt.at), tt.want) })
	}
}

func TestLayoutReadNamesTheMissingKeys(t *testing.T) {
	_, err := PeerLayout.Read("peers", map[string][]byte{"peer.crt": []byte("x")})
	expectError(t, err, "secret peers has no [peer.key peer-ca.crt]")
	m := material(t, newCA(t, "ca"), "*.m.ns.svc")
	back, err := FromData("copy", m.Data())
	if err != nil || back.Hash() != m.Hash() {
		t.Fatalf("read back %v, hash %s, want %s", err, back.Hash(), m.Hash())
	}
}

func TestCompatibleHoldsARotationUntilBothCAsAreTrusted(t *testing.T) {
	ca, next := newCA(t, "ca"), newCA(t, "next")
	running := material(t, ca, "*.m.ns.svc")
	if err := Compatible(running, material(t, ca, "*.m.ns.svc"), now); err != nil {
		t.Fatalf("renewed by the same CA: %v", err)
	}
	rotated := material(t, next, "*.m.ns.svc")
	expectError(t, Compatible(running, rotated, now), "the new peer certificate is not trusted by the running members' peer CA")

	// The documented way: first trust both CAs, then switch the certificates.
	both := append(append([]byte{}, ca.CertPEM...), next.CertPEM...)
	trusting := running
	trusting.Peer.CA, trusting.Server.CA, trusting.Client.CA = both, both, both
	if err := Compatible(running, trusting, now); err != nil {
		t.Fatalf("adding a CA: %v", err)
	}
	rotated.Peer.CA, rotated.Server.CA, rotated.Client.CA = both, both, both
	if err := Compatible(trusting, rotated, now); err != nil {
		t.Fatalf("switching certificates while both CAs are trusted: %v", err)
	}
}

func TestManagedCertificatesAreRenewedWhenAThirdIsLeft(t *testing.T) {
	ca := newCA(t, "ca")
	p, err := ca.Issue("c", nil, now, 30*time.Hour, x509.ExtKeyUsageClientAuth)
	if err != nil {
		t.Fatal(err)
	}
	if !ca.Signed(p) || newCA(t, "other").Signed(p) {
		t.Fatal("Signed must tell the issuing CA from another")
	}
	if Due(p.Cert, 30*time.Hour, now.Add(19*time.Hour)) || !Due(p.Cert, 30*time.Hour, now.Add(21*time.Hour)) {
		t.Fatal("a certificate is due when less than a third of its lifetime is left")
	}
	back, err := ParseCA(ca.CertPEM, ca.Key)
	if err != nil || !back.Signed(p) {
		t.Fatalf("the CA read back from its Secret must sign as before: %v", err)
	}
	if _, err := ParseCA(p.Cert, p.Key); err == nil {
		t.Fatal("a leaf certificate is not a CA")
	}
}

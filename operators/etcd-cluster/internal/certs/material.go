// Package certs checks and makes the certificates of a TLS etcd cluster: the peer and server
// certificates of its members and the operator's client certificate, in the CoreOS etcd
// operator's Secret layout. Everything here is pure: it reads PEM and returns PEM or errors.
package certs

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Layout is where a Secret keeps one certificate, its key and the CA bundle that goes with it.
type Layout struct{ Cert, Key, CA string }

// The CoreOS etcd operator's Secret layouts.
var (
	// PeerLayout: a member's certificate for other members, and the CA members trust.
	PeerLayout = Layout{Cert: "peer.crt", Key: "peer.key", CA: "peer-ca.crt"}
	// ServerLayout: a member's certificate for clients, and the CA of the clients it accepts.
	ServerLayout = Layout{Cert: "server.crt", Key: "server.key", CA: "server-ca.crt"}
	// ClientLayout: a client's certificate, and the CA of the servers it trusts.
	ClientLayout = Layout{Cert: "etcd-client.crt", Key: "etcd-client.key", CA: "etcd-client-ca.crt"}
)

// Pair is a certificate (PEM, the leaf first, then any intermediates), its key and a CA
// bundle (PEM).
type Pair struct{ Cert, Key, CA []byte }

// Read takes a Pair out of a Secret's data; secret names the Secret in the error.
func (l Layout) Read(secret string, data map[string][]byte) (Pair, error) {
	var missing []string
	for _, k := range []string{l.Cert, l.Key, l.CA} {
		if len(data[k]) == 0 {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return Pair{}, fmt.Errorf("secret %s has no %v (it needs %s, %s and %s)", secret, missing, l.Cert, l.Key, l.CA)
	}
	return Pair{Cert: data[l.Cert], Key: data[l.Key], CA: data[l.CA]}, nil
}

// Write puts p into a Secret's data.
func (l Layout) Write(p Pair, data map[string][]byte) {
	data[l.Cert], data[l.Key], data[l.CA] = p.Cert, p.Key, p.CA
}

// Material is every certificate a TLS cluster runs with.
type Material struct {
	Peer   Pair // each member's, to other members
	Server Pair // each member's, to clients; its CA is the clients' CA
	Client Pair // the operator's, to members; its CA is the servers' CA
}

// Data is m in one Secret's data, each Pair in its layout.
func (m Material) Data() map[string][]byte {
	data := map[string][]byte{}
	PeerLayout.Write(m.Peer, data)
	ServerLayout.Write(m.Server, data)
	ClientLayout.Write(m.Client, data)
	return data
}

// FromData reads Material back from Data; secret names the Secret in the error.
func FromData(secret string, data map[string][]byte) (Material, error) {
	var m Material
	var errs [3]error
	m.Peer, errs[0] = PeerLayout.Read(secret, data)
	m.Server, errs[1] = ServerLayout.Read(secret, data)
	m.Client, errs[2] = ClientLayout.Read(secret, data)
	return m, errors.Join(errs[:]...)
}

// Hash names m: equal material, equal hash.
func (m Material) Hash() string {
	h := sha256.New()
	for _, b := range [][]byte{m.Peer.Cert, m.Peer.Key, m.Peer.CA, m.Server.Cert, m.Server.Key, m.Server.CA, m.Client.Cert, m.Client.Key, m.Client.CA} {
		_, _ = fmt.Fprintf(h, "%d:", len(b))
		_, _ = h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:10]
}

// parsed is a Pair read: the leaf and the rest of its chain, and the CA bundle.
type parsed struct {
	leaf          *x509.Certificate
	intermediates *x509.CertPool
	roots         *x509.CertPool
}

func parse(what string, p Pair) (parsed, error) {
	pair, err := tls.X509KeyPair(p.Cert, p.Key)
	if err != nil {
		return parsed{}, fmt.Errorf("the %s certificate and key: %w", what, err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return parsed{}, fmt.Errorf("the %s certificate: %w", what, err)
	}
	out := parsed{leaf: leaf, intermediates: x509.NewCertPool(), roots: x509.NewCertPool()}
	for _, der := range pair.Certificate[1:] {
		c, err := x509.ParseCertificate(der)
		if err != nil {
			return parsed{}, fmt.Errorf("the %s certificate's chain: %w", what, err)
		}
		out.intermediates.AddCert(c)
	}
	if !out.roots.AppendCertsFromPEM(p.CA) {
		return parsed{}, fmt.Errorf("the %s CA holds no PEM certificate", what)
	}
	return out, nil
}

// verify checks that leaf chains to roots for each of usages at now, and covers names.
func verify(what string, leaf parsed, roots *x509.CertPool, rootsWhat string, names []string, now time.Time, usages ...x509.ExtKeyUsage) error {
	switch {
	case now.Before(leaf.leaf.NotBefore):
		return fmt.Errorf("the %s certificate is not valid before %s", what, leaf.leaf.NotBefore.UTC().Format(time.RFC3339))
	case now.After(leaf.leaf.NotAfter):
		return fmt.Errorf("the %s certificate expired at %s", what, leaf.leaf.NotAfter.UTC().Format(time.RFC3339))
	}
	for _, u := range usages { // x509 accepts a chain that allows any one of KeyUsages
		opts := x509.VerifyOptions{Roots: roots, Intermediates: leaf.intermediates, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{u}}
		if _, err := leaf.leaf.Verify(opts); err != nil {
			return fmt.Errorf("the %s certificate is not trusted by %s for %s: %w", what, rootsWhat, usageName(u), err)
		}
	}
	for _, n := range names {
		if err := leaf.leaf.VerifyHostname(n); err != nil {
			return fmt.Errorf("the %s certificate does not cover %s (it covers %v)", what, n, leaf.leaf.DNSNames)
		}
	}
	return nil
}

func usageName(u x509.ExtKeyUsage) string {
	if u == x509.ExtKeyUsageClientAuth {
		return "client authentication"
	}
	return "server authentication"
}

// checked is Material parsed and verified.
type checked struct{ peer, server, client parsed }

// check parses m and verifies each certificate where it is used: the peer certificate, as
// server and client of other members, against the peer CA; the server certificate, for the
// operator, against the client's CA; the operator's certificate, for members, against the
// server's CA. Members' certificates must cover the DNS names of members.
func check(m Material, members []string, now time.Time) (checked, error) {
	var c checked
	var err error
	if c.peer, err = parse("peer", m.Peer); err != nil {
		return c, err
	}
	if c.server, err = parse("server", m.Server); err != nil {
		return c, err
	}
	if c.client, err = parse("operator's client", m.Client); err != nil {
		return c, err
	}
	both := []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	return c, errors.Join(
		verify("peer", c.peer, c.peer.roots, "the peer CA", members, now, both...),
		verify("server", c.server, c.client.roots, "the operator's etcd-client-ca.crt", members, now, x509.ExtKeyUsageServerAuth),
		verify("operator's client", c.client, c.server.roots, "the members' server-ca.crt", nil, now, x509.ExtKeyUsageClientAuth),
	)
}

// Verify checks that m works, at now, for members of these DNS names.
func Verify(m Material, members []string, now time.Time) error {
	_, err := check(m, members, now)
	return err
}

// Compatible checks that members and the operator on next can talk with members on running
// while members restart from one to the other: each side's certificates are trusted by the
// other side's CAs.
func Compatible(running, next Material, now time.Time) error {
	r, err := check(running, nil, now)
	if err != nil {
		return fmt.Errorf("the certificates members run with: %w", err)
	}
	n, err := check(next, nil, now)
	if err != nil {
		return err
	}
	both := []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	return errors.Join(
		verify("new peer", n.peer, r.peer.roots, "the running members' peer CA", nil, now, both...),
		verify("running peer", r.peer, n.peer.roots, "the new peer CA", nil, now, both...),
		verify("new operator's client", n.client, r.server.roots, "the running members' server-ca.crt", nil, now, x509.ExtKeyUsageClientAuth),
		verify("running server", r.server, n.client.roots, "the new etcd-client-ca.crt", nil, now, x509.ExtKeyUsageServerAuth),
	)
}

// Expiry is when each certificate of m expires.
type Expiry struct{ Peer, Server, Client time.Time }

// ExpiryOf reads when each certificate of m expires; m must have passed Verify.
func ExpiryOf(m Material) (Expiry, error) {
	var e Expiry
	for _, x := range []struct {
		p  Pair
		at *time.Time
	}{{m.Peer, &e.Peer}, {m.Server, &e.Server}, {m.Client, &e.Client}} {
		leaf, err := Leaf(x.p.Cert)
		if err != nil {
			return e, err
		}
		*x.at = leaf.NotAfter
	}
	return e, nil
}

// First is the soonest expiry.
func (e Expiry) First() time.Time {
	return slices.MinFunc([]time.Time{e.Peer, e.Server, e.Client}, func(a, b time.Time) int { return a.Compare(b) })
}

// pemCertificate is the PEM block type of a certificate.
const pemCertificate = "CERTIFICATE"

// Leaf parses the first certificate of a PEM chain.
func Leaf(certPEM []byte) (*x509.Certificate, error) {
	block, _ := pem.Decode(certPEM)
	if block == nil || block.Type != pemCertificate {
		return nil, errors.New("no PEM certificate")
	}
	return x509.ParseCertificate(block.Bytes)
}

// ClientConfig is the TLS configuration of a client presenting p, trusting p's CA.
func ClientConfig(p Pair) (*tls.Config, error) {
	cert, err := tls.X509KeyPair(p.Cert, p.Key)
	if err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(p.CA) {
		return nil, errors.New("the CA holds no PEM certificate")
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: roots, MinVersion: tls.VersionTLS12}, nil
}

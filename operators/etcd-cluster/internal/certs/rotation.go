package certs

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"time"
)

// Toward is the certificates members restart onto next, on the way from running to next,
// such that the members still on running and the operator keep talking with those already
// restarted:
//   - next itself, when each side trusts the other (a renewal by the same CA);
//   - otherwise (a new CA), first the running certificates with both CAs trusted, then next's
//     certificates with both CAs still trusted, then next.
//
// A step already taken is skipped. When no step is Compatible with running, Toward returns
// next, which Compatible then refuses (the running certificates expired, say).
func Toward(running, next Material, now time.Time) Material {
	if Compatible(running, next, now) == nil {
		return next
	}
	bothTrusted := running.trusting(next)
	newCertificates := next
	newCertificates.Peer.CA, newCertificates.Server.CA, newCertificates.Client.CA = bothTrusted.Peer.CA, bothTrusted.Server.CA, bothTrusted.Client.CA
	steps := []Material{bothTrusted, newCertificates}
	for _, step := range steps {
		if step.Hash() != running.Hash() && Compatible(running, step, now) == nil {
			return step
		}
	}
	return next
}

// trusting is m with each of its CA bundles joined with other's.
func (m Material) trusting(other Material) Material {
	m.Peer.CA = JoinCAs(m.Peer.CA, other.Peer.CA)
	m.Server.CA = JoinCAs(m.Server.CA, other.Server.CA)
	m.Client.CA = JoinCAs(m.Client.CA, other.Client.CA)
	return m
}

// WithCA is m with every CA bundle set to ca.
func (m Material) WithCA(ca []byte) Material {
	m.Peer.CA, m.Server.CA, m.Client.CA = ca, ca, ca
	return m
}

// JoinCAs is the bundle first with the certificates of second it lacks appended: first's
// bytes are kept as they are, so joining a bundle with what it has already changes nothing.
func JoinCAs(first, second []byte) []byte {
	have := map[string]bool{}
	for _, der := range certificatesOf(first) {
		have[string(der)] = true
	}
	out := bytes.Clone(first)
	for _, der := range certificatesOf(second) {
		if have[string(der)] {
			continue
		}
		have[string(der)] = true
		if len(out) > 0 && out[len(out)-1] != '\n' {
			out = append(out, '\n')
		}
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: pemCertificate, Bytes: der})...)
	}
	return out
}

// certificatesOf is the DER of each PEM certificate in bundle.
func certificatesOf(bundle []byte) [][]byte {
	var ders [][]byte
	for rest := bundle; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			return ders
		}
		if block.Type == pemCertificate {
			ders = append(ders, block.Bytes)
		}
	}
}

// TrustedBy tells whether bundle holds ca's certificate.
func (ca CA) TrustedBy(bundle []byte) bool {
	for _, der := range certificatesOf(bundle) {
		if bytes.Equal(der, ca.cert.Raw) {
			return true
		}
	}
	return false
}

// Issued tells whether ca signed the first certificate of certPEM.
func (ca CA) Issued(certPEM []byte) bool {
	leaf, err := Leaf(certPEM)
	return err == nil && issuedBy(leaf, ca.cert)
}

func issuedBy(leaf, ca *x509.Certificate) bool {
	return bytes.Equal(leaf.RawIssuer, ca.RawSubject) && leaf.CheckSignatureFrom(ca) == nil
}

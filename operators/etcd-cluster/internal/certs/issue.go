package certs

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"time"
)

// CA signs the certificates of a cluster whose certificates the operator manages.
type CA struct {
	cert         *x509.Certificate
	key          crypto.Signer
	CertPEM, Key []byte // PEM, as kept in the CA's Secret
}

// NewCA makes a self-signed CA valid for lifetime from now.
func NewCA(commonName string, now time.Time, lifetime time.Duration) (CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return CA{}, err
	}
	tmpl, err := template(commonName, now, lifetime)
	if err != nil {
		return CA{}, err
	}
	tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
	tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return CA{}, err
	}
	keyPEM, err := encodeKey(key)
	if err != nil {
		return CA{}, err
	}
	return ParseCA(pem.EncodeToMemory(&pem.Block{Type: pemCertificate, Bytes: der}), keyPEM)
}

// ParseCA reads a CA back from its PEM certificate and key.
func ParseCA(certPEM, keyPEM []byte) (CA, error) {
	cert, err := Leaf(certPEM)
	if err != nil {
		return CA{}, fmt.Errorf("the CA certificate: %w", err)
	}
	block, _ := pem.Decode(keyPEM)
	if block == nil {
		return CA{}, errors.New("the CA key holds no PEM block")
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return CA{}, fmt.Errorf("the CA key: %w", err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok || !cert.IsCA {
		return CA{}, errors.New("the CA certificate and key cannot sign certificates")
	}
	return CA{cert: cert, key: signer, CertPEM: certPEM, Key: keyPEM}, nil
}

// NotAfter is when the CA expires.
func (ca CA) NotAfter() time.Time { return ca.cert.NotAfter }

// Issue makes a certificate for dnsNames with usages, valid for lifetime from now (never past
// the CA), with the CA as its bundle.
func (ca CA) Issue(commonName string, dnsNames []string, now time.Time, lifetime time.Duration, usages ...x509.ExtKeyUsage) (Pair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Pair{}, err
	}
	tmpl, err := template(commonName, now, lifetime)
	if err != nil {
		return Pair{}, err
	}
	if tmpl.NotAfter.After(ca.cert.NotAfter) {
		tmpl.NotAfter = ca.cert.NotAfter
	}
	tmpl.DNSNames, tmpl.ExtKeyUsage = dnsNames, usages
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, key.Public(), ca.key)
	if err != nil {
		return Pair{}, err
	}
	keyPEM, err := encodeKey(key)
	if err != nil {
		return Pair{}, err
	}
	return Pair{Cert: pem.EncodeToMemory(&pem.Block{Type: pemCertificate, Bytes: der}), Key: keyPEM, CA: ca.CertPEM}, nil
}

// Signed tells whether ca signed p's certificate and p trusts ca.
func (ca CA) Signed(p Pair) bool {
	return ca.Issued(p.Cert) && string(p.CA) == string(ca.CertPEM)
}

// Due tells whether a certificate issued for lifetime should be renewed at now: when a
// third of its lifetime is left, or it cannot be read.
func Due(certPEM []byte, lifetime time.Duration, now time.Time) bool {
	leaf, err := Leaf(certPEM)
	return err != nil || leaf.NotAfter.Sub(now) < lifetime/3
}

func template(commonName string, now time.Time, lifetime time.Duration) (*x509.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, err
	}
	return &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: commonName, Organization: []string{"quintet etcd-cluster"}},
		// An hour's slack for clocks behind the operator's.
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(lifetime),
	}, nil
}

func encodeKey(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// certValidity is long enough for any local session and short enough to be obviously local.
const certValidity = 30 * 24 * time.Hour

// keyPair is a certificate with its private key, both PEM-encoded.
type keyPair struct {
	CertPEM []byte
	KeyPEM  []byte
	cert    *x509.Certificate
	key     *ecdsa.PrivateKey
}

// certRequest describes one leaf certificate signed by the cluster CA.
type certRequest struct {
	Name         string // file stem under pki/
	CommonName   string
	Organization []string
	DNSNames     []string
	IPs          []net.IP
	Server       bool
}

func newKey() (*ecdsa.PrivateKey, error) {
	return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
}

func encodeKey(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}

func serialNumber() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
}

// newCA makes a self-signed certificate authority.
func newCA(commonName string) (*keyPair, error) {
	key, err := newKey()
	if err != nil {
		return nil, err
	}
	serial, err := serialNumber()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: commonName},
		NotBefore:             now.Add(-time.Minute),
		NotAfter:              now.Add(certValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	return sign(tmpl, key, tmpl, key)
}

// issue signs a leaf certificate for req with the CA.
func (ca *keyPair) issue(req certRequest) (*keyPair, error) {
	key, err := newKey()
	if err != nil {
		return nil, err
	}
	serial, err := serialNumber()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	usage := []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	if req.Server {
		usage = append(usage, x509.ExtKeyUsageServerAuth)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: req.CommonName, Organization: req.Organization},
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     now.Add(certValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  usage,
		DNSNames:     req.DNSNames,
		IPAddresses:  req.IPs,
	}
	return sign(tmpl, key, ca.cert, ca.key)
}

func sign(tmpl *x509.Certificate, key *ecdsa.PrivateKey, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*keyPair, error) {
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	keyPEM, err := encodeKey(key)
	if err != nil {
		return nil, err
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	return &keyPair{CertPEM: certPEM, KeyPEM: keyPEM, cert: cert, key: key}, nil
}

// write stores the pair as <dir>/<name>.crt and <dir>/<name>.key.
func (kp *keyPair) write(dir, name string) error {
	if err := os.WriteFile(filepath.Join(dir, name+".crt"), kp.CertPEM, 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, name+".key"), kp.KeyPEM, 0o600)
}

// pki is every credential the local cluster uses.
type pki struct {
	Dir     string
	CA      *keyPair
	Clients map[string]*keyPair // by certRequest.Name
}

// generatePKI writes a fresh CA, the leaf certificates and a service-account signing key.
func generatePKI(dir string, reqs []certRequest) (*pki, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	ca, err := newCA("quintet-local-ca")
	if err != nil {
		return nil, err
	}
	if err := ca.write(dir, "ca"); err != nil {
		return nil, err
	}
	p := &pki{Dir: dir, CA: ca, Clients: map[string]*keyPair{}}
	for _, req := range reqs {
		kp, err := ca.issue(req)
		if err != nil {
			return nil, fmt.Errorf("issuing %s: %w", req.Name, err)
		}
		if err := kp.write(dir, req.Name); err != nil {
			return nil, err
		}
		p.Clients[req.Name] = kp
	}
	return p, writeServiceAccountKey(dir)
}

// writeServiceAccountKey writes sa.key (signing) and sa.pub (verification).
func writeServiceAccountKey(dir string) error {
	key, err := newKey()
	if err != nil {
		return err
	}
	keyPEM, err := encodeKey(key)
	if err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "sa.key"), keyPEM, 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "sa.pub"), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o600)
}

// loadAdmin reads the CA and admin credentials written by a previous up.
func loadAdmin(dir string) (*pki, error) {
	read := func(name string) (*keyPair, error) {
		certPEM, err := os.ReadFile(filepath.Join(dir, name+".crt"))
		if err != nil {
			return nil, err
		}
		keyPEM, err := os.ReadFile(filepath.Join(dir, name+".key"))
		if err != nil {
			return nil, err
		}
		return &keyPair{CertPEM: certPEM, KeyPEM: keyPEM}, nil
	}
	ca, err := read("ca")
	if err != nil {
		return nil, err
	}
	admin, err := read("admin")
	if err != nil {
		return nil, err
	}
	return &pki{Dir: dir, CA: ca, Clients: map[string]*keyPair{"admin": admin}}, nil
}

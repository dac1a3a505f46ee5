package etcdcluster

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
)

func TestCertificatesAskCertManagerForTheMembersNamesAndLabelTheirSecrets(t *testing.T) {
	g := NewWithT(t)
	c := &v1beta2.EtcdCluster{}
	c.Name, c.Namespace = "e", "ns"
	c.Spec.TLS = &v1beta2.TLSPolicy{CertManager: &v1beta2.CertManagerTLS{IssuerRef: v1beta2.IssuerReference{Name: "ca"}}}

	field := func(u *unstructured.Unstructured, path ...string) any {
		v, found, err := unstructured.NestedFieldNoCopy(u.Object, path...)
		g.Expect(err).NotTo(HaveOccurred())
		if !found {
			return nil
		}
		return v
	}
	peer := peerCertificate.certificate(c)
	g.Expect(peer.GetName()).To(Equal("e-peer"))
	g.Expect(field(peer, "spec", "secretName")).To(Equal("e-peer-tls"))
	g.Expect(field(peer, "spec", "issuerRef")).To(Equal(map[string]any{"name": "ca", "kind": "Issuer", "group": "cert-manager.io"}))
	g.Expect(field(peer, "spec", "dnsNames")).To(ContainElements("*.e.ns.svc", "e-client.ns.svc"))
	g.Expect(field(peer, "spec", "usages")).To(ContainElements("server auth", "client auth"))
	g.Expect(field(peer, "spec", "secretTemplate", "labels")).To(HaveKeyWithValue(v1beta2.ClusterLabel, "e"))

	operator := operatorCertificate.certificate(c)
	g.Expect(field(operator, "spec", "commonName")).To(Equal("quintet-etcd-cluster-operator"))
	g.Expect(field(operator, "spec", "dnsNames")).To(BeNil(), "a client certificate names no host")
	g.Expect(field(operator, "spec", "usages")).NotTo(ContainElement("server auth"))
}

func TestMaterialOfIssuedCrossesTheCAsAndNamesWhatIsMissing(t *testing.T) {
	g := NewWithT(t)
	secret := func(name string) map[string][]byte {
		return map[string][]byte{"tls.crt": []byte(name + " crt"), "tls.key": []byte(name + " key"), "ca.crt": []byte(name + " ca")}
	}
	m, err := materialOfIssued(secret("peer"), secret("server"), secret("operator"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(m.Peer.CA)).To(Equal("peer ca"))
	g.Expect(string(m.Server.CA)).To(Equal("operator ca"), "members trust the CA of the operator's client certificate")
	g.Expect(string(m.Client.CA)).To(Equal("server ca"), "the operator trusts the CA of the members' server certificate")

	noCA := secret("server")
	delete(noCA, "ca.crt")
	_, err = materialOfIssued(secret("peer"), noCA, secret("operator"))
	g.Expect(err).To(MatchError(ContainSubstring("cert-manager's operator Secret has no tls.key or ca.crt")))
}

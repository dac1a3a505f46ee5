package v1beta2

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// TLSPolicy turns on TLS for a cluster: between members (mutual), for clients, and for the
// operator's own client, with certificates from one source. With TLS on, no member listens
// for peers or clients in plain text.
// +kubebuilder:validation:XValidation:rule="(has(self.static) ? 1 : 0) + (has(self.certManager) ? 1 : 0) + (has(self.operatorManaged) ? 1 : 0) == 1",message="TLS needs exactly one source of certificates: static (your Secrets), certManager (an Issuer or ClusterIssuer) or operatorManaged (the operator's own CA)"
type TLSPolicy struct {
	// static: certificates from Secrets you make and renew, laid out as the CoreOS etcd
	// operator's (spec.TLS.static), so its manifests work unchanged.
	// +optional
	Static *StaticTLS `json:"static,omitempty"`

	// certManager: cert-manager issues the certificates from an Issuer or ClusterIssuer, and
	// renews them; the operator makes the Certificate objects (<name>-peer, <name>-server,
	// <name>-operator, and <name>-client for applications).
	// +optional
	CertManager *CertManagerTLS `json:"certManager,omitempty"`

	// operatorManaged: the operator makes a CA for the cluster (Secret <name>-ca) and the
	// certificates it signs, and renews them before they expire. Applications get a client
	// certificate in the Secret status.tls.clientSecret names.
	// +optional
	OperatorManaged *OperatorManagedTLS `json:"operatorManaged,omitempty"`

	// requireClientCertificates: clients must present a certificate the cluster's CA signed
	// (etcd's --client-cert-auth). True unless set to false; the operator's client always
	// presents one.
	// +kubebuilder:default=true
	// +optional
	RequireClientCertificates *bool `json:"requireClientCertificates,omitempty"`
}

// StaticTLS names the Secrets of a cluster's certificates, as the CoreOS etcd operator did.
type StaticTLS struct {
	// member: the members' peer and server certificates.
	// +required
	Member *MemberSecret `json:"member"`

	// operatorSecret holds the operator's client certificate: etcd-client.crt,
	// etcd-client.key, and etcd-client-ca.crt, the CA that signed the server certificate.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	OperatorSecret string `json:"operatorSecret"`
}

// MemberSecret names a member's Secrets.
type MemberSecret struct {
	// peerSecret holds peer.crt, peer.key and peer-ca.crt: each member's certificate for
	// the other members, both as server and as client, and the CA that signed it. It must
	// cover *.<cluster>.<namespace>.svc.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	PeerSecret string `json:"peerSecret"`

	// serverSecret holds server.crt, server.key and server-ca.crt: each member's certificate
	// for clients, and the CA whose client certificates members accept. It must cover
	// *.<cluster>.<namespace>.svc and should cover the client Service, <cluster>-client.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	ServerSecret string `json:"serverSecret"`
}

// CertManagerTLS names the cert-manager issuer of a cluster's certificates.
type CertManagerTLS struct {
	// issuerRef: the Issuer (in the cluster's namespace) or ClusterIssuer that signs every
	// certificate of the cluster. A ClusterIssuer must be one the operator lists
	// (--cluster-issuers), else the cluster says IssuerNotAllowed. Members, the operator and applications trust its CA
	// (the ca.crt cert-manager writes), so use a CA issuer: with SelfSigned, every
	// certificate would be its own CA.
	// +required
	IssuerRef IssuerReference `json:"issuerRef"`
}

// IssuerReference names a cert-manager Issuer or ClusterIssuer (cert-manager's issuerRef).
type IssuerReference struct {
	// name of the Issuer or ClusterIssuer.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`
	// kind: Issuer (default) or ClusterIssuer.
	// +kubebuilder:validation:Enum=Issuer;ClusterIssuer
	// +kubebuilder:default=Issuer
	// +optional
	Kind string `json:"kind,omitempty"`
}

// OperatorManagedTLS shapes the certificates the operator makes.
type OperatorManagedTLS struct {
	// certificateLifetime of the members', the operator's and the applications'
	// certificates; each is renewed when a third of it is left, and members restart onto the
	// renewed ones one at a time.
	// +kubebuilder:default="2160h"
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1h')",message="certificateLifetime must be at least 1h"
	// +optional
	CertificateLifetime *metav1.Duration `json:"certificateLifetime,omitempty"`
}

// TLSStatus is what a cluster's TLS runs with.
type TLSStatus struct {
	// secret is the operator's checked copy of the certificates the members mount, named by
	// their hash: a new certificate is a new Secret, and members restart onto it one at a time.
	// +optional
	Secret string `json:"secret,omitempty"`
	// clientSecret holds a client certificate for applications: etcd-client.crt,
	// etcd-client.key and etcd-client-ca.crt with operatorManaged certificates; tls.crt,
	// tls.key and ca.crt (cert-manager's layout) with certManager.
	// +optional
	ClientSecret string `json:"clientSecret,omitempty"`
	// notAfter is when the first of the certificates in use expires.
	// +optional
	NotAfter *metav1.Time `json:"notAfter,omitempty"`
	// certificates in use and when each expires.
	// +listType=map
	// +listMapKey=name
	// +optional
	Certificates []CertificateStatus `json:"certificates,omitempty"`
}

// CertificateStatus is one certificate in use.
type CertificateStatus struct {
	// name of the certificate: peer, server, operator or client.
	// +required
	Name string `json:"name"`
	// notAfter is when it expires.
	// +required
	NotAfter metav1.Time `json:"notAfter"`
}

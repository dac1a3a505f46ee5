package v1beta2

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// TLSPolicy turns on TLS for a cluster: between members (mutual), for clients, and for the
// operator's own client, with certificates from one source. With TLS on, no member listens
// for peers or clients in plain text.
// +kubebuilder:validation:XValidation:rule="(has(self.static) ? 1 : 0) + (has(self.operatorManaged) ? 1 : 0) == 1",message="TLS needs exactly one source of certificates: static (your Secrets) or operatorManaged (the operator's own CA)"
type TLSPolicy struct {
	// static: certificates from Secrets you make and renew, laid out as the CoreOS etcd
	// operator's (spec.TLS.static), so its manifests work unchanged.
	// +optional
	Static *StaticTLS `json:"static,omitempty"`

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
	// clientSecret holds a client certificate for applications (etcd-client.crt,
	// etcd-client.key, etcd-client-ca.crt), with operatorManaged certificates.
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

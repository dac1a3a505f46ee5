package main

import (
	"fmt"
	"net"
	"path/filepath"
)

// The control plane: etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok,
// their identities and their command lines.

// The components, by the name of their binary.
const (
	etcdName              = "etcd"
	apiServerName         = "kube-apiserver"
	controllerManagerName = "kube-controller-manager"
	schedulerName         = "kube-scheduler"
	kwokName              = "kwok"
	noProfiling           = "--profiling=false"
	mastersGroup          = "system:masters"
)

// componentNames in start order; down stops them in reverse.
var componentNames = []string{etcdName, apiServerName, controllerManagerName, schedulerName, kwokName}

// certRequests are the identities of the local cluster.
func (l *layout) certRequests() []certRequest {
	reqs := []certRequest{
		{Name: "apiserver", CommonName: "kube-apiserver", Server: true,
			DNSNames: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
			IPs:      []net.IP{net.ParseIP(host), net.ParseIP(hostIP), net.ParseIP("10.96.0.1")}},
		{Name: "admin", CommonName: "quintet-admin", Organization: []string{mastersGroup}},
		{Name: controllerManagerName, CommonName: "system:" + controllerManagerName},
		{Name: schedulerName, CommonName: "system:" + schedulerName},
		// kwok plays the kubelet of many nodes at once, which the Node authorizer cannot
		// express for a single identity.
		{Name: kwokName, CommonName: kwokName, Organization: []string{mastersGroup}},
	}
	if len(l.RealNodes) > 0 {
		reqs = append(reqs, hostServiceCertRequests()...)
	}
	for _, n := range l.RealNodes {
		reqs = append(reqs, n.certRequests()...)
	}
	return reqs
}

// processes returns the command line of every component.
func (l *layout) processes() []process {
	bin := func(name string) string { return filepath.Join(l.Bin, name) }
	pki := func(name string) string { return filepath.Join(l.PKI, name) }
	kubeconfig := func(name string) string { return filepath.Join(l.PKI, name+".kubeconfig") }
	etcdURL := fmt.Sprintf("http://%s:%d", host, etcdClientPort)
	peerURL := fmt.Sprintf("http://%s:%d", host, etcdPeerPort)
	var kubeletClient []string // how the API server reaches the real nodes' kubelets (logs, exec)
	if len(l.RealNodes) > 0 {
		kubeletClient = []string{
			"--kubelet-client-certificate=" + pki("apiserver-kubelet-client.crt"),
			"--kubelet-client-key=" + pki("apiserver-kubelet-client.key"),
			"--kubelet-certificate-authority=" + pki("ca.crt"),
			"--kubelet-preferred-address-types=InternalIP",
		}
	}
	return []process{
		{Name: etcdName, Exe: bin(etcdName), Args: []string{
			"--name=quintet-local", "--data-dir=" + l.EtcdData,
			"--listen-client-urls=" + etcdURL, "--advertise-client-urls=" + etcdURL,
			"--listen-peer-urls=" + peerURL, "--initial-advertise-peer-urls=" + peerURL,
			"--initial-cluster=quintet-local=" + peerURL,
			"--unsafe-no-fsync", "--log-level=warn",
		}},
		{Name: apiServerName, Exe: bin(apiServerName), Args: append([]string{
			"--etcd-servers=" + etcdURL,
			"--bind-address=" + l.apiHost(), "--advertise-address=" + l.apiHost(), fmt.Sprintf("--secure-port=%d", apiServerPort),
			"--cert-dir=" + filepath.Join(l.PKI, "apiserver-selfsigned"),
			"--tls-cert-file=" + pki("apiserver.crt"), "--tls-private-key-file=" + pki("apiserver.key"),
			"--client-ca-file=" + pki("ca.crt"),
			"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
			"--service-account-key-file=" + pki("sa.pub"), "--service-account-signing-key-file=" + pki("sa.key"),
			"--service-cluster-ip-range=" + serviceCIDR,
			"--authorization-mode=Node,RBAC",
			// PodNodeSelector and PodTolerationRestriction read namespace annotations, so a
			// namespace can place all its pods (also those OLM creates) on the real nodes.
			"--enable-admission-plugins=NodeRestriction,PodSecurity,PodNodeSelector,PodTolerationRestriction",
			noProfiling,
		}, kubeletClient...)},
		{Name: controllerManagerName, Exe: bin(controllerManagerName), Args: []string{
			"--kubeconfig=" + kubeconfig(controllerManagerName),
			"--authentication-kubeconfig=" + kubeconfig(controllerManagerName),
			"--authorization-kubeconfig=" + kubeconfig(controllerManagerName),
			"--bind-address=" + host, "--cert-dir=" + filepath.Join(l.PKI, "kcm-selfsigned"),
			"--service-account-private-key-file=" + pki("sa.key"), "--root-ca-file=" + pki("ca.crt"),
			"--use-service-account-credentials=true",
			"--cluster-signing-cert-file=" + pki("ca.crt"), "--cluster-signing-key-file=" + pki("ca.key"),
			"--service-cluster-ip-range=" + serviceCIDR,
			"--leader-elect=false", noProfiling,
		}},
		{Name: schedulerName, Exe: bin(schedulerName), Args: []string{
			"--kubeconfig=" + kubeconfig(schedulerName),
			"--authentication-kubeconfig=" + kubeconfig(schedulerName),
			"--authorization-kubeconfig=" + kubeconfig(schedulerName),
			"--bind-address=" + host, "--cert-dir=" + filepath.Join(l.PKI, "scheduler-selfsigned"),
			"--leader-elect=false", noProfiling,
		}},
		{Name: kwokName, Exe: bin(kwokName), Args: []string{
			"--kubeconfig=" + kubeconfig(kwokName),
			"--config=" + l.kwokStages(),
			"--manage-all-nodes=false",
			"--manage-nodes-with-annotation-selector=" + kwokAnnotation + "=fake",
			"--cidr=" + kwokPodCIDR, "--node-ip=" + host,
			// Renew each node's Lease, as a kubelet does; without it the node lifecycle
			// controller declares the nodes dead after its grace period and marks every pod
			// NotReady, over and over.
			"--node-lease-duration-seconds=40",
			fmt.Sprintf("--server-address=%s:%d", host, kwokServerPort),
		}},
	}
}

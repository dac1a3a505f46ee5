package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// containerdConfig keeps containerd's root, state, socket, runc state and pod network
// namespaces under the node folder. restrict_oom_score_adj: root in this VM lacks
// CAP_SYS_RESOURCE, and without it every sandbox fails in runc create.
const containerdConfig = `version = 2
root = %[1]q
state = %[2]q
disabled_plugins = [
  "io.containerd.internal.v1.opt", "io.containerd.tracing.processor.v1.otlp",
  "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs",
]

[grpc]
  address = %[3]q

[ttrpc]
  address = ""

[debug]
  address = ""

[metrics]
  address = ""

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %[4]q
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = %[5]q
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = %[6]q
    max_conf_num = 1
`

// containerdRegistryCA makes containerd reach one registry (host:port) over HTTPS, trusting a
// CA (file). The endpoint is explicit: containerd would otherwise speak plain HTTP to loopback.
const containerdRegistryCA = `  [plugins."io.containerd.grpc.v1.cri".registry.mirrors.%[1]q]
    endpoint = ["https://%[1]s"]
  [plugins."io.containerd.grpc.v1.cri".registry.configs.%[1]q.tls]
    ca_file = %[2]q
`

// cniConfig puts pods on the bridge with addresses from host-local. ipMasq is off: nothing
// from a pod is ever rewritten to leave the machine (and the guard drops it anyway).
const cniConfig = `{
  "cniVersion": "1.0.0",
  "name": "quintet",
  "plugins": [
    {
      "type": "bridge",
      "bridge": %[1]q,
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": %[2]q,
        "ranges": [[{"subnet": %[3]q, "rangeStart": %[4]q, "gateway": %[5]q}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    }
  ]
}
`

// kubeletConfig: each node's kubelet listens on its node's address (so every node has the same
// ports), cgroup v1 with cgroupfs (failCgroupV1: false, or v1.36 refuses to start),
// no iptables chains, no read-only port, pod logs under the node folder, image garbage
// collection off (our images cannot be pulled again), eviction only when really out of space,
// and no re-verification of pull credentials: every image here is loaded from the project's
// builds or pulled without a secret from its loopback registry, so there is nothing to guard,
// and with the default policy a preloaded image's name stops working with pull policy Never
// once the kubelet pulls the same image under another name (the registry's TLS address).
const kubeletConfig = `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: %[1]s
port: 10250
readOnlyPort: 0
healthzBindAddress: %[1]s
healthzPort: 10248
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: %[2]s
authorization:
  mode: Webhook
tlsCertFile: %[3]s
tlsPrivateKeyFile: %[4]s
containerRuntimeEndpoint: unix://%[5]s
cgroupDriver: cgroupfs
cgroupRoot: /%[6]s
failCgroupV1: false
failSwapOn: false
makeIPTablesUtilChains: false
clusterDNS: [%[9]s]
clusterDomain: %[7]s
resolvConf: ""
podLogsDir: %[8]s
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: 100Mi
  nodefs.available: 1%%
  nodefs.inodesFree: 1%%
  imagefs.available: 1%%
imagePullCredentialsVerificationPolicy: NeverVerify
serializeImagePulls: false
maxPods: 110
`

// kubeProxyConfig: one kube-proxy, in nftables mode on the host address, programs Services for
// every real node (they share the host's kernel). masqueradeAll, because without br_netfilter a
// Service reply between two pods on one bridge would skip conntrack; the masquerade address is
// the outgoing bridge's own. hostnameOverride names the first real node: kube-proxy reads
// its Node, and the first one is where Services' node-local endpoints are. Conntrack sysctls
// are left as they are.
const kubeProxyConfig = `apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: nftables
bindAddress: %[1]s
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
hostnameOverride: %[2]s
clusterCIDR: %[3]s
nodePortAddresses: [%[3]s]
clientConnection:
  kubeconfig: %[4]s
nftables:
  masqueradeAll: true
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
`

// corefile serves the cluster domain (and reverse lookups) on the host address only. There
// is no forward plugin: names outside the cluster are refused, never resolved upstream.
const corefile = `.:53 {
    bind %[1]s
    errors
    kubernetes %[2]s in-addr.arpa ip6.arpa {
        kubeconfig %[3]s quintet-local
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    cache 5
}
`

// writeHostServiceConfigs writes the configuration of what the real nodes share: kube-proxy,
// CoreDNS and the resolv.conf of host processes that use the cluster's DNS.
func (l *layout) writeHostServiceConfigs() error {
	pki := func(name string) string { return filepath.Join(l.PKI, name) }
	return writeFiles(map[string]string{
		l.nodeDir("kube-proxy.yaml"): fmt.Sprintf(kubeProxyConfig,
			hostIP, realNodes(1)[0].Name(), podNetwork, pki(kubeProxyName+".kubeconfig")),
		l.nodeDir("Corefile"): fmt.Sprintf(corefile, hostIP, clusterDomain, pki(corednsName+".kubeconfig")),
		l.hostResolvConf():    fmt.Sprintf("nameserver %s\nsearch %s\noptions ndots:5\n", hostIP, clusterDomain),
	})
}

// writeNodeConfigs writes every configuration file of a real node.
func (l *layout) writeNodeConfigs(n realNode) error {
	for _, dir := range []string{l.realNodeDir(n, "cni", "net.d"), l.realNodeDir(n, "kubelet", "pki"), l.realNodeDir(n, "pod-logs")} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	pki := func(name string) string { return filepath.Join(l.PKI, name) }
	containerd := fmt.Sprintf(containerdConfig,
		l.realNodeDir(n, "containerd", "root"), l.realNodeDir(n, "containerd", "state"), l.containerdSocket(n),
		l.PauseImage, l.realNodeDir(n, "containerd", "runc"), l.realNodeDir(n, "cni", "net.d"))
	if host, ca, ok := strings.Cut(l.RegistryCA, "="); ok {
		containerd += fmt.Sprintf(containerdRegistryCA, host, ca)
	}
	return writeFiles(map[string]string{
		l.realNodeDir(n, "containerd.toml"): containerd,
		l.realNodeDir(n, "cni", "net.d", "10-quintet.conflist"): fmt.Sprintf(cniConfig,
			n.Bridge(), l.realNodeDir(n, "cni", "ipam"), n.Subnet(), podRangeStart(n), n.IP()),
		l.realNodeDir(n, "kubelet.yaml"): fmt.Sprintf(kubeletConfig,
			n.IP(), pki("ca.crt"), pki(n.kubelet()+"-serving.crt"), pki(n.kubelet()+"-serving.key"),
			l.containerdSocket(n), n.CgroupParent(), clusterDomain, l.realNodeDir(n, "pod-logs"), hostIP),
	})
}

// podRangeStart is a node's first pod address.
func podRangeStart(n realNode) string { return strings.TrimSuffix(n.IP(), ".1") + ".10" }

func writeFiles(files map[string]string) error {
	for path, content := range files {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

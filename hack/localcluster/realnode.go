package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// The real node: containerd + runc + a kubelet built from source, pods on a bridge of their
// own, kube-proxy for Services and CoreDNS for names, all on one host address (the bridge's)
// that pods can reach and nothing outside the machine can route to.
const (
	realNodeName  = "quintet-node"
	bridgeName    = "quintet0"
	bridgeIP      = "10.244.77.1"
	podSubnet     = "10.244.77.0/24"
	podRangeStart = "10.244.77.10"
	clusterDomain = "cluster.local"
	// realNodeLabel (with value "true") and a NoSchedule taint of the same key keep pods off
	// the real node unless they select and tolerate it: third-party images cannot exist here.
	realNodeLabel = "quintet.dev/real-node"
	// cgroupParent holds every pod's cgroup, so teardown knows exactly what it created.
	cgroupParent = "quintet"
)

// Real-node modes, from REAL_NODE.
const (
	realNodeAuto     = "auto"     // start it when this machine can, say why not otherwise
	realNodeRequired = "required" // fail when it cannot start (CI)
	realNodeOff      = "off"      // kwok nodes only
)

// The real node's components, by the name of their binary.
const (
	containerdName = "containerd"
	kubeletName    = "kubelet"
	kubeProxyName  = "kube-proxy"
	corednsName    = "coredns"
)

// nodeComponentNames in start order; down stops them in reverse.
var nodeComponentNames = []string{containerdName, corednsName, kubeProxyName, kubeletName}

// nodePackages are the Debian packages the real node runs on, with a file each provides.
var nodePackages = map[string]string{
	"containerd":                  "/usr/bin/containerd",
	"runc":                        "/usr/sbin/runc",
	"containernetworking-plugins": "/usr/lib/cni/bridge",
	"nftables":                    "/usr/sbin/nft",
	"iproute2":                    "/usr/sbin/ip",
	// The shell, cat and gzip of the images operator-sdk's registry pods run (see make images).
	"busybox-static": "/bin/busybox",
	// Not the node's: the headless browser e2e drives the REST API's Swagger UI page with.
	"chromium": "/usr/bin/chromium",
}

// hostResolvConf is a resolv.conf naming the cluster's DNS, for host processes that reach
// Services by name (see startExtra).
func (l *layout) hostResolvConf() string { return l.nodeDir("host-resolv.conf") }

// nodeDir is where the real node keeps its configuration and state.
func (l *layout) nodeDir(parts ...string) string {
	return filepath.Join(append([]string{l.Root, "node"}, parts...)...)
}

func (l *layout) containerdSocket() string { return l.nodeDir("containerd", "containerd.sock") }

// realNodeMarker exists while the cluster runs with a real node.
func (l *layout) realNodeMarker() string { return l.nodeDir("enabled") }

// realNodePreflight reports why this machine cannot run the real node, installing missing
// Debian packages first when it is allowed to.
func (l *layout) realNodePreflight(ctx context.Context) error {
	if os.Geteuid() != 0 {
		return errors.New("it needs root (network bridge, nftables, mounts, cgroups)")
	}
	for _, exe := range []string{kubeletName, kubeProxyName, "crictl"} {
		if _, err := os.Stat(filepath.Join(l.Bin, exe)); err != nil {
			return fmt.Errorf("%s is missing in %s: run `make tools`", exe, l.Bin)
		}
	}
	if _, err := os.Stat(l.CoreDNS); err != nil {
		return fmt.Errorf("CoreDNS is missing (%s): run `make tools`", l.CoreDNS)
	}
	if tars, _ := filepath.Glob(filepath.Join(l.Images, "pause-*.tar")); len(tars) == 0 {
		return fmt.Errorf("no pause image in %s: run `make images`", l.Images)
	}
	return installNodePackages(ctx)
}

// installNodePackages installs the Debian packages of nodePackages that are missing (as root).
func installNodePackages(ctx context.Context) error {
	var missing []string
	for pkg, file := range nodePackages {
		if _, err := os.Stat(file); err != nil {
			missing = append(missing, pkg)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	fmt.Printf("Installing Debian packages for the real node: %s\n", strings.Join(missing, " "))
	cmd := exec.CommandContext(ctx, "apt-get", append([]string{"install", "-y", "--no-install-recommends"}, missing...)...)
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("installing %s failed: %w\n%s", strings.Join(missing, " "), err, lastLines(string(out), 10))
	}
	return nil
}

// nodeCertRequests are the real node's identities: the kubelet as a node (Node authorizer,
// NodeRestriction), its serving certificate, the API server's client to kubelets, kube-proxy
// (bound to system:node-proxier by default) and CoreDNS (bound in ensureCoreDNSAccess).
func nodeCertRequests() []certRequest {
	return []certRequest{
		{Name: kubeletName, CommonName: "system:node:" + realNodeName, Organization: []string{"system:nodes"}},
		{Name: "kubelet-serving", CommonName: realNodeName, Server: true,
			DNSNames: []string{realNodeName}, IPs: []net.IP{net.ParseIP(bridgeIP)}},
		{Name: "apiserver-kubelet-client", CommonName: "kube-apiserver-kubelet-client", Organization: []string{mastersGroup}},
		{Name: kubeProxyName, CommonName: "system:" + kubeProxyName},
		{Name: corednsName, CommonName: "system:quintet-coredns"},
	}
}

// nodeProcesses are the real node's components with their command lines.
func (l *layout) nodeProcesses() []process {
	kubeconfig := func(name string) string { return filepath.Join(l.PKI, name+".kubeconfig") }
	return []process{
		{Name: containerdName, Exe: "/usr/bin/containerd", Args: []string{"--config=" + l.nodeDir("containerd.toml")}},
		{Name: corednsName, Exe: l.CoreDNS, Args: []string{"-conf=" + l.nodeDir("Corefile")}},
		{Name: kubeProxyName, Exe: filepath.Join(l.Bin, kubeProxyName), Args: []string{"--config=" + l.nodeDir("kube-proxy.yaml")}},
		{Name: kubeletName, Exe: filepath.Join(l.Bin, kubeletName), Args: []string{
			"--config=" + l.nodeDir("kubelet.yaml"),
			"--kubeconfig=" + kubeconfig(kubeletName),
			"--root-dir=" + l.nodeDir("kubelet"),
			"--cert-dir=" + l.nodeDir("kubelet", "pki"),
			"--hostname-override=" + realNodeName,
			"--node-ip=" + bridgeIP,
			"--node-labels=" + realNodeLabel + "=true,quintet.dev/node=real",
			"--register-with-taints=" + realNodeLabel + "=true:NoSchedule",
		}},
	}
}

// startRealNode brings the node up on a running control plane and host network (see
// setUpHostNetwork): containerd with our images, DNS, kube-proxy and the kubelet, and waits
// for the Node to turn Ready.
func (l *layout) startRealNode(ctx context.Context, p *pki, api *apiClient) error {
	if err := l.createPodCgroups(); err != nil {
		return err
	}
	for _, name := range []string{kubeletName, kubeProxyName, corednsName} {
		if err := writeKubeconfig(filepath.Join(l.PKI, name+".kubeconfig"), l.server(), p.CA, p.Clients[name], name); err != nil {
			return err
		}
	}
	if err := l.writeNodeConfigs(); err != nil {
		return err
	}
	if err := ensureCoreDNSAccess(ctx, api); err != nil {
		return err
	}
	procs := l.nodeProcesses()
	if err := l.start(procs[0]); err != nil {
		return err
	}
	if err := l.waitSocket(ctx, containerdName, l.containerdSocket()); err != nil {
		return err
	}
	if err := l.loadImages(ctx); err != nil {
		return err
	}
	for _, proc := range procs[1:] {
		if err := l.start(proc); err != nil {
			return err
		}
	}
	return poll(ctx, 90*time.Second, "the real node to become Ready", func(ctx context.Context) (bool, string, error) {
		for _, name := range nodeComponentNames {
			if _, alive := l.running(name); !alive {
				return false, "", l.exited(name)
			}
		}
		ready, err := api.readyNodes(ctx, realNodeLabel+"%3Dtrue")
		if err != nil {
			return false, err.Error(), nil
		}
		return len(ready) == 1, "the node is not Ready yet", nil
	})
}

// loadImages imports every image tarball `make images` wrote into the node's containerd.
func (l *layout) loadImages(ctx context.Context) error {
	tars, err := filepath.Glob(filepath.Join(l.Images, "*.tar"))
	if err != nil {
		return err
	}
	for _, tar := range tars {
		cmd := exec.CommandContext(ctx, "ctr", "--address", l.containerdSocket(), "--namespace", "k8s.io", "images", "import", tar)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("importing %s: %w\n%s", tar, err, out)
		}
	}
	fmt.Printf("Loaded %d images into the real node's containerd.\n", len(tars))
	return nil
}

// waitSocket waits for a process to listen on a unix socket.
func (l *layout) waitSocket(ctx context.Context, name, path string) error {
	return poll(ctx, 30*time.Second, name+" to listen on "+path, func(context.Context) (bool, string, error) {
		if _, alive := l.running(name); !alive {
			return false, "", l.exited(name)
		}
		conn, err := net.Dial("unix", path)
		if err != nil {
			return false, err.Error(), nil
		}
		return true, "", conn.Close()
	})
}

// coreDNSAccess lets CoreDNS's identity read what its kubernetes plugin watches.
var coreDNSAccess = map[string]string{
	"/apis/rbac.authorization.k8s.io/v1/clusterroles": `{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
  "metadata": {"name": "quintet:coredns"},
  "rules": [
    {"apiGroups": [""], "resources": ["services", "pods", "namespaces"], "verbs": ["list", "watch"]},
    {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": ["list", "watch"]}]}`,
	"/apis/rbac.authorization.k8s.io/v1/clusterrolebindings": `{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
  "metadata": {"name": "quintet:coredns"},
  "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "quintet:coredns"},
  "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "system:quintet-coredns"}]}`,
}

func ensureCoreDNSAccess(ctx context.Context, api *apiClient) error {
	for path, obj := range coreDNSAccess {
		if code, err := api.do(ctx, http.MethodPost, path, json.RawMessage(obj), nil); err != nil && code != http.StatusConflict {
			return fmt.Errorf("granting CoreDNS read access: %w", err)
		}
	}
	return nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The real nodes: each runs containerd + runc + a kubelet built from source, with its pods on a
// bridge and subnet of its own. Pods of one node reach pods of another through the host's
// routes between the bridges; the API server, CoreDNS and kube-proxy (one of each for all the
// nodes: they share the host's kernel) listen on hostIP, an address on the host's loopback
// that pods reach through their gateway and nothing outside the machine can route to.
const (
	realNodePrefix = "quintet-node-"
	maxRealNodes   = 9
	hostIP         = "10.244.76.1"
	// podNetwork holds every real node's pod subnet (10.244.77.0/24 for node 1, ...).
	podNetwork    = "10.244.64.0/18"
	clusterDomain = "cluster.local"
	// realNodeLabel (with value "true") and a NoSchedule taint of the same key keep pods off
	// the real nodes unless they select and tolerate them: third-party images cannot exist here.
	realNodeLabel = "quintet.dev/real-node"
	// cgroupParent holds every real node's pod cgroups, so teardown knows exactly what it made.
	cgroupParent = "quintet"
)

// Real-node modes, from REAL_NODE.
const (
	realNodeAuto     = "auto"     // start them when this machine can, say why not otherwise
	realNodeRequired = "required" // fail when they cannot start (CI)
	realNodeOff      = "off"      // kwok nodes only
)

// The real nodes' components, by the name of their binary. containerd and the kubelet run
// once per node (their process is named after the node); CoreDNS and kube-proxy once.
const (
	containerdName = "containerd"
	kubeletName    = "kubelet"
	kubeProxyName  = "kube-proxy"
	corednsName    = "coredns"
)

// hostServiceNames in start order; down stops them in reverse.
var hostServiceNames = []string{corednsName, kubeProxyName}

// realNode is one real node of the local cluster, numbered from 1.
type realNode struct{ Index int }

func (n realNode) Name() string   { return realNodePrefix + strconv.Itoa(n.Index) }
func (n realNode) Bridge() string { return "quintet" + strconv.Itoa(n.Index) }

// IP is the node's address: its bridge's, the pods' gateway, where its kubelet listens.
func (n realNode) IP() string     { return fmt.Sprintf("10.244.%d.1", 76+n.Index) }
func (n realNode) Subnet() string { return fmt.Sprintf("10.244.%d.0/24", 76+n.Index) }

// CgroupParent is the kubelet's cgroup root, below the one every real node shares.
func (n realNode) CgroupParent() string { return cgroupParent + "/" + n.Name() }

// Process names of the node's containerd and kubelet.
func (n realNode) containerd() string { return containerdName + "-" + n.Name() }
func (n realNode) kubelet() string    { return kubeletName + "-" + n.Name() }

// realNodes numbers count real nodes.
func realNodes(count int) []realNode {
	nodes := make([]realNode, count)
	for i := range nodes {
		nodes[i] = realNode{Index: i + 1}
	}
	return nodes
}

// realNodeNamed finds one of the cluster's real nodes by name.
func (l *layout) realNodeNamed(name string) (realNode, error) {
	for _, n := range l.RealNodes {
		if n.Name() == name {
			return n, nil
		}
	}
	names := make([]string, 0, len(l.RealNodes))
	for _, n := range l.RealNodes {
		names = append(names, n.Name())
	}
	if len(names) == 0 {
		return realNode{}, fmt.Errorf("%q is not a real node: the local cluster in %s runs no real node", name, l.Root)
	}
	return realNode{}, fmt.Errorf("%q is not a real node of the local cluster in %s: its real nodes are %s",
		name, l.Root, strings.Join(names, ", "))
}

// nodePackages are the Debian packages the real nodes run on, with a file each provides.
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

// nodeDir is where the real nodes keep what they share (host services, markers).
func (l *layout) nodeDir(parts ...string) string {
	return filepath.Join(append([]string{l.Root, "node"}, parts...)...)
}

// realNodeDir is where one real node keeps its configuration and state: its disk.
func (l *layout) realNodeDir(n realNode, parts ...string) string {
	return l.nodeDir(append([]string{n.Name()}, parts...)...)
}

func (l *layout) containerdSocket(n realNode) string {
	return l.realNodeDir(n, "containerd", "containerd.sock")
}

// realNodePreflight reports why this machine cannot run real nodes, installing missing
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
	fmt.Printf("Installing Debian packages for the real nodes: %s\n", strings.Join(missing, " "))
	cmd := exec.CommandContext(ctx, "apt-get", append([]string{"install", "-y", "--no-install-recommends"}, missing...)...)
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("installing %s failed: %w\n%s", strings.Join(missing, " "), err, lastLines(string(out), 10))
	}
	return nil
}

// hostServiceCertRequests are the identities the real nodes share: the API server's client to
// kubelets, kube-proxy (bound to system:node-proxier by default) and CoreDNS (bound in
// ensureCoreDNSAccess).
func hostServiceCertRequests() []certRequest {
	return []certRequest{
		{Name: "apiserver-kubelet-client", CommonName: "kube-apiserver-kubelet-client", Organization: []string{mastersGroup}},
		{Name: kubeProxyName, CommonName: "system:" + kubeProxyName},
		{Name: corednsName, CommonName: "system:quintet-coredns"},
	}
}

// certRequests are a node's own identities: its kubelet as a node (Node authorizer,
// NodeRestriction) and the kubelet's serving certificate.
func (n realNode) certRequests() []certRequest {
	return []certRequest{
		{Name: n.kubelet(), CommonName: "system:node:" + n.Name(), Organization: []string{"system:nodes"}},
		{Name: n.kubelet() + "-serving", CommonName: n.Name(), Server: true,
			DNSNames: []string{n.Name()}, IPs: []net.IP{net.ParseIP(n.IP())}},
	}
}

// hostServiceProcesses are CoreDNS and kube-proxy with their command lines.
func (l *layout) hostServiceProcesses() []process {
	return []process{
		{Name: corednsName, Exe: l.CoreDNS, Args: []string{"-conf=" + l.nodeDir("Corefile")}},
		{Name: kubeProxyName, Exe: filepath.Join(l.Bin, kubeProxyName), Args: []string{"--config=" + l.nodeDir("kube-proxy.yaml")}},
	}
}

// nodeProcesses are a real node's containerd and kubelet with their command lines. The
// kubelet starts in a cgroup of its own (kubeletCgroup), so that node-isolate can cut its
// connections to the API server and no other process's.
func (l *layout) nodeProcesses(n realNode) (containerd, kubelet process) {
	containerd = process{Name: n.containerd(), Exe: "/usr/bin/containerd",
		Args: []string{"--config=" + l.realNodeDir(n, "containerd.toml")}}
	exe := filepath.Join(l.Bin, kubeletName)
	kubelet = process{Name: n.kubelet(), Exe: "/bin/sh", Runs: exe, Args: []string{"-c",
		`echo $$ > "$0" && exec "$@"`, filepath.Join(kubeletCgroupPath(n), "cgroup.procs"), exe,
		"--config=" + l.realNodeDir(n, "kubelet.yaml"),
		"--kubeconfig=" + filepath.Join(l.PKI, n.kubelet()+".kubeconfig"),
		"--root-dir=" + l.realNodeDir(n, "kubelet"),
		"--cert-dir=" + l.realNodeDir(n, "kubelet", "pki"),
		"--hostname-override=" + n.Name(),
		"--node-ip=" + n.IP(),
		"--node-labels=" + realNodeLabel + "=true,quintet.dev/node=real",
		"--register-with-taints=" + realNodeLabel + "=true:NoSchedule",
	}}
	return containerd, kubelet
}

// startHostServices writes the configuration the real nodes share and starts CoreDNS and
// kube-proxy.
func (l *layout) startHostServices(ctx context.Context, p *pki, api *apiClient) error {
	for _, name := range []string{kubeProxyName, corednsName} {
		if err := writeKubeconfig(filepath.Join(l.PKI, name+".kubeconfig"), l.server(), p.CA, p.Clients[name], name); err != nil {
			return err
		}
	}
	if err := l.writeHostServiceConfigs(); err != nil {
		return err
	}
	if err := ensureCoreDNSAccess(ctx, api); err != nil {
		return err
	}
	for _, proc := range l.hostServiceProcesses() {
		if err := l.start(proc); err != nil {
			return err
		}
	}
	return nil
}

// startRealNodes starts every real node at once and waits for all of them to turn Ready.
func (l *layout) startRealNodes(ctx context.Context, p *pki, api *apiClient) error {
	for _, n := range l.RealNodes {
		if err := writeKubeconfig(filepath.Join(l.PKI, n.kubelet()+".kubeconfig"), l.server(), p.CA, p.Clients[n.kubelet()], n.kubelet()); err != nil {
			return err
		}
	}
	errs := make([]error, len(l.RealNodes))
	var wg sync.WaitGroup
	for i, n := range l.RealNodes {
		wg.Go(func() { errs[i] = l.startRealNode(ctx, n, api) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// startRealNode brings one node up on a running control plane and host network (see
// setUpHostNetwork): containerd with our images, then the kubelet, and waits for the Node to
// turn Ready. Started again after node-stop, it finds its disk as the stop left it.
func (l *layout) startRealNode(ctx context.Context, n realNode, api *apiClient) error {
	if err := l.createPodCgroups(n); err != nil {
		return err
	}
	if err := l.writeNodeConfigs(n); err != nil {
		return err
	}
	// A node's disk keeps its images: only a new (or wiped) one needs them loaded.
	_, err := os.Stat(l.realNodeDir(n, "containerd", "root"))
	fresh := errors.Is(err, os.ErrNotExist)
	containerd, kubelet := l.nodeProcesses(n)
	if err := l.start(containerd); err != nil {
		return err
	}
	if err := l.waitSocket(ctx, containerd.Name, l.containerdSocket(n)); err != nil {
		return err
	}
	if fresh {
		if err := l.loadImages(ctx, n); err != nil {
			return err
		}
	}
	if err := l.start(kubelet); err != nil {
		return err
	}
	// The kubelet runs once its shell has put it in its cgroup and exec'd it.
	if err := poll(ctx, 10*time.Second, kubelet.Name+" to start", func(context.Context) (bool, string, error) {
		_, ok := l.running(kubelet.Name)
		return ok, "not yet exec'd", nil
	}); err != nil {
		return fmt.Errorf("%w; last lines of %s:\n%s", err, l.logFile(kubelet.Name), l.tailLog(kubelet.Name))
	}
	return l.waitNodeReady(ctx, n, api)
}

// waitNodeReady waits for a real node's Node to turn Ready while its processes run.
func (l *layout) waitNodeReady(ctx context.Context, n realNode, api *apiClient) error {
	return poll(ctx, 90*time.Second, n.Name()+" to become Ready", func(ctx context.Context) (bool, string, error) {
		for _, name := range []string{n.containerd(), n.kubelet()} {
			if _, alive := l.running(name); !alive {
				return false, "", l.exited(name)
			}
		}
		ready, err := api.readyNodes(ctx, "kubernetes.io/hostname%3D"+n.Name())
		if err != nil {
			return false, err.Error(), nil
		}
		return len(ready) == 1, "the node is not Ready yet", nil
	})
}

// loadImages imports every image tarball `make images` wrote into a node's containerd.
func (l *layout) loadImages(ctx context.Context, n realNode) error {
	tars, err := filepath.Glob(filepath.Join(l.Images, "*.tar"))
	if err != nil {
		return err
	}
	for _, tar := range tars {
		cmd := exec.CommandContext(ctx, "ctr", "--address", l.containerdSocket(n), "--namespace", "k8s.io", "images", "import", tar)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("importing %s into %s: %w\n%s", tar, n.Name(), err, out)
		}
	}
	fmt.Printf("Loaded %d images into %s's containerd.\n", len(tars), n.Name())
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

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

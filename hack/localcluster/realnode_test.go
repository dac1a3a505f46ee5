package main

import (
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestEveryRealNodeHasItsOwnNameBridgeSubnetAndProcesses(t *testing.T) {
	nodes := realNodes(maxRealNodes)
	_, network, err := net.ParseCIDR(podNetwork)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, n := range nodes {
		containerd, kubelet := testLayout(t).nodeProcesses(n)
		for _, v := range []string{n.Name(), n.Bridge(), n.IP(), n.Subnet(), n.CgroupParent(), containerd.Name, kubelet.Name} {
			if seen[v] {
				t.Errorf("%s: %q is also another node's", n.Name(), v)
			}
			seen[v] = true
		}
		ip, subnet, err := net.ParseCIDR(n.Subnet())
		if err != nil || !subnet.Contains(net.ParseIP(n.IP())) || !network.Contains(ip) {
			t.Errorf("%s: subnet %s must hold its address %s and lie in %s", n.Name(), n.Subnet(), n.IP(), podNetwork)
		}
		if !isComponent(containerd.Name) || !isComponent(kubelet.Name) {
			t.Errorf("%s: %s and %s must be cluster components", n.Name(), containerd.Name, kubelet.Name)
		}
		if len(n.Bridge()) > 15 {
			t.Errorf("bridge name %s is longer than a link name can be", n.Bridge())
		}
	}
	if _, subnet, _ := net.ParseCIDR(nodes[0].Subnet()); subnet.Contains(net.ParseIP(hostIP)) {
		t.Errorf("the host address %s must not be in a node's subnet", hostIP)
	}
}

func TestComponentsHaveTheRealNodesButThoseStoppedOnPurpose(t *testing.T) {
	l := testLayout(t)
	if got := l.components(); slices.Contains(got, corednsName) {
		t.Fatalf("without real nodes the components are %v", got)
	}
	l.RealNodes = realNodes(2)
	want := []string{corednsName, kubeProxyName, "containerd-quintet-node-1", "kubelet-quintet-node-1",
		"containerd-quintet-node-2", "kubelet-quintet-node-2"}
	if got := l.components(); !slices.Equal(got[len(got)-len(want):], want) {
		t.Fatalf("with two real nodes the components are %v, want them to end %v", got, want)
	}
	if err := os.MkdirAll(l.nodeDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(l.stoppedMarker(l.RealNodes[1]), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := l.components(); slices.Contains(got, "kubelet-quintet-node-2") || !slices.Contains(got, "kubelet-quintet-node-1") {
		t.Fatalf("with node 2 stopped the components are %v: want node 1's and not node 2's", got)
	}
}

func TestTheRealNodesSettingsAreKeptForLaterCommands(t *testing.T) {
	l := testLayout(t)
	if err := os.MkdirAll(l.nodeDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	for marker, want := range map[string]int{`{"count": 3}`: 3, `{"count": 1}`: 1, `{"count": 0}`: 0, `{"count": 12}`: 0, "3": 0} {
		if err := os.WriteFile(l.realNodesMarker(), []byte(marker), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := len(l.readRealNodes()); got != want {
			t.Errorf("marker %q: %d real nodes, want %d", marker, got, want)
		}
	}
	l.RealNodes, l.Bin, l.Images, l.PauseImage, l.RegistryCA = realNodes(2), "/bin/k8s", "/images", "pause:1", "host:5443=/ca.crt"
	if err := l.saveRealNodeSettings(); err != nil {
		t.Fatal(err)
	}
	later := testLayout(t)
	later.Root = l.Root
	later.RealNodes = later.readRealNodes()
	later.useSavedNodeSettings()
	if len(later.RealNodes) != 2 || later.Bin != "/bin/k8s" || later.Images != "/images" || later.PauseImage != "pause:1" || later.RegistryCA != "host:5443=/ca.crt" {
		t.Errorf("a later command reads %d nodes, binaries %q, images %q, pause image %q, registry CA %q; want what up was given",
			len(later.RealNodes), later.Bin, later.Images, later.PauseImage, later.RegistryCA)
	}
}

func TestAPIServerListensOnTheHostAddressOnlyWithRealNodes(t *testing.T) {
	l := testLayout(t)
	if !slices.Contains(l.processes()[1].Args, "--bind-address="+host) {
		t.Fatalf("without real nodes the API server must listen on %s: %v", host, l.processes()[1].Args)
	}
	l.RealNodes = realNodes(3)
	args := l.processes()[1].Args
	for _, want := range []string{"--bind-address=" + hostIP, "--advertise-address=" + hostIP, "--kubelet-preferred-address-types=InternalIP"} {
		if !slices.Contains(args, want) {
			t.Errorf("API server arguments lack %s", want)
		}
	}
	if l.server() != "https://"+hostIP+":6443" {
		t.Errorf("server() = %s", l.server())
	}
}

func TestCNIConfigNeverMasqueradesPodTraffic(t *testing.T) {
	l := testLayout(t)
	n := realNode{Index: 2}
	if err := l.writeNodeConfigs(n); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(l.realNodeDir(n, "cni", "net.d", "10-quintet.conflist"))
	if err != nil {
		t.Fatal(err)
	}
	var conf struct {
		Plugins []struct {
			Type   string `json:"type"`
			Bridge string `json:"bridge"`
			IPMasq *bool  `json:"ipMasq"`
			IPAM   struct {
				DataDir string      `json:"dataDir"`
				Ranges  [][]ipRange `json:"ranges"`
			} `json:"ipam"`
		} `json:"plugins"`
	}
	if err := json.Unmarshal(data, &conf); err != nil {
		t.Fatalf("the CNI config is not JSON: %v\n%s", err, data)
	}
	if len(conf.Plugins) != 1 || conf.Plugins[0].Type != "bridge" || conf.Plugins[0].Bridge != "quintet2" {
		t.Fatalf("want one bridge plugin on quintet2, got %+v", conf.Plugins)
	}
	p := conf.Plugins[0]
	if p.IPMasq == nil || *p.IPMasq {
		t.Errorf("ipMasq must be set to false")
	}
	if !strings.HasPrefix(p.IPAM.DataDir, l.realNodeDir(n)) {
		t.Errorf("host-local keeps its addresses in %s, outside the node's folder", p.IPAM.DataDir)
	}
	want := ipRange{Subnet: "10.244.78.0/24", RangeStart: "10.244.78.10", Gateway: "10.244.78.1"}
	if len(p.IPAM.Ranges) != 1 || len(p.IPAM.Ranges[0]) != 1 || p.IPAM.Ranges[0][0] != want {
		t.Errorf("ranges %+v, want [[%+v]]", p.IPAM.Ranges, want)
	}
}

type ipRange struct {
	Subnet     string `json:"subnet"`
	RangeStart string `json:"rangeStart"`
	Gateway    string `json:"gateway"`
}

func TestNodeConfigsKeepStateUnderTheNodesFolder(t *testing.T) {
	l := testLayout(t)
	n := realNode{Index: 3}
	if err := l.writeNodeConfigs(n); err != nil {
		t.Fatal(err)
	}
	containerd, err := os.ReadFile(l.realNodeDir(n, "containerd.toml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"restrict_oom_score_adj = true", "netns_mounts_under_state_dir = true", `sandbox_image = "pause"`,
		`root = "` + l.realNodeDir(n, "containerd", "root"), `Root = "` + l.realNodeDir(n, "containerd", "runc"),
		`address = "` + l.containerdSocket(n)} {
		if !strings.Contains(string(containerd), want) {
			t.Errorf("containerd.toml lacks %s", want)
		}
	}
	kubelet, err := os.ReadFile(l.realNodeDir(n, "kubelet.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"failCgroupV1: false", "cgroupRoot: /quintet/quintet-node-3", "podLogsDir: " + l.realNodeDir(n, "pod-logs"),
		"nodefs.available: 1%", "address: 10.244.79.1\n", "healthzBindAddress: 10.244.79.1\n", "clusterDNS: [" + hostIP + "]"} {
		if !strings.Contains(string(kubelet), want) {
			t.Errorf("kubelet.yaml lacks %q", want)
		}
	}
}

func TestGuardRulesAreValidNftables(t *testing.T) {
	nftCheck(t, guardRulesFor(realNodes(3)))
}

// nftCheck has nft parse rules against the kernel without applying them.
func nftCheck(t *testing.T, rules string) {
	t.Helper()
	nft, err := exec.LookPath("nft")
	if err != nil || os.Geteuid() != 0 {
		t.Skip("needs nft and root (nft --check parses against the kernel)")
	}
	cmd := exec.Command(nft, "--check", "-f", "-")
	cmd.Stdin = strings.NewReader(rules)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nft rejects the rules: %v\n%s\n%s", err, out, rules)
	}
}

// A network namespace left by a cluster that was never taken down keeps its address on the
// bridge; removing the bridge must take that address off the segment with the namespace's veth.
func TestRemoveBridgeTakesALeftoverNamespacesAddressWithIt(t *testing.T) {
	if _, err := exec.LookPath("ip"); err != nil || os.Geteuid() != 0 {
		t.Skip("needs ip and root (it makes a bridge, a veth and a network namespace)")
	}
	const bridge, ns, hostEnd = "qtestbr0", "qtest-leftover", "qtestveth0"
	ip := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	t.Cleanup(func() {
		_ = exec.Command("ip", "netns", "delete", ns).Run()
		_ = exec.Command("ip", "link", "delete", bridge).Run()
	})
	ip("link", "add", bridge, "type", "bridge")
	ip("netns", "add", ns)
	ip("link", "add", hostEnd, "type", "veth", "peer", "name", "eth0", "netns", ns)
	ip("link", "set", hostEnd, "master", bridge)
	ip("-n", ns, "addr", "add", "10.99.77.11/24", "dev", "eth0")

	ports, err := removeBridge(bridge)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ports, []string{hostEnd}) {
		t.Errorf("removed ports %v, want [%s]", ports, hostEnd)
	}
	if linkExists(bridge) || linkExists(hostEnd) {
		t.Errorf("bridge %s or port %s still exists", bridge, hostEnd)
	}
	if out, _ := exec.Command("ip", "-n", ns, "-4", "-o", "addr").CombinedOutput(); strings.Contains(string(out), "10.99.77.11") {
		t.Errorf("the leftover namespace still holds its address:\n%s", out)
	}
	if ports, err := removeBridge(bridge); ports != nil || err != nil {
		t.Errorf("removing a bridge that does not exist: %v, %v; want nothing", ports, err)
	}
}

func TestSysctlsAreSavedOnceAndRestored(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sysctls.saved")
	if err := saveSysctls(path); err != nil {
		t.Fatal(err)
	}
	first, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(first), "vm/overcommit_memory=") {
		t.Fatalf("vm/overcommit_memory not saved:\n%s", first)
	}
	if err := os.WriteFile(path, []byte("vm/overcommit_memory=9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := saveSysctls(path); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(path); string(again) != "vm/overcommit_memory=9\n" {
		t.Fatalf("a second save overwrote the first (a crashed cluster's values are the original ones): %s", again)
	}
}

func TestUnescapeMountPath(t *testing.T) {
	for in, want := range map[string]string{
		`/a/b`:             "/a/b",
		`/a\040b`:          "/a b",
		`/x\011y\134z`:     "/x\ty\\z",
		`/trailing\04`:     `/trailing\04`,
		`/not\999octal/ok`: `/not\999octal/ok`,
	} {
		if got := unescapeMountPath(in); got != want {
			t.Errorf("unescapeMountPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRealNodeModes(t *testing.T) {
	ctx := t.Context()
	l := testLayout(t) // an empty bin folder: no kubelet, so this machine cannot run the nodes
	if err := l.decideRealNodes(ctx, realNodeAuto, 3); err != nil || len(l.RealNodes) > 0 {
		t.Fatalf("auto without a kubelet: err %v, real nodes %v; want a plain fallback to kwok only", err, l.RealNodes)
	}
	err := l.decideRealNodes(ctx, realNodeRequired, 3)
	if err == nil || !strings.Contains(err.Error(), "the real nodes cannot start") {
		t.Fatalf("required without a kubelet: err %v, want why the nodes cannot start", err)
	}
	if err := l.decideRealNodes(ctx, realNodeOff, 3); err != nil || len(l.RealNodes) > 0 {
		t.Fatalf("off: err %v, real nodes %v", err, l.RealNodes)
	}
	if err := l.decideRealNodes(ctx, "sometimes", 3); err == nil {
		t.Fatal("an unknown mode must be refused")
	}
	for _, count := range []int{0, maxRealNodes + 1} {
		if err := l.decideRealNodes(ctx, realNodeAuto, count); err == nil || !strings.Contains(err.Error(), "want 1 to") {
			t.Errorf("%d real nodes: err %v, want a refusal saying how many are possible", count, err)
		}
	}
}

func TestContainerdTrustsTheRegistryCA(t *testing.T) {
	l := testLayout(t)
	l.RegistryCA = "127.0.0.1:5443=/reg/ca.crt"
	n := realNode{Index: 1}
	if err := l.writeNodeConfigs(n); err != nil {
		t.Fatal(err)
	}
	containerd, err := os.ReadFile(l.realNodeDir(n, "containerd.toml"))
	if err != nil {
		t.Fatal(err)
	}
	want := "endpoint = [\"https://127.0.0.1:5443\"]\n" +
		"  [plugins.\"io.containerd.grpc.v1.cri\".registry.configs.\"127.0.0.1:5443\".tls]\n    ca_file = \"/reg/ca.crt\"\n"
	if !strings.HasSuffix(string(containerd), want) {
		t.Errorf("containerd.toml ends\n%s\nwant\n%s", containerd[len(containerd)-200:], want)
	}
}

func TestStartedExtraProcessesAreTrackedAndStopped(t *testing.T) {
	l := testLayout(t)
	if err := startExtra(l, "sleeper", []string{"sleep", "60"}, false); err != nil {
		t.Fatal(err)
	}
	if _, ok := l.running("sleeper"); !ok {
		t.Fatal("the started process is not running")
	}
	if !slices.Contains(l.extraProcesses(), "sleeper") {
		t.Errorf("extras %v: down would not stop it", l.extraProcesses())
	}
	if err := l.stop("sleeper", stopGracePeriod); err != nil {
		t.Fatal(err)
	}
	if _, ok := l.running("sleeper"); ok {
		t.Error("still running after stop")
	}
	if err := startExtra(l, realNode{Index: 1}.kubelet(), []string{"sleep", "1"}, false); err == nil {
		t.Error("a cluster component's name must be refused")
	}
}

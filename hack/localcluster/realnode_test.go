package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestNodeComponentsHaveAProcessInStartOrder(t *testing.T) {
	l := testLayout(t)
	procs := l.nodeProcesses()
	names := make([]string, 0, len(procs))
	for _, p := range procs {
		names = append(names, p.Name)
	}
	if !slices.Equal(names, nodeComponentNames) {
		t.Fatalf("node processes %v, want %v", names, nodeComponentNames)
	}
	if got := l.components(); slices.ContainsFunc(nodeComponentNames, func(n string) bool { return slices.Contains(got, n) }) {
		t.Fatalf("without a real node the components are %v", got)
	}
	l.RealNode = true
	if got := l.components(); !slices.Equal(got[len(got)-len(nodeComponentNames):], nodeComponentNames) {
		t.Fatalf("with a real node the components are %v, want the node's last", got)
	}
}

func TestAPIServerListensOnTheBridgeOnlyWithARealNode(t *testing.T) {
	l := testLayout(t)
	if !slices.Contains(l.processes()[1].Args, "--bind-address="+host) {
		t.Fatalf("without a real node the API server must listen on %s: %v", host, l.processes()[1].Args)
	}
	l.RealNode = true
	args := l.processes()[1].Args
	for _, want := range []string{"--bind-address=" + bridgeIP, "--advertise-address=" + bridgeIP, "--kubelet-preferred-address-types=InternalIP"} {
		if !slices.Contains(args, want) {
			t.Errorf("API server arguments lack %s", want)
		}
	}
	if l.server() != "https://"+bridgeIP+":6443" {
		t.Errorf("server() = %s", l.server())
	}
}

func TestCNIConfigNeverMasqueradesPodTraffic(t *testing.T) {
	l := testLayout(t)
	if err := l.writeNodeConfigs(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(l.nodeDir("cni", "net.d", "10-quintet.conflist"))
	if err != nil {
		t.Fatal(err)
	}
	var conf struct {
		Plugins []struct {
			Type   string `json:"type"`
			Bridge string `json:"bridge"`
			IPMasq *bool  `json:"ipMasq"`
			IPAM   struct {
				DataDir string `json:"dataDir"`
			} `json:"ipam"`
		} `json:"plugins"`
	}
	if err := json.Unmarshal(data, &conf); err != nil {
		t.Fatalf("the CNI config is not JSON: %v\n%s", err, data)
	}
	if len(conf.Plugins) != 1 || conf.Plugins[0].Type != "bridge" || conf.Plugins[0].Bridge != bridgeName {
		t.Fatalf("want one bridge plugin on %s, got %+v", bridgeName, conf.Plugins)
	}
	if p := conf.Plugins[0]; p.IPMasq == nil || *p.IPMasq {
		t.Errorf("ipMasq must be set to false")
	}
	if !strings.HasPrefix(conf.Plugins[0].IPAM.DataDir, l.nodeDir()) {
		t.Errorf("host-local keeps its addresses in %s, outside the node folder", conf.Plugins[0].IPAM.DataDir)
	}
}

func TestNodeConfigsKeepStateUnderTheNodeFolder(t *testing.T) {
	l := testLayout(t)
	if err := l.writeNodeConfigs(); err != nil {
		t.Fatal(err)
	}
	containerd, err := os.ReadFile(l.nodeDir("containerd.toml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"restrict_oom_score_adj = true", "netns_mounts_under_state_dir = true", `sandbox_image = "pause"`,
		`root = "` + l.nodeDir("containerd", "root"), `Root = "` + l.nodeDir("containerd", "runc")} {
		if !strings.Contains(string(containerd), want) {
			t.Errorf("containerd.toml lacks %s", want)
		}
	}
	kubelet, err := os.ReadFile(l.nodeDir("kubelet.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"failCgroupV1: false", "cgroupRoot: /" + cgroupParent, "podLogsDir: " + l.nodeDir("pod-logs"), "nodefs.available: 1%"} {
		if !strings.Contains(string(kubelet), want) {
			t.Errorf("kubelet.yaml lacks %q", want)
		}
	}
}

func TestGuardRulesAreValidNftables(t *testing.T) {
	nft, err := exec.LookPath("nft")
	if err != nil || os.Geteuid() != 0 {
		t.Skip("needs nft and root (nft --check parses against the kernel)")
	}
	rules := strings.ReplaceAll(guardRules, "%[1]s", guardTable)
	rules = strings.ReplaceAll(rules, "%[2]s", guardCounter)
	rules = strings.ReplaceAll(rules, "%[3]s", bridgeName)
	cmd := exec.Command(nft, "--check", "-f", "-")
	cmd.Stdin = strings.NewReader(rules)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nft rejects the guard: %v\n%s\n%s", err, out, rules)
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
	l := testLayout(t) // an empty bin folder: no kubelet, so this machine cannot run the node
	if err := l.decideRealNode(ctx, realNodeAuto); err != nil || l.RealNode {
		t.Fatalf("auto without a kubelet: err %v, real node %v; want a plain fallback to kwok only", err, l.RealNode)
	}
	err := l.decideRealNode(ctx, realNodeRequired)
	if err == nil || !strings.Contains(err.Error(), "the real node cannot start") {
		t.Fatalf("required without a kubelet: err %v, want why the node cannot start", err)
	}
	if err := l.decideRealNode(ctx, realNodeOff); err != nil || l.RealNode {
		t.Fatalf("off: err %v, real node %v", err, l.RealNode)
	}
	if err := l.decideRealNode(ctx, "sometimes"); err == nil {
		t.Fatal("an unknown mode must be refused")
	}
}

func TestContainerdTrustsTheRegistryCA(t *testing.T) {
	l := testLayout(t)
	l.RegistryCA = "127.0.0.1:5443=/reg/ca.crt"
	if err := l.writeNodeConfigs(); err != nil {
		t.Fatal(err)
	}
	containerd, err := os.ReadFile(l.nodeDir("containerd.toml"))
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
	if err := startExtra(l, kubeletName, []string{"sleep", "1"}, false); err == nil {
		t.Error("a cluster component's name must be refused")
	}
}

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestNodeFaultsRefuseANodeThatIsNotOneOfTheClustersRealNodes(t *testing.T) {
	l := testLayout(t)
	for _, command := range faultCommands {
		err := nodeFault(t.Context(), l, command, "quintet-node-1")
		if err == nil || !strings.Contains(err.Error(), "runs no real node") {
			t.Errorf("%s on a cluster without real nodes: %v, want a refusal", command, err)
		}
	}
	l.RealNodes = realNodes(3)
	for _, name := range []string{"quintet-node-4", "kwok-worker-1", "quintet-node", "production-node-1", ""} {
		err := nodeFault(t.Context(), l, faultStop, name)
		if err == nil || !strings.Contains(err.Error(), "its real nodes are quintet-node-1, quintet-node-2, quintet-node-3") {
			t.Errorf("node-stop %q: %v, want a refusal naming the real nodes", name, err)
		}
	}
	err := nodeFault(t.Context(), l, faultStop, "quintet-node-2")
	if err == nil || !strings.Contains(err.Error(), "is not running") {
		t.Errorf("node-stop on a cluster that does not run: %v, want a refusal", err)
	}
}

func TestPartitionRulesAreValidNftables(t *testing.T) {
	n := realNode{Index: 8}
	nftCheck(t, partitionRules(n, false))
	// nft resolves the kubelet's cgroup when it reads the rules: it must exist.
	if err := os.MkdirAll(kubeletCgroupPath(n), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Remove(kubeletCgroupPath(n)) })
	nftCheck(t, partitionRules(n, true))
}

// Two nodes' bridges with pods in network namespaces: a partition of one node stops packets
// between its pods and the other node's, both ways, and leaves its own pods and the host
// reachable; heal undoes it.
func TestPartitionCutsANodesPodsFromTheOtherNodesPodsOnly(t *testing.T) {
	for _, tool := range []string{"ip", "nft", "busybox"} {
		if _, err := exec.LookPath(tool); err != nil || os.Geteuid() != 0 {
			t.Skip("needs root, ip, nft and busybox (it makes bridges, network namespaces and nftables rules)")
		}
	}
	if runCmd("nft", "list", "table", "inet", guardTable) == nil {
		t.Skip("a local cluster runs on this machine, and its guard drops forwarding to any other bridge: `make cluster-down` first")
	}
	cut, other := realNode{Index: 8}, realNode{Index: 9}
	pods := []struct {
		ns, ip string
		node   realNode
	}{{"qtest-a1", "10.244.84.11", cut}, {"qtest-a2", "10.244.84.12", cut}, {"qtest-b1", "10.244.85.11", other}}
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	forward, err := os.ReadFile("/proc/sys/net/ipv4/ip_forward")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = runCmd("nft", "delete", "table", "inet", faultTable(cut))
		for i, p := range pods {
			_ = runCmd("ip", "netns", "delete", p.ns)
			_ = runCmd("ip", "link", "delete", "qtestveth"+string(rune('0'+i)))
		}
		_ = runCmd("ip", "link", "delete", cut.Bridge())
		_ = runCmd("ip", "link", "delete", other.Bridge())
		_ = os.WriteFile("/proc/sys/net/ipv4/ip_forward", forward, 0o644)
	})
	for _, n := range []realNode{cut, other} {
		run("ip", "link", "add", n.Bridge(), "type", "bridge")
		run("ip", "addr", "add", n.IP()+"/24", "dev", n.Bridge())
		run("ip", "link", "set", n.Bridge(), "up")
	}
	for i, p := range pods {
		veth := "qtestveth" + string(rune('0'+i))
		run("ip", "netns", "add", p.ns)
		run("ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", p.ns)
		run("ip", "link", "set", veth, "master", p.node.Bridge(), "up")
		run("ip", "-n", p.ns, "addr", "add", p.ip+"/24", "dev", "eth0")
		run("ip", "-n", p.ns, "link", "set", "eth0", "up")
		run("ip", "-n", p.ns, "route", "add", "default", "via", p.node.IP())
	}
	if err := os.WriteFile("/proc/sys/net/ipv4/ip_forward", []byte("1"), 0o644); err != nil {
		t.Fatal(err)
	}
	reaches := func(from, to string) bool {
		return exec.Command("ip", "netns", "exec", from, "busybox", "ping", "-c", "1", "-W", "1", to).Run() == nil
	}
	expect := func(when string, from, to string, want bool) {
		t.Helper()
		if got := reaches(from, to); got != want {
			t.Errorf("%s: %s reaches %s: %v, want %v", when, from, to, got, want)
		}
	}
	if !reaches("qtest-a1", "10.244.85.11") {
		t.Fatal("two bridges' pods do not reach each other before any partition")
	}
	l := testLayout(t)
	if err := l.partition(cut, false); err != nil {
		t.Fatal(err)
	}
	expect("partitioned", "qtest-a1", "10.244.85.11", false)
	expect("partitioned", "qtest-b1", "10.244.84.11", false)
	expect("partitioned", "qtest-a1", "10.244.84.12", true)
	expect("partitioned", "qtest-a1", cut.IP(), true)
	expect("partitioned", "qtest-b1", cut.IP(), true) // the host: the API server's side
	if err := l.heal(cut); err != nil {
		t.Fatal(err)
	}
	expect("healed", "qtest-a1", "10.244.85.11", true)
	expect("healed", "qtest-b1", "10.244.84.11", true)
	if tables := faultTables(); len(tables) != 0 {
		t.Errorf("fault tables %v remain after heal", tables)
	}
}

func TestKubeletCgroupIsWhereNftablesLooksForIt(t *testing.T) {
	n := realNode{Index: 2}
	path := kubeletCgroupPath(n)
	if !strings.HasPrefix(path, cgroupRoot+"/") || filepath.Join(cgroupRoot, kubeletCgroupNftPath(n)) != path {
		t.Fatalf("kubelet cgroup %s, nft path %s: nft resolves its path below %s", path, kubeletCgroupNftPath(n), cgroupRoot)
	}
	if !strings.HasSuffix(path, "/quintet/kubelet-quintet-node-2") {
		t.Errorf("kubelet cgroup %s: want it at level 2, below %s (partitionRules matches that level)", path, cgroupParent)
	}
}

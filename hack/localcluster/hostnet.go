package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// guardTable is the nftables table that keeps pod traffic on the machine: every forwarded
// packet that does not leave through one of the real nodes' pod bridges is counted and
// dropped. It exists before the first pod does (the bridge plugin turns on IP forwarding at
// every pod start).
const (
	guardTable   = "quintet_guard"
	guardCounter = "forward_dropped"
	bridgePrefix = "quintet"
)

const guardRules = `table inet %[1]s {
	counter %[2]s {
	}
	chain forward {
		type filter hook forward priority filter - 10; policy accept;
		oifname != { %[3]s } counter name "%[2]s" drop
	}
}
`

// guardRulesFor is the guard for the given real nodes' bridges.
func guardRulesFor(nodes []realNode) string {
	bridges := make([]string, len(nodes))
	for i, n := range nodes {
		bridges[i] = strconv.Quote(n.Bridge())
	}
	return fmt.Sprintf(guardRules, guardTable, guardCounter, strings.Join(bridges, ", "))
}

// kubeProxyTables are the tables kube-proxy's nftables mode creates.
var kubeProxyTables = []string{"ip kube-proxy", "ip6 kube-proxy"}

// touchedSysctls are the kernel settings the kubelet, kube-proxy or the bridge plugin may
// change; up saves them and down puts them back.
var touchedSysctls = []string{
	"vm/overcommit_memory", "vm/panic_on_oom", "kernel/panic", "kernel/panic_on_oops",
	"kernel/keys/root_maxkeys", "kernel/keys/root_maxbytes",
	"net/ipv4/ip_forward", "net/ipv4/conf/all/forwarding", "net/ipv4/conf/all/route_localnet",
	"net/ipv6/conf/all/forwarding",
}

func (l *layout) savedSysctls() string { return l.nodeDir("sysctls.saved") }

// setUpHostNetwork saves the sysctls, installs the guard, puts the host address on loopback,
// then creates each real node's pod bridge, removing leftover ones first.
func (l *layout) setUpHostNetwork() error {
	if err := os.MkdirAll(l.nodeDir(), 0o755); err != nil {
		return err
	}
	if err := saveSysctls(l.savedSysctls()); err != nil {
		return err
	}
	_ = runCmd("nft", "delete", "table", "inet", guardTable) // a leftover from a crash
	if err := runInput(guardRulesFor(l.RealNodes), "nft", "-f", "-"); err != nil {
		return fmt.Errorf("installing the nftables guard: %w", err)
	}
	if err := removeLeftoverBridges(); err != nil {
		return err
	}
	if err := runCmd("ip", "addr", "replace", hostIP+"/32", "dev", "lo"); err != nil {
		return err
	}
	for _, n := range l.RealNodes {
		if err := runCmd("ip", "link", "add", n.Bridge(), "type", "bridge"); err != nil {
			return err
		}
		if err := runCmd("ip", "addr", "replace", n.IP()+"/24", "dev", n.Bridge()); err != nil {
			return err
		}
		if err := runCmd("ip", "link", "set", n.Bridge(), "up"); err != nil {
			return err
		}
	}
	return nil
}

// removeLeftoverBridges removes every pod bridge a cluster left (one that was never taken
// down, or had other real nodes), saying so.
func removeLeftoverBridges() error {
	for _, bridge := range podBridges() {
		ports, err := removeBridge(bridge)
		if err != nil {
			return fmt.Errorf("removing the leftover pod bridge %s: %w", bridge, err)
		}
		fmt.Printf("Removed a leftover pod bridge %s and its %d ports %v: pods of a cluster that was never taken down, "+
			"holding addresses this cluster hands out.\n", bridge, len(ports), ports)
	}
	return nil
}

// podBridges are the bridges on this machine named like a real node's.
func podBridges() []string {
	links, _ := filepath.Glob(filepath.Join("/sys/class/net", bridgePrefix+"*", "bridge"))
	var bridges []string
	for _, link := range links {
		name := filepath.Base(filepath.Dir(link))
		if _, err := strconv.Atoi(strings.TrimPrefix(name, bridgePrefix)); err == nil {
			bridges = append(bridges, name)
		}
	}
	return bridges
}

// tearDownHostNetwork removes the bridges, the host address, the guard's, the faults' and
// kube-proxy's tables, and restores the sysctls.
func (l *layout) tearDownHostNetwork() error {
	var errs []error
	for _, bridge := range podBridges() {
		_, err := removeBridge(bridge)
		errs = append(errs, err)
	}
	if out, err := exec.Command("ip", "-o", "addr", "show", "dev", "lo").Output(); err == nil && strings.Contains(string(out), " "+hostIP+"/32") {
		errs = append(errs, runCmd("ip", "addr", "del", hostIP+"/32", "dev", "lo"))
	}
	for _, table := range append(append([]string{"inet " + guardTable}, faultTables()...), kubeProxyTables...) {
		if runCmd("nft", "list", "table", table) == nil {
			errs = append(errs, runCmd("nft", append([]string{"delete", "table"}, strings.Fields(table)...)...))
		}
	}
	errs = append(errs, restoreSysctls(l.savedSysctls()))
	return errors.Join(errs...)
}

// removeBridge deletes a bridge and every link attached to it, and returns those links' names
// (nil when there was no bridge). A pod's host-side veth goes with its peer, and so with the
// pod's address: a network namespace outliving its cluster (pinned by a mount, or by a
// process a crash left) would otherwise stay on a bridge of the same name, answer ARP for an
// address the next cluster gives another pod, and refuse that pod's connections.
func removeBridge(name string) ([]string, error) {
	if !linkExists(name) {
		return nil, nil
	}
	ports, err := removeBridgePorts(name)
	return ports, errors.Join(err, runCmd("ip", "link", "delete", name))
}

// removeBridgePorts deletes every link attached to a bridge and returns their names.
func removeBridgePorts(name string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join("/sys/class/net", name, "brif"))
	if err != nil {
		return nil, err
	}
	ports := []string{}
	var errs []error
	for _, e := range entries {
		ports = append(ports, e.Name())
		if err := runCmd("ip", "link", "delete", e.Name()); err != nil && linkExists(e.Name()) {
			errs = append(errs, err)
		}
	}
	return ports, errors.Join(errs...)
}

func linkExists(name string) bool {
	_, err := os.Stat(filepath.Join("/sys/class/net", name))
	return err == nil
}

// saveSysctls records the current values, unless a previous up already did (a crashed
// cluster's saved values are the original ones).
func saveSysctls(path string) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	var lines []string
	for _, key := range touchedSysctls {
		value, err := os.ReadFile(filepath.Join("/proc/sys", key))
		if err != nil {
			continue // not on this kernel
		}
		lines = append(lines, key+"="+strings.TrimSpace(string(value)))
	}
	return os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}

func restoreSysctls(path string) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		current, err := os.ReadFile(filepath.Join("/proc/sys", key))
		if err == nil && strings.TrimSpace(string(current)) == value {
			continue
		}
		errs = append(errs, os.WriteFile(filepath.Join("/proc/sys", key), []byte(value), 0o644))
	}
	return errors.Join(errs...)
}

// runCmd executes a command, returning its output in the error when it fails.
func runCmd(name string, args ...string) error { return runInput("", name, args...) }

func runInput(stdin, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Stdin = strings.NewReader(stdin)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

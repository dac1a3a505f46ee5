package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The faults that take clusters down, played on one real node at a time (see
// docs/failure-modes.md): a power loss (node-stop, then node-start), a replaced machine
// (node-wipe), a network partition of its pods (node-partition) or of the whole node
// (node-isolate), undone by node-heal; and a maintenance drain through the eviction API.
const (
	faultStop      = "node-stop"
	faultStart     = "node-start"
	faultWipe      = "node-wipe"
	faultPartition = "node-partition"
	faultIsolate   = "node-isolate"
	faultHeal      = "node-heal"
	faultDrain     = "node-drain"
	faultUncordon  = "node-uncordon"
)

var faultCommands = []string{faultStop, faultStart, faultWipe, faultPartition, faultIsolate, faultHeal, faultDrain, faultUncordon}

// faultTablePrefix names the nftables table of one node's partition (quintet_fault_<index>).
const faultTablePrefix = "quintet_fault_"

// nodeFault runs one fault command on the named real node of the cluster in l.Root, refusing
// any other node and a cluster that does not run.
func nodeFault(ctx context.Context, l *layout, command, name string) error {
	n, err := l.realNodeNamed(name)
	if err != nil {
		return err
	}
	if !l.healthy(ctx) {
		return fmt.Errorf("the local cluster in %s is not running: `make cluster-up` starts it", l.Root)
	}
	l.useSavedNodeSettings()
	switch command {
	case faultStop:
		return l.powerOff(n, "Stopped")
	case faultStart:
		return l.powerOn(ctx, n)
	case faultWipe:
		return l.wipe(n)
	case faultPartition:
		return l.partition(n, false)
	case faultIsolate:
		return l.partition(n, true)
	case faultHeal:
		return l.heal(n)
	case faultDrain:
		return l.kubectl("drain", n.Name(), "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=10m")
	case faultUncordon:
		return l.kubectl("uncordon", n.Name())
	}
	return fmt.Errorf("unknown node fault %q: want one of %s", command, strings.Join(faultCommands, ", "))
}

// stoppedMarker exists while a real node is down by node-stop or node-wipe; status and up
// take its processes' absence as intended. It is beside the node's folder, so a wipe keeps it.
func (l *layout) stoppedMarker(n realNode) string { return l.nodeDir(n.Name() + ".stopped") }

func (l *layout) isStopped(n realNode) bool {
	_, err := os.Stat(l.stoppedMarker(n))
	return err == nil
}

// powerOff ends a node as a power loss does: SIGKILL to its kubelet, its containerd, their
// shims and every process in its pod cgroups, nothing flushed or shut down cleanly. What a
// reboot loses goes too (mounts, cgroups, containerd's and runc's state, pod network
// namespaces and with them the pods' addresses); the disk (images, the kubelet's folder, the
// node's volumes) stays.
func (l *layout) powerOff(n realNode, verb string) error {
	if err := os.WriteFile(l.stoppedMarker(n), nil, 0o644); err != nil {
		return err
	}
	ports, _ := os.ReadDir(filepath.Join("/sys/class/net", n.Bridge(), "brif"))
	var killed []string
	for _, name := range []string{n.kubelet(), n.containerd()} {
		if pid, ok := l.running(name); ok {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			killed = append(killed, fmt.Sprintf("%s (pid %d)", name, pid))
		}
		_ = os.Remove(l.pidFile(name))
	}
	leftovers := l.killLeftovers(n)
	errs := []error{unmountUnder(l.realNodeDir(n)), removeCgroupTreesOnceEmpty(n.CgroupParent()), removeKubeletCgroup(n)}
	_, err := removeBridgePorts(n.Bridge()) // those whose namespace a mount or a process still held
	errs = append(errs, err)
	for _, dir := range []string{l.realNodeDir(n, "containerd", "state"), l.realNodeDir(n, "containerd", "runc")} {
		errs = append(errs, os.RemoveAll(dir))
	}
	if len(killed) == 0 {
		killed = []string{"nothing: it was not running"}
	}
	fmt.Printf("%s %s as a power loss would: SIGKILL to %s and %d container processes and shims; "+
		"%d pod network interfaces gone with their namespaces. Its disk stays: %s.\n",
		verb, n.Name(), strings.Join(killed, ", "), leftovers, len(ports), l.realNodeDir(n))
	return errors.Join(errs...)
}

// powerOn starts a stopped node again with the same name, disk and volumes.
func (l *layout) powerOn(ctx context.Context, n realNode) error {
	if _, ok := l.running(n.kubelet()); ok && !l.isStopped(n) {
		fmt.Printf("%s is already running.\n", n.Name())
		return nil
	}
	api, err := l.adminClient()
	if err != nil {
		return err
	}
	started := time.Now()
	if err := l.startRealNode(ctx, n, api); err != nil {
		return err
	}
	if err := os.Remove(l.stoppedMarker(n)); err != nil {
		return err
	}
	fmt.Printf("Started %s again in %.1fs: it is Ready.\n", n.Name(), time.Since(started).Seconds())
	return nil
}

// wipe powers a node off and removes its disk and its local volumes for good, as when a
// machine is replaced: node-start brings it back empty under the same name.
func (l *layout) wipe(n realNode) error {
	if err := l.powerOff(n, "Stopped"); err != nil {
		return err
	}
	volumes, _ := filepath.Glob(filepath.Join(l.nodeVolumesDir(n.Name()), "*"))
	if err := errors.Join(os.RemoveAll(l.realNodeDir(n)), os.RemoveAll(l.nodeVolumesDir(n.Name()))); err != nil {
		return err
	}
	fmt.Printf("Wiped %s: its disk and its %d local volumes are gone; `make node-start NODE=%s` brings it back empty.\n",
		n.Name(), len(volumes), n.Name())
	return nil
}

func faultTable(n realNode) string { return faultTablePrefix + strconv.Itoa(n.Index) }

// partitionRules cut a node's pods from every other node's pods, both ways: no packet is
// forwarded into or out of its bridge but between its own pods. Pods, the kubelet and the
// API server still reach one another on the host. isolate also cuts the node's kubelet from
// the API server and the API server from the kubelet, the node itself gone from the
// control plane's view while its pods run on.
func partitionRules(n realNode, isolate bool) string {
	rules := fmt.Sprintf(`table inet %[1]s {
	chain forward {
		type filter hook forward priority filter - 20; policy accept;
		iifname %[2]q oifname != %[2]q counter drop
		oifname %[2]q iifname != %[2]q counter drop
	}
`, faultTable(n), n.Bridge())
	if isolate {
		rules += fmt.Sprintf(`	chain output {
		type filter hook output priority filter - 20; policy accept;
		socket cgroupv2 level 2 %[1]q ip daddr %[2]s tcp dport %[3]d counter drop
		ip daddr %[4]s tcp dport 10250 counter drop
	}
`, kubeletCgroupNftPath(n), hostIP, apiServerPort, n.IP())
	}
	return rules + "}\n"
}

// partition installs a node's partition (replacing one it has).
func (l *layout) partition(n realNode, isolate bool) error {
	_ = runCmd("nft", "delete", "table", "inet", faultTable(n))
	if err := runInput(partitionRules(n, isolate), "nft", "-f", "-"); err != nil {
		return fmt.Errorf("partitioning %s: %w", n.Name(), err)
	}
	if isolate {
		fmt.Printf("Isolated %s: its pods exchange no packet with other nodes' pods, and its kubelet and the API server "+
			"no longer reach each other (nftables table inet %s). `make node-heal NODE=%s` undoes it.\n", n.Name(), faultTable(n), n.Name())
		return nil
	}
	fmt.Printf("Partitioned %s: its pods exchange no packet with other nodes' pods (%s/%s); the node still talks to the "+
		"API server (nftables table inet %s). `make node-heal NODE=%s` undoes it.\n", n.Name(), n.Bridge(), n.Subnet(), faultTable(n), n.Name())
	return nil
}

// heal removes a node's partition or isolation.
func (l *layout) heal(n realNode) error {
	if runCmd("nft", "list", "table", "inet", faultTable(n)) != nil {
		fmt.Printf("%s has no partition to heal.\n", n.Name())
		return nil
	}
	if err := runCmd("nft", "delete", "table", "inet", faultTable(n)); err != nil {
		return err
	}
	fmt.Printf("Healed %s: its pods and its kubelet reach the others again.\n", n.Name())
	return nil
}

// faultTables are the partitions' nftables tables on this machine ("inet quintet_fault_2").
func faultTables() []string {
	out, err := exec.Command("nft", "list", "tables", "inet").Output()
	if err != nil {
		return nil
	}
	var tables []string
	for _, line := range strings.Split(string(out), "\n") {
		if fields := strings.Fields(line); len(fields) == 3 && strings.HasPrefix(fields[2], faultTablePrefix) {
			tables = append(tables, "inet "+fields[2])
		}
	}
	return tables
}

// kubectl replaces this process with the cluster's kubectl on this cluster only (its own
// kubeconfig), saying what it runs: kubectl gets the terminal's signals and gives its exit
// status.
func (l *layout) kubectl(args ...string) error {
	argv := append([]string{filepath.Join(l.Bin, "kubectl"), "--kubeconfig", l.Kubeconfig}, args...)
	fmt.Printf("kubectl %s\n", strings.Join(argv[1:], " "))
	return syscall.Exec(argv[0], argv, os.Environ()) //nolint:gosec // the cluster's own kubectl
}

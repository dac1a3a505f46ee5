package main

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const cgroupRoot = "/sys/fs/cgroup"

// cgroupHierarchies are the mounted cgroup hierarchies (v1 controllers, named and unified),
// skipping the symlinks that alias combined controllers.
func cgroupHierarchies() []string {
	entries, _ := os.ReadDir(cgroupRoot)
	var dirs []string
	for _, e := range entries {
		if e.IsDir() && e.Type()&fs.ModeSymlink == 0 {
			dirs = append(dirs, filepath.Join(cgroupRoot, e.Name()))
		}
	}
	return dirs
}

// createPodCgroups creates a node's kubelet cgroup root in every hierarchy, with the cpuset of
// the machine at each level (a new v1 cpuset cgroup starts empty and would accept no task),
// and the cgroup its kubelet runs in.
func (l *layout) createPodCgroups(n realNode) error {
	for _, h := range cgroupHierarchies() {
		for _, dir := range []string{filepath.Join(h, cgroupParent), filepath.Join(h, n.CgroupParent())} {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("creating cgroup %s: %w", dir, err)
			}
			if filepath.Base(h) == "cpuset" {
				if err := copyCpuset(h, dir); err != nil {
					return err
				}
			}
		}
	}
	return os.MkdirAll(kubeletCgroupPath(n), 0o755)
}

func copyCpuset(from, to string) error {
	for _, file := range []string{"cpuset.cpus", "cpuset.mems"} {
		value, err := os.ReadFile(filepath.Join(from, file))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(to, file), value, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// cgroup2Root is where the unified (v2) hierarchy is mounted: beside the v1 ones on a hybrid
// machine, or at the cgroup root.
func cgroup2Root() string {
	if _, err := os.Stat(filepath.Join(cgroupRoot, "unified", "cgroup.procs")); err == nil {
		return filepath.Join(cgroupRoot, "unified")
	}
	return cgroupRoot
}

// kubeletCgroupPath is the v2 cgroup a node's kubelet runs in: nftables matches the sockets of
// its processes there (see partitionRules).
func kubeletCgroupPath(n realNode) string {
	return filepath.Join(cgroup2Root(), cgroupParent, n.kubelet())
}

// kubeletCgroupNftPath is kubeletCgroupPath as nftables names it (below the cgroup root).
func kubeletCgroupNftPath(n realNode) string {
	return strings.TrimPrefix(kubeletCgroupPath(n), cgroupRoot+"/")
}

func removeKubeletCgroup(n realNode) error {
	if err := os.Remove(kubeletCgroupPath(n)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// stopRealNodes undoes what every real node did (see stopRealNode), then stops the host
// services.
func (l *layout) stopRealNodes() error {
	if _, err := os.Stat(l.nodeDir()); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	var errs []error
	for _, n := range l.RealNodes {
		errs = append(errs, l.stopRealNode(n))
	}
	for i := len(hostServiceNames) - 1; i >= 0; i-- {
		errs = append(errs, l.stop(hostServiceNames[i], stopGracePeriod))
	}
	return errors.Join(errs...)
}

// stopRealNode undoes what a real node did, in dependency order: the kubelet (so it restarts
// nothing), every pod sandbox through the CRI (containers, network namespaces, pod addresses),
// containerd, leftover shims and pod processes, mounts, cgroups and the kubelet's log links.
// The host network stays until the API server, which listens on the host address, has
// stopped: see removeRealNodes.
func (l *layout) stopRealNode(n realNode) error {
	errs := []error{l.stop(n.kubelet(), stopGracePeriod)}
	if _, ok := l.running(n.containerd()); ok {
		errs = append(errs, runCmd(filepath.Join(l.Bin, "crictl"), "--runtime-endpoint", "unix://"+l.containerdSocket(n),
			"--timeout", "60s", "rmp", "--all", "--force"))
	}
	errs = append(errs, l.stop(n.containerd(), stopGracePeriod))
	l.killLeftovers(n)
	errs = append(errs, unmountUnder(l.realNodeDir(n)), removeKubeletCgroup(n), l.removeLogLinks(n))
	return errors.Join(errs...)
}

// removeRealNodes removes the cgroups, the host network (bridges, nftables tables, sysctls)
// and the node folder, once nothing uses them.
func (l *layout) removeRealNodes() error {
	if _, err := os.Stat(l.nodeDir()); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	errs := []error{removeCgroupTrees(cgroupParent), l.tearDownHostNetwork(), os.RemoveAll(l.nodeDir())}
	removeEmptyDirs(runtimeDirs...)
	return errors.Join(errs...)
}

// runtimeDirs are the fixed paths containerd (shim sockets), libcni (result cache) and the
// kubelet (log links) use outside the node folder; down removes them once they are empty.
var runtimeDirs = []string{"/run/containerd/s", "/run/containerd", "/var/lib/cni/results", "/var/lib/cni", "/var/log/containers"}

// removeEmptyDirs removes each directory that exists and is empty, in order.
func removeEmptyDirs(dirs ...string) {
	for _, dir := range dirs {
		if entries, err := os.ReadDir(dir); err == nil && len(entries) == 0 {
			_ = os.Remove(dir)
		}
	}
}

// leftoverProcesses are containerd shims started for a node's socket and any process still in
// its pod cgroups.
func (l *layout) leftoverProcesses(n realNode) []int {
	var pids []int
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range procs {
		cmdline, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		args := strings.Split(string(cmdline), "\x00")
		if strings.HasPrefix(filepath.Base(args[0]), "containerd-shim") && slices.Contains(args, l.containerdSocket(n)) {
			if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(f))); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	for _, h := range cgroupHierarchies() {
		_ = filepath.WalkDir(filepath.Join(h, n.CgroupParent()), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || d.Name() != "cgroup.procs" {
				return nil
			}
			data, _ := os.ReadFile(path)
			for _, field := range strings.Fields(string(data)) {
				if pid, err := strconv.Atoi(field); err == nil {
					pids = append(pids, pid)
				}
			}
			return nil
		})
	}
	slices.Sort(pids)
	return slices.Compact(pids)
}

// killLeftovers kills a node's leftover processes until none is left (a process may fork while
// the others are killed), for at most 10 s, and returns how many it killed.
func (l *layout) killLeftovers(n realNode) int {
	killed := map[int]bool{}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		live := slices.DeleteFunc(l.leftoverProcesses(n), isZombie)
		if len(live) == 0 {
			break
		}
		for _, pid := range live {
			killed[pid] = true
		}
		killProcesses(live)
	}
	return len(killed)
}

// removeCgroupTreesOnceEmpty is removeCgroupTrees, tried again for a few seconds while the
// kernel still counts tasks that were just killed.
func removeCgroupTreesOnceEmpty(sub string) error {
	err := removeCgroupTrees(sub)
	for try := 0; err != nil && try < 25; try++ {
		time.Sleep(200 * time.Millisecond)
		err = removeCgroupTrees(sub)
	}
	return err
}

func killProcesses(pids []int) {
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range pids {
		for time.Now().Before(deadline) && syscall.Kill(pid, 0) == nil && !isZombie(pid) {
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// unmountUnder detaches every mount below dir, the most recent first.
func unmountUnder(dir string) error {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	var mounts []string
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		fields := strings.Fields(scanner.Text())
		if len(fields) < 5 {
			continue
		}
		point := unescapeMountPath(fields[4])
		if strings.HasPrefix(point, dir+"/") {
			mounts = append(mounts, point)
		}
	}
	var errs []error
	for i := len(mounts) - 1; i >= 0; i-- {
		if err := syscall.Unmount(mounts[i], syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) {
			errs = append(errs, fmt.Errorf("unmounting %s: %w", mounts[i], err))
		}
	}
	return errors.Join(append(errs, scanner.Err())...)
}

// unescapeMountPath decodes mountinfo's octal escapes (\040 for a space, ...).
func unescapeMountPath(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// removeCgroupTrees removes the cgroup tree sub (below the root) in every hierarchy, children
// first.
func removeCgroupTrees(sub string) error {
	var errs []error
	for _, h := range cgroupHierarchies() {
		var dirs []string
		_ = filepath.WalkDir(filepath.Join(h, sub), func(path string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, path)
			}
			return nil
		})
		for i := len(dirs) - 1; i >= 0; i-- {
			if err := os.Remove(dirs[i]); err != nil && !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// removeLogLinks removes the links a node's kubelet made in /var/log/containers to its pod
// logs.
func (l *layout) removeLogLinks(n realNode) error {
	links, _ := filepath.Glob("/var/log/containers/*.log")
	var errs []error
	for _, link := range links {
		if target, err := os.Readlink(link); err == nil && strings.HasPrefix(target, l.realNodeDir(n)+"/") {
			errs = append(errs, os.Remove(link))
		}
	}
	return errors.Join(errs...)
}

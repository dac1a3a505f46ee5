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

// createPodCgroups creates the kubelet's cgroup root in every hierarchy, with the cpuset
// of the machine (a new v1 cpuset cgroup starts empty and would accept no task).
func (l *layout) createPodCgroups() error {
	for _, h := range cgroupHierarchies() {
		dir := filepath.Join(h, cgroupParent)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("creating cgroup %s: %w", dir, err)
		}
		if filepath.Base(h) != "cpuset" {
			continue
		}
		for _, file := range []string{"cpuset.cpus", "cpuset.mems"} {
			value, err := os.ReadFile(filepath.Join(h, file))
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dir, file), value, 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// stopRealNode undoes what the real node did, in dependency order: the kubelet (so it
// restarts nothing), every pod sandbox through the CRI (containers, network namespaces, pod
// addresses), the other components, leftover shims and pod processes, mounts, cgroups and the
// kubelet's log links. The host network stays until the API server, which listens on the
// bridge, has stopped: see removeRealNode.
func (l *layout) stopRealNode() error {
	if _, err := os.Stat(l.nodeDir()); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	errs := []error{l.stop(kubeletName, stopGracePeriod)}
	if _, ok := l.running(containerdName); ok {
		errs = append(errs, runCmd(filepath.Join(l.Bin, "crictl"), "--runtime-endpoint", "unix://"+l.containerdSocket(),
			"--timeout", "60s", "rmp", "--all", "--force"))
	}
	for i := len(nodeComponentNames) - 1; i >= 0; i-- {
		errs = append(errs, l.stop(nodeComponentNames[i], stopGracePeriod))
	}
	killProcesses(l.leftoverProcesses())
	errs = append(errs, unmountUnder(l.nodeDir()), removePodCgroups(), l.removeLogLinks())
	removeEmptyDirs(runtimeDirs...)
	return errors.Join(errs...)
}

// removeRealNode removes the host network (bridge, nftables tables, sysctls) and the node
// folder, once nothing uses them.
func (l *layout) removeRealNode() error {
	if _, err := os.Stat(l.nodeDir()); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return errors.Join(l.tearDownHostNetwork(), os.RemoveAll(l.nodeDir()))
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

// leftoverProcesses are containerd shims started for our socket and any process still in
// the pod cgroups.
func (l *layout) leftoverProcesses() []int {
	var pids []int
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range procs {
		cmdline, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		args := strings.Split(string(cmdline), "\x00")
		if strings.HasPrefix(filepath.Base(args[0]), "containerd-shim") && slices.Contains(args, l.containerdSocket()) {
			if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(f))); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	for _, h := range cgroupHierarchies() {
		_ = filepath.WalkDir(filepath.Join(h, cgroupParent), func(path string, d fs.DirEntry, err error) error {
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

// removePodCgroups removes the cgroup trees under the kubelet's root, children first.
func removePodCgroups() error {
	var errs []error
	for _, h := range cgroupHierarchies() {
		var dirs []string
		_ = filepath.WalkDir(filepath.Join(h, cgroupParent), func(path string, d fs.DirEntry, err error) error {
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

// removeLogLinks removes the links the kubelet made in /var/log/containers to our pod logs.
func (l *layout) removeLogLinks() error {
	links, _ := filepath.Glob("/var/log/containers/*.log")
	var errs []error
	for _, link := range links {
		if target, err := os.Readlink(link); err == nil && strings.HasPrefix(target, l.nodeDir()+"/") {
			errs = append(errs, os.Remove(link))
		}
	}
	return errors.Join(errs...)
}

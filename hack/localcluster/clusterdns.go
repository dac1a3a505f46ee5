package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"syscall"
)

// withClusterDNS is the command line that runs exe with args in a mount namespace of its own
// whose /etc/resolv.conf is the cluster's (hostResolvConf), so the program resolves Services
// and pods by name (`<pod>.<service>.<namespace>.svc`) while the host's resolver stays as it
// is. Neither unshare (without --fork) nor the shell forks: exe ends up with the pid, and so
// the process group and terminal, the command line was started with.
func (l *layout) withClusterDNS(exe string, args []string) []string {
	return append([]string{"/usr/bin/unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-c",
		`mount --bind "$0" /etc/resolv.conf && exec "$@"`, l.hostResolvConf(), exe}, args...)
}

// clusterDNSApplies says whether a program using kubeconfig (a KUBECONFIG value) talks to this
// local cluster and the cluster's DNS is there to give it: only a cluster with real nodes runs CoreDNS.
// Another cluster's names mean nothing to this one's DNS.
func (l *layout) clusterDNSApplies(kubeconfig string) bool {
	if _, err := os.Stat(l.hostResolvConf()); err != nil {
		return false
	}
	ours, err := os.Stat(l.Kubeconfig)
	if err != nil {
		return false
	}
	theirs, err := os.Stat(kubeconfig)
	return err == nil && os.SameFile(ours, theirs)
}

// foregroundCommand is the command line `localcluster exec` replaces itself with: command,
// wrapped by withClusterDNS when clusterDNS is asked for and applies to kubeconfig.
func (l *layout) foregroundCommand(command []string, clusterDNS bool, kubeconfig string) ([]string, error) {
	exe, err := exec.LookPath(command[0])
	if err != nil {
		return nil, err
	}
	if !clusterDNS || !l.clusterDNSApplies(kubeconfig) {
		return append([]string{exe}, command[1:]...), nil
	}
	if os.Geteuid() != 0 {
		// A mount namespace needs CAP_SYS_ADMIN. Whoever started the real node was root; another
		// user still gets the program, only without names for the cluster's pods and Services.
		fmt.Fprintln(os.Stderr, "localcluster: not root, so no mount namespace with the cluster's DNS: names of the cluster's pods and Services do not resolve")
		return append([]string{exe}, command[1:]...), nil
	}
	fmt.Fprintf(os.Stderr, "localcluster: %s resolves names with the local cluster's DNS (%s)\n", command[0], l.hostResolvConf())
	return l.withClusterDNS(exe, command[1:]), nil
}

// execForeground replaces this process with command (see foregroundCommand): it keeps the
// terminal, its signals (Ctrl-C) and its exit status go to whoever started localcluster, and
// nothing is tracked or left behind.
func execForeground(l *layout, command []string, clusterDNS bool) error {
	argv, err := l.foregroundCommand(command, clusterDNS, os.Getenv("KUBECONFIG"))
	if err != nil {
		return err
	}
	return syscall.Exec(argv[0], argv, os.Environ()) //nolint:gosec // running the caller's command is the point
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

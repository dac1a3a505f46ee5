package etcdcluster

import (
	"strconv"
	"strings"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
)

// NamedBy says whether host, from a client URL someone wrote, names c: its client Service,
// its peer Service or one of its members (<name>-<ordinal>.<name>), short or followed by
// c's namespace (<namespace>, <namespace>.svc, <namespace>.svc.<cluster domain>), as a pod
// of c's namespace would write it. It identifies c only: what is dialled is c's addresses as
// the operator computes them, never host.
func NamedBy(c *v1beta2.EtcdCluster, host string) bool {
	base := strings.TrimSuffix(strings.ToLower(host), ".")
	if i := strings.Index(base, "."+c.Namespace+".svc."); i > 0 {
		base = base[:i]
	} else {
		for _, suffix := range []string{"." + c.Namespace + ".svc", "." + c.Namespace} {
			if b, ok := strings.CutSuffix(base, suffix); ok {
				base = b
				break
			}
		}
	}
	if base == clientServiceName(c) || base == peerServiceName(c) {
		return true
	}
	pod, service, ok := strings.Cut(base, ".")
	if !ok || service != peerServiceName(c) {
		return false
	}
	ordinal, ok := strings.CutPrefix(pod, c.Name+"-")
	_, err := strconv.ParseUint(ordinal, 10, 31)
	return ok && err == nil
}

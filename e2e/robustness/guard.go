package robustness

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
)

// The harness kills members, deletes volumes and stops managers: it runs only against an
// etcd cluster it made itself, on the local cluster.
const (
	// NamePrefix starts the name of every etcd cluster the harness makes.
	NamePrefix = "robustness"
	// HarnessLabel, set to "true", marks an etcd cluster the harness made.
	HarnessLabel = "robustness.quintet.dev/harness"
)

// Target is what the harness is about to run against.
type Target struct {
	// APIServer is the URL of the Kubernetes API server holding the cluster.
	APIServer string
	// Local are this machine's own addresses (LocalAddresses): the API server must be on one.
	Local []net.IP
	// Name and Labels are the EtcdCluster's.
	Name   string
	Labels map[string]string
	// Endpoint is the etcd client address (host:port) the traffic goes to.
	Endpoint string
}

// Refusal says why the harness must not run against t; nil when t is an etcd cluster the
// harness made on the local cluster: its API server on one of this machine's addresses, its client
// endpoint on a loopback or private address (a Service of the local cluster, never a host
// elsewhere), its name starting with NamePrefix and HarnessLabel set.
func (t Target) Refusal() error {
	var errs []error
	u, err := url.Parse(t.APIServer)
	switch {
	case err != nil:
		errs = append(errs, fmt.Errorf("API server %q: %w", t.APIServer, err))
	case !t.local(u.Hostname()):
		errs = append(errs, fmt.Errorf("API server %s is not the local cluster's (not an address of this machine)", t.APIServer))
	}
	host, _, err := net.SplitHostPort(t.Endpoint)
	if ip := net.ParseIP(host); err != nil || ip == nil || (!ip.IsLoopback() && !ip.IsPrivate()) {
		errs = append(errs, fmt.Errorf("etcd endpoint %q is not an address on this machine's local cluster", t.Endpoint))
	}
	if !strings.HasPrefix(t.Name, NamePrefix) {
		errs = append(errs, fmt.Errorf("etcd cluster %q was not made by the harness: its name does not start with %q", t.Name, NamePrefix))
	}
	if t.Labels[HarnessLabel] != "true" {
		errs = append(errs, fmt.Errorf("etcd cluster %q was not made by the harness: label %s=true is missing", t.Name, HarnessLabel))
	}
	return errors.Join(errs...)
}

func (t Target) local(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && (ip.IsLoopback() || slices.ContainsFunc(t.Local, ip.Equal))
}

// LocalAddresses are the addresses of this machine's network interfaces.
func LocalAddresses() ([]net.IP, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, err
	}
	ips := make([]net.IP, 0, len(addrs))
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			ips = append(ips, n.IP)
		}
	}
	return ips, nil
}

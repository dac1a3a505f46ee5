package backup

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/rest"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
)

// The manager connects to what an EtcdBackup's or EtcdCluster's author writes (an etcd
// endpoint, an S3 endpoint) from its own place in the cluster, which NetworkPolicies admit
// where the author's pods are not. So it connects only where its operator allowed: an
// Allowlist is that operator-level opt-in (the manager's flags), and Reach applies it.

// Allowlist is host names and address ranges an operator lets the manager reach on behalf of
// the authors of its objects.
type Allowlist struct {
	Hosts []string
	Nets  []netip.Prefix
}

// ParseAllowlist reads a comma-separated list of host names and CIDR ranges (an address
// alone is its /32 or /128).
func ParseAllowlist(list string) (Allowlist, error) {
	var a Allowlist
	for entry := range strings.SplitSeq(list, ",") {
		entry = strings.ToLower(strings.TrimSpace(entry))
		switch {
		case entry == "":
		case strings.Contains(entry, "/"):
			p, err := netip.ParsePrefix(entry)
			if err != nil {
				return Allowlist{}, fmt.Errorf("%q is not a CIDR range: %w", entry, err)
			}
			a.Nets = append(a.Nets, p.Masked())
		default:
			if addr, err := netip.ParseAddr(entry); err == nil {
				a.Nets = append(a.Nets, netip.PrefixFrom(addr.Unmap(), addr.Unmap().BitLen()))
				continue
			}
			a.Hosts = append(a.Hosts, strings.TrimSuffix(entry, "."))
		}
	}
	return a, nil
}

// AllowsHost says whether host (a name or an address literal) is listed.
func (a Allowlist) AllowsHost(host string) bool {
	if addr, err := netip.ParseAddr(host); err == nil {
		return a.AllowsAddr(addr)
	}
	return a.listsName(host)
}

// AllowsAddr says whether addr is in a listed range.
func (a Allowlist) AllowsAddr(addr netip.Addr) bool {
	addr = addr.Unmap()
	return slices.ContainsFunc(a.Nets, func(p netip.Prefix) bool { return p.Contains(addr) })
}

// sharedAddressSpace is RFC 6598's carrier-grade NAT range, which some clusters use for pods.
var sharedAddressSpace = netip.MustParsePrefix("100.64.0.0/10")

// Internal says whether addr is one a cluster's pods, services, nodes or the machine itself
// hold (private, loopback, link-local, including the cloud metadata service's
// 169.254.169.254, unspecified or multicast), as opposed to an address on the internet.
func Internal(addr netip.Addr) bool {
	addr = addr.Unmap()
	return !addr.IsValid() || addr.IsPrivate() || addr.IsLoopback() || addr.IsLinkLocalUnicast() ||
		addr.IsLinkLocalMulticast() || addr.IsInterfaceLocalMulticast() || addr.IsMulticast() ||
		addr.IsUnspecified() || sharedAddressSpace.Contains(addr) || (addr.Is4() && addr.As4()[0] == 0)
}

// Reach is where the manager may connect for an S3 store: any address on the internet (AWS
// and other public stores), addresses inside the cluster or the machine only when the
// operator listed them, and never the API server's.
type Reach struct {
	// Internal lists the store hosts and ranges inside the cluster the operator allows.
	Internal Allowlist
	// APIServer are the API server's addresses (host:port), refused whatever the lists say:
	// a store's requests would go there from the manager's place in the network.
	APIServer []netip.AddrPort
}

// Anywhere is the reach of a process that acts for no one but the pod it runs in (a Job in
// the author's own namespace): it may connect wherever that pod may.
var Anywhere = Reach{Internal: Allowlist{Nets: []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0"), netip.MustParsePrefix("::/0")}}}

// refused is the error of an endpoint outside r: an EndpointNotAllowed that says how to
// allow it, and never whether anything answers there.
func refused(endpoint, why string) error {
	return &Error{Reason: v1beta2.ReasonEndpointNotAllowed, Err: fmt.Errorf(
		"endpoint %s is %s; the manager connects to stores inside the cluster only when its operator lists them (--backup-s3-endpoints)", endpoint, why)}
}

// check refuses endpoint when r does not allow its host, resolved as the manager resolves
// it: a name listed is allowed as it is; otherwise every address it resolves to must be.
func (r Reach) check(ctx context.Context, endpoint string) error {
	u, err := url.Parse(endpoint)
	if err != nil || u.Hostname() == "" {
		return &Error{Reason: v1beta2.ReasonStoreFailed, Err: fmt.Errorf("endpoint %q is not a URL", endpoint)}
	}
	if r.Internal.listsName(u.Hostname()) {
		return nil
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", u.Hostname())
	if err != nil {
		return &Error{Reason: v1beta2.ReasonStoreFailed, Err: fmt.Errorf("endpoint %s: %w", endpoint, err)}
	}
	for _, addr := range addrs {
		if err := r.allows(addr, portOf(u)); err != nil {
			return refused(endpoint, err.Error())
		}
	}
	return nil
}

// listsName says whether host is a name (not an address) the list holds.
func (a Allowlist) listsName(host string) bool {
	return slices.Contains(a.Hosts, strings.TrimSuffix(strings.ToLower(host), "."))
}

// portOf is u's port, or its scheme's (https when it has none).
func portOf(u *url.URL) string {
	if port := u.Port(); port != "" {
		return port
	}
	if u.Scheme == "http" {
		return "80"
	}
	return "443"
}

// allows refuses addr:port when it is the API server's, or internal and not listed.
func (r Reach) allows(addr netip.Addr, port string) error {
	addr = addr.Unmap()
	for _, api := range r.APIServer {
		if api.Addr().Unmap() == addr && fmt.Sprint(api.Port()) == port {
			return fmt.Errorf("the Kubernetes API server's address %s", api)
		}
	}
	if Internal(addr) && !r.Internal.AllowsAddr(addr) {
		return fmt.Errorf("an address inside the cluster or the machine (%s)", addr)
	}
	return nil
}

// dialer connects to host's addresses only where r allows, checked on the address each
// connection goes to (a name that resolves elsewhere between the check and the connection
// is still refused); a listed host name is dialled as it is, and so is a proxy, which is
// the operator's.
func (r Reach) dialer(host string) func(ctx context.Context, network, address string) (net.Conn, error) {
	plain := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	guarded := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second,
		Control: func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return err
			}
			if err := r.allows(ap.Addr(), fmt.Sprint(ap.Port())); err != nil {
				return refused(host, err.Error())
			}
			return nil
		}}
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		target, _, _ := net.SplitHostPort(address)
		if !strings.EqualFold(target, host) || r.Internal.listsName(host) {
			return plain.DialContext(ctx, network, address)
		}
		return guarded.DialContext(ctx, network, address)
	}
}

// APIServerAddresses are the addresses cfg's API server answers at, as Reach.APIServer takes
// them.
func APIServerAddresses(cfg *rest.Config) ([]netip.AddrPort, error) {
	u, err := url.Parse(cfg.Host)
	if err != nil || u.Hostname() == "" {
		u, err = url.Parse("https://" + cfg.Host)
	}
	if err != nil {
		return nil, fmt.Errorf("the API server's address %q: %w", cfg.Host, err)
	}
	port := portOf(u)
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("the API server's port %q: %w", port, err)
	}
	addrs, err := net.DefaultResolver.LookupNetIP(context.Background(), "ip", u.Hostname())
	if err != nil {
		return nil, fmt.Errorf("the API server's address %q: %w", cfg.Host, err)
	}
	out := make([]netip.AddrPort, 0, len(addrs))
	for _, a := range addrs {
		out = append(out, netip.AddrPortFrom(a.Unmap(), uint16(p)))
	}
	return out, nil
}

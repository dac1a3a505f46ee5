// Package backup takes snapshots of etcd clusters into an object store: from a follower when
// there is one, streamed in parts so memory stays flat, and counted only once the SHA-256
// etcd sends with the database matches it. It also says when backups are due and which
// retention deletes.
package backup

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/etcd"
)

// Target is a cluster to back up: client URLs that reach it and how to talk to it.
type Target struct {
	Endpoints   []string
	TLS         *tls.Config // nil for plain HTTP
	DialTimeout time.Duration
	// Keyspace: also read the member's keyspace fingerprint at the snapshot's revision, for a
	// verification.
	Keyspace bool
	// Confined: the snapshot comes only from a member that advertises one of Endpoints'
	// hosts. A cluster's member list is data its members' pods can write (a member added
	// with another cluster's client URL): it must not lead the manager elsewhere.
	Confined bool
}

// Take streams a snapshot of one of target's members to store, under the key keyFor gives
// for the snapshot's revision, and returns what it stored; the snapshot counts only if its
// SHA-256 checks out, else nothing is stored.
func Take(ctx context.Context, target Target, store Objects, keyFor func(revision int64) string) (v1beta2.BackupRecord, error) {
	start := time.Now()
	m, err := pickMember(ctx, target)
	if err != nil {
		return v1beta2.BackupRecord{}, err
	}
	snap, err := etcd.OpenSnapshot(ctx, target.DialTimeout, target.TLS, m.url)
	if err != nil {
		return v1beta2.BackupRecord{}, err
	}
	defer func() { _ = snap.Close() }()
	var keyspace *v1beta2.KeyspaceFingerprint
	if target.Keyspace {
		// Right after the snapshot began, from its member: the later, the likelier a
		// compaction moved the hash's first revision.
		k, err := snap.Keyspace(ctx)
		if err != nil {
			return v1beta2.BackupRecord{}, err
		}
		keyspace = Fingerprint(k)
	}
	key := keyFor(snap.Revision)
	var sum string
	size, err := store.Put(ctx, key, snap, func() error {
		var err error
		if sum, _, err = snap.Verify(); err != nil {
			return &Error{Reason: v1beta2.ReasonSnapshotCorrupt, Err: fmt.Errorf("the snapshot of %s was not stored: %w", m.name, err)}
		}
		return nil
	})
	if err != nil {
		return v1beta2.BackupRecord{}, err
	}
	return v1beta2.BackupRecord{
		Path: store.Path(key), Member: m.name, EtcdRevision: snap.Revision, EtcdVersion: snap.Version,
		Size: size, SHA256: sum, StartTime: metav1.NewTime(start), Duration: metav1.Duration{Duration: time.Since(start).Round(time.Millisecond)},
		Keyspace: keyspace,
	}, nil
}

// Fingerprint is k as status records it.
func Fingerprint(k etcd.Keyspace) *v1beta2.KeyspaceFingerprint {
	return &v1beta2.KeyspaceFingerprint{Revision: k.Revision, CompactRevision: k.CompactRevision, Keys: k.Keys, HashKV: fmt.Sprintf("%08x", k.Hash)}
}

// member is a member a snapshot could come from.
type member struct {
	name, url string
	leader    bool
}

// pickMember chooses a started voting member that answers, a follower when one does: a
// snapshot streams the whole database, and the leader should keep serving.
func pickMember(ctx context.Context, target Target) (member, error) {
	c, err := etcd.NewDialer(target.DialTimeout, target.TLS)(ctx, target.Endpoints)
	if err != nil {
		return member{}, err
	}
	defer func() { _ = c.Close() }()
	listCtx, cancel := context.WithTimeout(ctx, etcd.RequestTimeout)
	defer cancel()
	members, err := c.MemberList(listCtx)
	if err != nil {
		// Without a quorum no member lists the members, but each one that runs still streams
		// its own snapshot: the first step of recovering a cluster that lost its quorum.
		if m, ok := furthestAlong(ctx, c, target.Endpoints, target.DialTimeout); ok {
			return m, nil
		}
		return member{}, fmt.Errorf("no member at %s answers: %w", strings.Join(target.Endpoints, ", "), err)
	}
	ctx, cancel = context.WithTimeout(ctx, etcd.RequestTimeout)
	defer cancel()
	var candidates []member
	var errs []error
	hosts := make([]string, 0, len(target.Endpoints))
	for _, e := range target.Endpoints {
		hosts = append(hosts, urlHost(e))
	}
	for _, m := range members {
		if m.Name == "" || m.IsLearner || len(m.ClientURLs) == 0 {
			continue // not started, or catching up
		}
		if target.Confined && !slices.Contains(hosts, urlHost(m.ClientURLs[0])) {
			errs = append(errs, fmt.Errorf("member %s advertises %s, not one of the cluster's addresses: skipped", m.Name, m.ClientURLs[0]))
			continue
		}
		st, err := c.Status(ctx, m.ClientURLs[0])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		candidates = append(candidates, member{name: m.Name, url: m.ClientURLs[0], leader: st.Leader == m.ID})
	}
	if m, ok := follower(candidates); ok {
		return m, nil
	}
	return member{}, fmt.Errorf("no voting member answers: %w", errors.Join(errs...))
}

// furthestAlong is, of the endpoints that answer a status request within timeout, the member
// that applied the most (the highest raft index), named by its host.
func furthestAlong(ctx context.Context, c etcd.Client, endpoints []string, timeout time.Duration) (member, bool) {
	var best member
	var index uint64
	for _, e := range endpoints {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		st, err := c.Status(ctx, e)
		cancel()
		if err == nil && (best.url == "" || st.RaftIndex > index) {
			best, index = member{name: hostOf(e), url: e}, st.RaftIndex
		}
	}
	return best, best.url != ""
}

// hostOf is the host of a client URL: a member's name when etcd cannot say it (a pod's DNS
// name starts with it).
func hostOf(endpoint string) string {
	if u, err := url.Parse(endpoint); err == nil && u.Hostname() != "" {
		host, _, _ := strings.Cut(u.Hostname(), ".")
		if net.ParseIP(u.Hostname()) != nil {
			return u.Host
		}
		return host
	}
	return endpoint
}

// urlHost is the host of a client URL, lower case, or the URL when it has none.
func urlHost(endpoint string) string {
	if u, err := url.Parse(endpoint); err == nil && u.Hostname() != "" {
		return strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	}
	return endpoint
}

// follower is the first follower, else the leader, else none.
func follower(candidates []member) (member, bool) {
	for _, m := range candidates {
		if !m.leader {
			return m, true
		}
	}
	if len(candidates) > 0 {
		return candidates[0], true
	}
	return member{}, false
}

package etcd

import (
	"context"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Keyspace is a fingerprint of a member's keyspace at a revision: how many keys it held
// then, and etcd's HashKV of every revision from the member's compaction to it (the hash
// etcd's corruption check compares between members). A restore of a snapshot taken at the
// revision must show the same.
type Keyspace struct {
	Revision, CompactRevision, Keys int64
	Hash                            uint32
}

// KeyspaceAt reads the fingerprint of the member serving endpoint at revision.
func KeyspaceAt(ctx context.Context, c *clientv3.Client, endpoint string, revision int64) (Keyspace, error) {
	ctx, cancel := context.WithTimeout(ctx, RequestTimeout)
	defer cancel()
	h, err := c.HashKV(ctx, endpoint, revision)
	if err != nil {
		return Keyspace{}, fmt.Errorf("HashKV of %s at revision %d: %w", endpoint, revision, err)
	}
	// Serializable: the member's own keys, from the same endpoint (the client balances a
	// linearizable read to the leader).
	n, err := c.Get(ctx, "\x00", clientv3.WithFromKey(), clientv3.WithCountOnly(), clientv3.WithRev(revision), clientv3.WithSerializable())
	if err != nil {
		return Keyspace{}, fmt.Errorf("counting the keys of %s at revision %d: %w", endpoint, revision, err)
	}
	return Keyspace{Revision: revision, CompactRevision: h.CompactRevision, Keys: n.Count, Hash: h.Hash}, nil
}

// String says what the fingerprint holds.
func (k Keyspace) String() string {
	return fmt.Sprintf("%d keys and HashKV %08x at revision %d", k.Keys, k.Hash, k.Revision)
}

// Compare says whether got, a restore's fingerprint, shows want, the member's; it describes
// what it compared. When the member compacted between its snapshot and its fingerprint the
// two hashes cover different revisions: then only the keys are compared, and it says so.
func Compare(want, got Keyspace) (string, error) {
	switch {
	case got.Revision != want.Revision:
		return "", fmt.Errorf("the restore was read at revision %d, the member at %d", got.Revision, want.Revision)
	case got.Keys != want.Keys:
		return "", fmt.Errorf("the restore holds %d keys at revision %d, the member held %d", got.Keys, got.Revision, want.Keys)
	case got.CompactRevision != want.CompactRevision:
		return fmt.Sprintf("%d keys at revision %d, as on the member (HashKV not compared: the member compacted to revision %d after the snapshot's %d)",
			got.Keys, got.Revision, want.CompactRevision, got.CompactRevision), nil
	case got.Hash != want.Hash:
		return "", fmt.Errorf("the restore's HashKV at revision %d is %08x, the member's %08x: the same %d keys hold other values or history",
			got.Revision, got.Hash, want.Hash, got.Keys)
	}
	return got.String() + ", as on the member", nil
}

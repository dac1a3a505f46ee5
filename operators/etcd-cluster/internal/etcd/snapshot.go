package etcd

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// Snapshot is a point-in-time copy of one member's database, streamed as etcd sends it: the
// database, then etcd's SHA-256 of it (32 bytes), which is what `etcdctl snapshot save`
// writes and `etcdutl snapshot restore` checks. Read it to the end, then Verify.
type Snapshot struct {
	// Revision: every write up to it is in the snapshot. It is the member's revision just
	// before the snapshot began (etcd before 3.7 sends no header with a snapshot), or the
	// snapshot's own when etcd sends it.
	Revision int64
	// Version is the version of the member that made it (etcd 3.6 and later say it).
	Version string

	stream   io.ReadCloser
	client   *clientv3.Client
	endpoint string
	hash     *trailingHash
}

// ErrSnapshotCorrupt is returned by Verify when the database read does not match the SHA-256
// etcd sent after it.
var ErrSnapshotCorrupt = errors.New("snapshot corrupt")

// RequestTimeout bounds each request made before a snapshot streams.
const RequestTimeout = 10 * time.Second

// OpenSnapshot asks the member serving endpoint for a snapshot; ctx bounds the whole stream.
func OpenSnapshot(ctx context.Context, dialTimeout time.Duration, tlsConfig *tls.Config, endpoint string) (*Snapshot, error) {
	c, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{endpoint}, // a snapshot is one member's, never balanced
		DialTimeout: dialTimeout,
		Context:     ctx,
		Logger:      zap.NewNop(),
		TLS:         tlsConfig,
	})
	if err != nil {
		return nil, fmt.Errorf("connecting to etcd at %s: %w", endpoint, err)
	}
	getCtx, cancel := context.WithTimeout(ctx, RequestTimeout)
	defer cancel()
	before, err := c.Get(getCtx, "/", clientv3.WithSerializable(), clientv3.WithCountOnly())
	if err != nil {
		return nil, errors.Join(fmt.Errorf("reading the revision of %s: %w", endpoint, err), c.Close())
	}
	resp, err := c.SnapshotWithVersion(ctx)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("opening a snapshot of %s: %w", endpoint, err), c.Close())
	}
	s := &Snapshot{Revision: before.Header.Revision, Version: resp.Version, stream: resp.Snapshot, client: c, endpoint: endpoint, hash: newTrailingHash()}
	if resp.Header != nil && resp.Header.Revision != 0 {
		s.Revision = resp.Header.Revision
	}
	return s, nil
}

// Read reads the stream, hashing what it reads.
func (s *Snapshot) Read(p []byte) (int, error) {
	n, err := s.stream.Read(p)
	_, _ = s.hash.Write(p[:n])
	return n, err
}

// Verify, once the stream was read to its end, checks the database against the SHA-256
// etcd appended, and returns that SHA-256 in hexadecimal and the size read.
func (s *Snapshot) Verify() (string, int64, error) { return s.hash.verify() }

// Keyspace is the fingerprint of the member's keyspace at the snapshot's revision, from the
// member the snapshot streams from.
func (s *Snapshot) Keyspace(ctx context.Context) (Keyspace, error) {
	return KeyspaceAt(ctx, s.client, s.endpoint, s.Revision)
}

// Close ends the stream and the connection.
func (s *Snapshot) Close() error { return errors.Join(s.stream.Close(), s.client.Close()) }

// trailingHash hashes all but the last sha256.Size bytes written to it, and keeps those.
type trailingHash struct {
	h    hash.Hash
	tail []byte
	size int64
}

func newTrailingHash() *trailingHash {
	return &trailingHash{h: sha256.New(), tail: make([]byte, 0, 2*sha256.Size)}
}

func (t *trailingHash) Write(p []byte) (int, error) {
	t.size += int64(len(p))
	if len(p) >= sha256.Size {
		t.h.Write(t.tail)
		t.h.Write(p[:len(p)-sha256.Size])
		t.tail = append(t.tail[:0], p[len(p)-sha256.Size:]...)
		return len(p), nil
	}
	t.tail = append(t.tail, p...)
	if over := len(t.tail) - sha256.Size; over > 0 {
		t.h.Write(t.tail[:over])
		t.tail = append(t.tail[:0], t.tail[over:]...)
	}
	return len(p), nil
}

// verify checks the kept bytes against the hash of the rest. etcd's databases are whole
// pages, so a snapshot with its hash is 32 bytes over a multiple of 512, as etcdutl checks.
func (t *trailingHash) verify() (string, int64, error) {
	if t.size%512 != sha256.Size {
		return "", t.size, fmt.Errorf("%w: %d bytes is not a database and its SHA-256 (truncated?)", ErrSnapshotCorrupt, t.size)
	}
	if sum := t.h.Sum(nil); !bytes.Equal(sum, t.tail) {
		return "", t.size, fmt.Errorf("%w: the database's SHA-256 is %x, etcd sent %x", ErrSnapshotCorrupt, sum, t.tail)
	}
	return hex.EncodeToString(t.tail), t.size, nil
}

// VerifySnapshot reads a stored snapshot to its end and checks it as Verify does; it holds
// no more than a read buffer.
func VerifySnapshot(r io.Reader) (string, int64, error) {
	h := newTrailingHash()
	if _, err := io.Copy(h, r); err != nil {
		return "", h.size, fmt.Errorf("reading the snapshot: %w", err)
	}
	return h.verify()
}

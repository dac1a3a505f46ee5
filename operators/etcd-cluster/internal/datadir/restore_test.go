package datadir_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/backup"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/backup/backuptest"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/datadir"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/restore"
)

// The package's tests restore snapshots a real etcd member took, from a real S3 store, and
// start a real etcd on what they restored.
var (
	store  *backuptest.S3
	member *backuptest.Server
)

func TestMain(m *testing.M) {
	os.Exit(backuptest.Main(m, "restores", func(s *backuptest.S3, m *backuptest.Server) { store, member = s, m }))
}

func rootStore() *backup.Store { return store.Store("restores") }

func opener(key string) restore.Opener {
	return func(ctx context.Context) (io.ReadCloser, error) { return rootStore().Get(ctx, key) }
}

func connect(t *testing.T, url string) *clientv3.Client {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{url}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// backUp writes keys under prefix (a 1 MiB value and 500 small ones) and stores a snapshot
// of them at key; it returns what it wrote and the snapshot's record.
func backUp(t *testing.T, prefix, key string) (map[string]string, v1beta2.BackupRecord) {
	t.Helper()
	ctx := t.Context()
	c := connect(t, member.URL)
	written := map[string]string{prefix + "big": strings.Repeat("0123456789abcdef", 1<<16)}
	for i := range 500 {
		written[fmt.Sprintf("%ssmall-%03d", prefix, i)] = fmt.Sprint(i)
	}
	for k, v := range written {
		if _, err := c.Put(ctx, k, v); err != nil {
			t.Fatal(err)
		}
	}
	record, err := backup.Take(ctx, backup.Target{Endpoints: []string{member.URL}, DialTimeout: 5 * time.Second}, rootStore(),
		func(int64) string { return key })
	if err != nil {
		t.Fatal(err)
	}
	return written, record
}

// newMember is a member of a new one-member cluster, its data under a fresh folder.
func newMember(t *testing.T) (restore.Member, string) {
	t.Helper()
	clientURL, err := backuptest.FreeURL()
	if err != nil {
		t.Fatal(err)
	}
	peerURL, err := backuptest.FreeURL()
	if err != nil {
		t.Fatal(err)
	}
	return restore.Member{Name: "restored", DataDir: filepath.Join(t.TempDir(), "data"), PeerURL: peerURL,
		InitialCluster: "restored=" + peerURL, InitialClusterState: "new", Token: "restore-test"}, clientURL
}

func TestRestoreStartsANewMemberOnEveryKeyOfTheSnapshot(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	written, record := backUp(t, "whole/", "whole.db")
	m, clientURL := newMember(t)
	m.SHA256, m.RevisionBump = record.SHA256, 1000
	restored, err := datadir.Restore(ctx, zap.NewNop(), m, opener("whole.db"))
	if err != nil || !restored {
		t.Fatalf("Restore: %v, %v; want a restored member", restored, err)
	}
	if _, err := os.Stat(m.DataDir + ".restore"); !os.IsNotExist(err) {
		t.Errorf("the work folder is left: %v", err)
	}
	server, err := backuptest.StartMember(m.DataDir, m.Name, clientURL, m.PeerURL, filepath.Join(t.TempDir(), "etcd.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer server.Stop()
	resp, err := connect(t, clientURL).Get(ctx, "whole/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, kv := range resp.Kvs {
		got[string(kv.Key)] = string(kv.Value)
	}
	if len(got) != len(written) {
		t.Errorf("restored %d keys; want %d", len(got), len(written))
	}
	for k, v := range written {
		if got[k] != v {
			t.Errorf("key %s: %d bytes restored; want the %d written", k, len(got[k]), len(v))
		}
	}
	if resp.Header.Revision < record.EtcdRevision+1000 {
		t.Errorf("revision %d after a bump of 1000 over the snapshot's %d", resp.Header.Revision, record.EtcdRevision)
	}
	if _, err := connect(t, clientURL).Put(ctx, "whole/after", "x"); err != nil {
		t.Errorf("the restored member takes no write: %v", err)
	}

	server.Stop()
	restored, err = datadir.Restore(ctx, zap.NewNop(), m, func(context.Context) (io.ReadCloser, error) {
		t.Error("a member restarting on its data opened the snapshot")
		return nil, errors.New("unexpected")
	})
	if err != nil || restored {
		t.Errorf("Restore of a member with data: %v, %v; want nothing done", restored, err)
	}
}

func TestRestoreLeavesAJoiningMemberEmpty(t *testing.T) {
	t.Parallel()
	m, _ := newMember(t)
	m.InitialClusterState = "existing"
	restored, err := datadir.Restore(t.Context(), zap.NewNop(), m, func(context.Context) (io.ReadCloser, error) {
		return nil, errors.New("opened")
	})
	if err != nil || restored {
		t.Errorf("Restore of a joining member: %v, %v; want nothing done", restored, err)
	}
	if _, err := os.Stat(m.DataDir); !os.IsNotExist(err) {
		t.Errorf("a data directory was made: %v", err)
	}
}

func TestRestoreRefusesACorruptTruncatedOrOtherSnapshot(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	_, record := backUp(t, "bad/", "good.db")
	good, err := io.ReadAll(must(rootStore().Get(ctx, "good.db")))
	if err != nil {
		t.Fatal(err)
	}
	flipped := bytes.Clone(good)
	flipped[len(flipped)/2] ^= 0xff
	for name, body := range map[string][]byte{"flipped.db": flipped, "truncated.db": good[:len(good)-100]} {
		if _, err := rootStore().Put(ctx, name, bytes.NewReader(body), func() error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ key, sha256, want string }{
		{key: "flipped.db", want: "SHA-256"},
		{key: "truncated.db", want: "truncated"},
		{key: "good.db", sha256: strings.Repeat("0", 64), want: "the restore asks for"},
	} {
		t.Run(tc.key, func(t *testing.T) {
			m, _ := newMember(t)
			m.SHA256 = tc.sha256
			_, err := datadir.Restore(ctx, zap.NewNop(), m, opener(tc.key))
			if backup.ReasonOf(err) != v1beta2.ReasonSnapshotCorrupt || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Restore of %s: %v (reason %s); want SnapshotCorrupt saying %q", tc.key, err, backup.ReasonOf(err), tc.want)
			}
			if _, err := os.Stat(m.DataDir); !os.IsNotExist(err) {
				t.Errorf("a data directory was made: %v", err)
			}
		})
	}
	if record.SHA256 == "" {
		t.Error("the good snapshot has no SHA-256")
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

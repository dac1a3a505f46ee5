package backup_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/backup"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/backup/backuptest"
)

// The package's tests run against a real S3 store and a real etcd member on loopback.
var (
	store  *backuptest.S3
	member *backuptest.Server
)

func TestMain(m *testing.M) {
	os.Exit(backuptest.Main(m, "backups", func(s *backuptest.S3, m *backuptest.Server) { store, member = s, m }))
}

func rootStore() *backup.Store { return store.Store("backups") }

func read(t *testing.T, s *backup.Store, key string) []byte {
	t.Helper()
	body, err := s.Get(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = body.Close() }()
	b, err := io.ReadAll(body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestPutStoresOnlyWhatPassesTheCheck(t *testing.T) {
	t.Parallel()
	s := rootStore()
	refused := errors.New("refused")
	for name, size := range map[string]int{"one part": 1000, "three parts": 2*backup.PartSize + 4321} {
		t.Run(name, func(t *testing.T) {
			key := "put-" + strings.ReplaceAll(name, " ", "-")
			older := []byte("an older good backup")
			if _, err := s.Put(t.Context(), key, bytes.NewReader(older), func() error { return nil }); err != nil {
				t.Fatal(err)
			}
			body := bytes.Repeat([]byte{7, 1, 9}, size/3+1)[:size]
			if _, err := s.Put(t.Context(), key, bytes.NewReader(body), func() error { return refused }); !errors.Is(err, refused) {
				t.Fatalf("Put with a failing check = %v, want the check's error", err)
			}
			if got := read(t, s, key); !bytes.Equal(got, older) {
				t.Fatalf("after a refused Put the object holds %d bytes, want the older %d", len(got), len(older))
			}
			n, err := s.Put(t.Context(), key, bytes.NewReader(body), func() error { return nil })
			if err != nil || n != int64(size) {
				t.Fatalf("Put = %d, %v; want %d, nil", n, err, size)
			}
			if got := read(t, s, key); !bytes.Equal(got, body) {
				t.Fatalf("stored %d bytes differ from the %d put", len(got), size)
			}
		})
	}
}

func TestStoreErrorsSayWhatFailed(t *testing.T) {
	t.Parallel()
	good := backup.Credentials{AccessKeyID: store.AccessKey, SecretAccessKey: store.SecretKey, Region: "us-east-1"}
	wrongSecret := good
	wrongSecret.SecretAccessKey = "not-the-secret"
	unknownKey := good
	unknownKey.AccessKeyID = "nobody"
	closed := store.Source("backups/x", "unused")
	closed.Endpoint = "http://127.0.0.1:1"
	for _, tc := range []struct {
		name    string
		src     *v1beta2.S3BackupSource
		creds   backup.Credentials
		reason  string
		message string
	}{
		{"a wrong secret", store.Source("backups/x", "s"), wrongSecret, v1beta2.ReasonCredentialsInvalid, "refused the credentials"},
		{"an unknown access key", store.Source("backups/x", "s"), unknownKey, v1beta2.ReasonCredentialsInvalid, "refused the credentials"},
		{"no such bucket", store.Source("missing-bucket/x", "s"), good, v1beta2.ReasonStoreFailed, `bucket "missing-bucket" does not exist`},
		{"no answer", closed, good, v1beta2.ReasonStoreFailed, "connection refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			_, err := backup.NewS3Store(tc.src, tc.creds, backup.Anywhere).Put(ctx, "x", strings.NewReader("data"), func() error { return nil })
			if backup.ReasonOf(err) != tc.reason || !strings.Contains(fmt.Sprint(err), tc.message) {
				t.Fatalf("Put = %v (%s); want %s saying %q", err, backup.ReasonOf(err), tc.reason, tc.message)
			}
		})
	}
}

func TestTakeStoresAVerifiedSnapshotOfTheRevision(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{member.URL}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	if _, err := c.Put(ctx, "take/big", strings.Repeat("v", 1<<20)); err != nil {
		t.Fatal(err)
	}
	for i := range 2000 {
		if _, err := c.Put(ctx, fmt.Sprintf("take/small-%04d", i), fmt.Sprint(i)); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := c.Get(ctx, "take/big", clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	s := rootStore()
	record, err := backup.Take(ctx, backup.Target{Endpoints: []string{member.URL}, DialTimeout: 5 * time.Second}, s,
		func(revision int64) string { return backup.PeriodicKey("take", revision, time.Unix(0, 0)) })
	if err != nil {
		t.Fatal(err)
	}
	// Tests in parallel write other keys: the snapshot is at this test's writes or later.
	if record.EtcdRevision < resp.Header.Revision || record.Path != "backups/"+backup.PeriodicKey("take", record.EtcdRevision, time.Unix(0, 0)) {
		t.Errorf("record: revision %d at %s; want at least %d, named after it", record.EtcdRevision, record.Path, resp.Header.Revision)
	}
	stored := read(t, s, strings.TrimPrefix(record.Path, "backups/"))
	db, trailer := stored[:len(stored)-sha256.Size], stored[len(stored)-sha256.Size:]
	sum := sha256.Sum256(db)
	if int64(len(stored)) != record.Size || len(stored) < 1<<20 || hex.EncodeToString(trailer) != record.SHA256 || !bytes.Equal(sum[:], trailer) {
		t.Errorf("stored %d bytes ending in sha256 %x of a database whose sha256 is %x; record: %d bytes, sha256 %s",
			len(stored), trailer, sum, record.Size, record.SHA256)
	}
	if record.Member != "backuptest" || record.EtcdVersion == "" {
		t.Errorf("record: member %q, version %q; want backuptest and the member's version", record.Member, record.EtcdVersion)
	}
}

func TestResolveFindsTheObjectOrTheNewestPeriodicBackupUnderIt(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := rootStore()
	for _, key := range []string{"resolve/exact", "resolve/exact_v99_2026-01-01-00:00:00", "resolve/p_v5_2026-01-03-00:00:00",
		"resolve/p_v12_2026-01-01-00:00:00", "resolve/p_v9_2026-01-02-00:00:00", "resolve/p-other"} {
		if _, err := s.Put(ctx, key, strings.NewReader("x"), func() error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	for key, want := range map[string]string{"resolve/exact": "resolve/exact", "resolve/p": "resolve/p_v12_2026-01-01-00:00:00"} {
		if got, err := backup.Resolve(ctx, s, key); err != nil || got != want {
			t.Errorf("Resolve(%s) = %q, %v; want %q", key, got, err, want)
		}
	}
	if _, err := backup.Resolve(ctx, s, "resolve/none"); backup.ReasonOf(err) != v1beta2.ReasonSnapshotNotFound {
		t.Errorf("Resolve of nothing: %v (reason %s); want SnapshotNotFound", err, backup.ReasonOf(err))
	}
}

// A cluster that lost its quorum is backed up from a member that still runs: the first step
// of its recovery.
func TestTakeBacksUpAClusterThatLostItsQuorum(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	members, err := backuptest.StartCluster(t.TempDir(), 3)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, m := range members {
			m.Stop()
		}
	}()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{members[0].URL}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	put, err := c.Put(ctx, "quorum/key", "kept")
	if err != nil {
		t.Fatal(err)
	}
	members[1].Stop()
	members[2].Stop()
	endpoints := []string{members[0].URL, members[1].URL, members[2].URL}
	record, err := backup.Take(ctx, backup.Target{Endpoints: endpoints, DialTimeout: 2 * time.Second}, rootStore(),
		func(int64) string { return "quorum/lost.db" })
	if err != nil {
		t.Fatalf("a backup of the member left: %v", err)
	}
	if record.EtcdRevision < put.Header.Revision || record.Member != strings.TrimPrefix(members[0].URL, "http://") {
		t.Errorf("record: revision %d of %s; want at least %d, of the member left (%s)", record.EtcdRevision, record.Member, put.Header.Revision, members[0].URL)
	}
}

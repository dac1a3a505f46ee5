package backup_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/backup"
)

func TestFolderStoresOnlyWhatPassesTheCheck(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	f := backup.Folder{Dir: t.TempDir(), Name: "claim"}
	if _, err := f.Put(ctx, "etcd/one.db", strings.NewReader("good"), func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	refused := errors.New("hash mismatch")
	if _, err := f.Put(ctx, "etcd/one.db", strings.NewReader("corrupt"), func() error { return refused }); !errors.Is(err, refused) {
		t.Errorf("Put with a failing check: %v; want the check's error", err)
	}
	body, err := f.Get(ctx, "etcd/one.db")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(body)
	_ = body.Close()
	if string(got) != "good" {
		t.Errorf("the older backup is %q after a failed one; want it kept", got)
	}
	if parts, _ := filepath.Glob(filepath.Join(f.Dir, "etcd", "*.part")); len(parts) != 0 {
		t.Errorf("a failed backup left %v", parts)
	}
	if f.Path("etcd/one.db") != "claim/etcd/one.db" {
		t.Errorf("Path = %s", f.Path("etcd/one.db"))
	}
}

func TestFolderListsAndDeletesByPrefixAndResolvesTheNewest(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	f := backup.Folder{Dir: t.TempDir(), Name: "claim"}
	for _, key := range []string{"etcd/b_v3_x", "etcd/b_v12_x", "etcd/b-other", "top_v1_x"} {
		if _, err := f.Put(ctx, key, strings.NewReader(key), func() error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(f.Dir, "etcd", "b_v99_x.part"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	objects, err := f.List(ctx, "etcd/b_v")
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(objects))
	for _, o := range objects {
		keys = append(keys, o.Key)
	}
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"etcd/b_v12_x", "etcd/b_v3_x"}) {
		t.Errorf("List(etcd/b_v) = %v; want the two periodic backups, no file being written", keys)
	}
	if newest, err := backup.Resolve(ctx, f, "etcd/b"); err != nil || newest != "etcd/b_v12_x" {
		t.Errorf("Resolve(etcd/b) = %s, %v; want the highest revision", newest, err)
	}
	if top, err := f.List(ctx, "top_v"); err != nil || len(top) != 1 {
		t.Errorf("List(top_v) = %v, %v; want one at the volume's root", top, err)
	}
	if err := f.Delete(ctx, "etcd/b_v3_x"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Get(ctx, "etcd/b_v3_x"); backup.ReasonOf(err) != v1beta2.ReasonSnapshotNotFound {
		t.Errorf("Get of a deleted backup: %v; want SnapshotNotFound", err)
	}
	if missing, err := f.List(ctx, "none/x"); err != nil || missing != nil {
		t.Errorf("List of a folder that does not exist = %v, %v; want nothing", missing, err)
	}
}

// The Job of a periodic backup to a volume takes the backup and prunes the volume as the
// manager prunes a bucket.
func TestRunJobKeepsMaxBackupsOnTheVolume(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := map[string]string{backup.EnvJobEndpoints: member.URL, backup.EnvJobClaim: "claim", backup.EnvJobKey: "etcd/periodic",
		backup.EnvJobPeriodic: "true", backup.EnvJobMaxBackups: "2", backup.EnvJobTimeout: "1m"}
	start := time.Now()
	var last backup.JobResult
	for i := range 3 {
		last = backup.RunJob(t.Context(), func(k string) string { return env[k] }, dir, filepath.Join(dir, "no-tls"), start.Add(time.Duration(i)*time.Hour), nil)
		if last.Record == nil {
			t.Fatalf("backup %d: %s: %s", i, last.Reason, last.Message)
		}
		if err := os.Chtimes(filepath.Join(dir, strings.TrimPrefix(last.Record.Path, "claim/")), time.Time{}, start.Add(time.Duration(i)*time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "etcd", "periodic_v*"))
	if len(files) != 2 || len(last.Pruned) != 1 || !strings.HasPrefix(last.Record.Path, "claim/etcd/periodic_v") {
		t.Errorf("after 3 backups with maxBackups 2: files %v, pruned %v, last %s", files, last.Pruned, last.Record.Path)
	}
	failed := backup.RunJob(t.Context(), func(k string) string {
		if k == backup.EnvJobEndpoints {
			return "http://127.0.0.1:1"
		}
		return env[k]
	}, dir, filepath.Join(dir, "no-tls"), start, nil)
	if failed.Err() == nil || backup.ReasonOf(failed.Err()) != v1beta2.ReasonClusterUnreachable {
		t.Errorf("a backup of nothing: %+v; want ClusterUnreachable", failed)
	}
}

// A backup to a volume that is full (a real ENOSPC: the file written is /dev/full) fails as
// StoreFailed and leaves the older backup as it was.
func TestRunJobOnAFullVolumeKeepsTheOlderBackup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := map[string]string{backup.EnvJobEndpoints: member.URL, backup.EnvJobClaim: "claim", backup.EnvJobKey: "etcd/one.db", backup.EnvJobTimeout: "1m"}
	getenv := func(k string) string { return env[k] }
	if r := backup.RunJob(t.Context(), getenv, dir, filepath.Join(dir, "no-tls"), time.Now(), nil); r.Record == nil {
		t.Fatalf("first backup: %s: %s", r.Reason, r.Message)
	}
	file := filepath.Join(dir, "etcd", "one.db")
	older, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/full", file+".part"); err != nil {
		t.Fatal(err)
	}
	full := backup.RunJob(t.Context(), getenv, dir, filepath.Join(dir, "no-tls"), time.Now(), nil)
	if full.Record != nil || full.Reason != v1beta2.ReasonStoreFailed || !strings.Contains(full.Message, "is full") {
		t.Errorf("a backup to a full volume: %+v; want StoreFailed, full", full)
	}
	if now, err := os.ReadFile(file); err != nil || string(now) != string(older) {
		t.Errorf("the older backup after a failed one: %d bytes, %v; want it as it was (%d bytes)", len(now), err, len(older))
	}
}

// A verification that finds the backup differs from its member deletes it and prunes
// nothing; one that could not compare leaves it.
func TestRunJobDeletesABackupThatFailsVerification(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := map[string]string{backup.EnvJobEndpoints: member.URL, backup.EnvJobClaim: "claim", backup.EnvJobKey: "etcd/periodic",
		backup.EnvJobPeriodic: "true", backup.EnvJobMaxBackups: "1", backup.EnvJobTimeout: "1m", backup.EnvJobVerify: "true"}
	getenv := func(k string) string { return env[k] }
	var seen *v1beta2.KeyspaceFingerprint
	verifier := func(err error) backup.Verifier {
		return func(ctx context.Context, open func(context.Context) (io.ReadCloser, error), _ string, want *v1beta2.KeyspaceFingerprint) (string, error) {
			seen = want
			body, oerr := open(ctx)
			if oerr != nil {
				return "", oerr
			}
			_ = body.Close()
			return "compared", err
		}
	}
	good := backup.RunJob(t.Context(), getenv, dir, filepath.Join(dir, "no-tls"), time.Now(), verifier(nil))
	if good.Record == nil || good.Record.Verification == nil || good.Record.Verification.Message != "compared" || seen == nil || seen.Revision != good.Record.EtcdRevision {
		t.Fatalf("a verified backup: %+v (fingerprint %+v)", good, seen)
	}
	differs := &backup.Error{Reason: v1beta2.ReasonVerificationFailed, Err: errors.New("3 keys, the member held 4")}
	bad := backup.RunJob(t.Context(), getenv, dir, filepath.Join(dir, "no-tls"), time.Now().Add(time.Hour), verifier(differs))
	if bad.Record != nil || bad.Reason != v1beta2.ReasonVerificationFailed || !strings.Contains(bad.Message, "was deleted") || len(bad.Pruned) != 0 {
		t.Errorf("a backup that differs: %+v; want VerificationFailed, deleted, nothing pruned", bad)
	}
	unknown := backup.RunJob(t.Context(), getenv, dir, filepath.Join(dir, "no-tls"), time.Now().Add(2*time.Hour), verifier(errors.New("scratch etcd did not start")))
	if unknown.Record != nil || unknown.Reason != v1beta2.ReasonJobFailed {
		t.Errorf("a verification that never compared: %+v; want JobFailed", unknown)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "etcd", "periodic_v*"))
	if len(files) != 2 {
		t.Errorf("files after a verified, a differing and an uncompared backup: %v; want the verified and the uncompared", files)
	}
}

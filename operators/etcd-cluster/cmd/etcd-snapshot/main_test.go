package main

import (
	"strings"
	"testing"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/restore"
)

// restore-member reads the member as the operator writes it (restore.MemberEnv, the
// same variables as etcd's), and the snapshot's place: a claim's file, or an S3 object.
func TestRestoreMemberReadsWhatTheOperatorWrites(t *testing.T) {
	want := restore.Member{Name: "c-0", DataDir: "/var/lib/etcd/data", PeerURL: "http://c-0.c.ns.svc:2380", InitialCluster: "c-0=http://c-0.c.ns.svc:2380",
		InitialClusterState: "new", Token: "c-uid", SHA256: "ab", RevisionBump: 1000}
	env := map[string]string{}
	for _, e := range append(restore.MemberEnv(want), restore.VolumeEnv(&v1beta2.PVCBackupSource{ClaimName: "backups", Path: "etcd/c.db"})...) {
		env[e.Name] = e.Value
	}
	m, open, err := memberFromEnv(func(k string) string { return env[k] })
	if err != nil || open == nil || m != want {
		t.Errorf("memberFromEnv = %+v, %v; want %+v", m, err, want)
	}
	if _, err := open(t.Context()); err == nil || !strings.Contains(err.Error(), "no object backups/etcd/c.db, nor a periodic backup under it") {
		t.Errorf("opening a claim's file that is not there: %v; want no such object", err)
	}
	env[restore.EnvRevisionBump] = "lots"
	if _, _, err := memberFromEnv(func(k string) string { return env[k] }); err == nil {
		t.Error("a revision bump that is not a number was taken")
	}
}

// verify-backup reads the fingerprint the operator writes.
func TestVerifyBackupReadsTheFingerprintTheOperatorWrites(t *testing.T) {
	want := &v1beta2.KeyspaceFingerprint{Revision: 12, CompactRevision: 3, Keys: 7, HashKV: "0badcafe"}
	env := map[string]string{}
	for _, e := range restore.KeyspaceEnv(want) {
		env[e.Name] = e.Value
	}
	got, err := restore.KeyspaceFromEnv(func(k string) string { return env[k] })
	if err != nil || *got != *want {
		t.Errorf("KeyspaceFromEnv = %+v, %v; want %+v", got, err, want)
	}
}

// etcd-snapshot runs one of its commands, and nothing else.
func TestEtcdSnapshotRefusesAnythingButOneOfItsCommands(t *testing.T) {
	for _, args := range [][]string{nil, {"manager"}, {"restore-member", "extra"}} {
		if code := run(args); code != 2 {
			t.Errorf("etcd-snapshot %q exited %d; want 2, the usage", args, code)
		}
	}
}

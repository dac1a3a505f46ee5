package main

import (
	"testing"

	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/controller/etcdbackup"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/controller/etcdcluster"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/restore"
	"github.com/quintet-operators/quintet/shared/manager/managertest"
)

// Without OLM's OPERATOR_CONDITION_NAME, the Upgradeable controller is not added.
func TestEveryControllerRunsTheWorkersTheFlagSays(t *testing.T) {
	o := options{}
	managertest.ExpectWorkers(t, "../config/crd/bases", o.name(), newScheme(), o.setup, []string{"etcdbackup", "etcdcluster", "etcdrestore"}, etcdcluster.CacheOptions, etcdbackup.CacheOptions)
}

// restore-member reads the member as etcd does, and the snapshot the operator checked.
func TestRestoreMemberReadsEtcdsEnvironment(t *testing.T) {
	env := map[string]string{
		"ETCD_NAME": "c-0", "ETCD_DATA_DIR": "/var/lib/etcd/data", "ETCD_INITIAL_ADVERTISE_PEER_URLS": "http://c-0.c.ns.svc:2380",
		"ETCD_INITIAL_CLUSTER": "c-0=http://c-0.c.ns.svc:2380", "ETCD_INITIAL_CLUSTER_STATE": "new", "ETCD_INITIAL_CLUSTER_TOKEN": "c-uid",
		restore.EnvSHA256: "ab", restore.EnvRevisionBump: "1000",
	}
	m, open, err := memberFromEnv(func(k string) string { return env[k] })
	want := restore.Member{Name: "c-0", DataDir: "/var/lib/etcd/data", PeerURL: "http://c-0.c.ns.svc:2380", InitialCluster: "c-0=http://c-0.c.ns.svc:2380",
		InitialClusterState: "new", Token: "c-uid", SHA256: "ab", RevisionBump: 1000}
	if err != nil || open == nil || m != want {
		t.Errorf("memberFromEnv = %+v, %v; want %+v", m, err, want)
	}
	env[restore.EnvRevisionBump] = "lots"
	if _, _, err := memberFromEnv(func(k string) string { return env[k] }); err == nil {
		t.Error("a revision bump that is not a number was taken")
	}
}

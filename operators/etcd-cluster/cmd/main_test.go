package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/controller/etcdcluster"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/jobs"
	"github.com/quintet-operators/quintet/shared/manager/managertest"
)

// Without OLM's OPERATOR_CONDITION_NAME, the Upgradeable controller is not added.
func TestEveryControllerRunsTheWorkersTheFlagSays(t *testing.T) {
	o := options{}
	managertest.ExpectWorkers(t, "../config/crd/bases", o.name(), newScheme(), o.setup, []string{"etcdbackup", "etcdcluster", "etcdrestore"}, etcdcluster.CacheOptions, jobs.CacheOptions)
}

// The manager does not link etcd's server or etcdutl (the restore and verification code of
// etcd-snapshot, the pods' binary): under a container's memory limit, the manager's code has
// to fit in what its heap leaves.
func TestTheManagerLinksNoEtcdServer(t *testing.T) {
	out, err := exec.CommandContext(t.Context(), "go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for pkg := range strings.FieldsSeq(string(out)) {
		if strings.HasPrefix(pkg, "go.etcd.io/etcd/server/") || strings.HasPrefix(pkg, "go.etcd.io/etcd/etcdutl/") {
			t.Errorf("the manager links %s", pkg)
		}
	}
}

package main

import (
	"testing"

	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/controller/etcdcluster"
	"github.com/quintet-operators/quintet/shared/manager/managertest"
)

// Without OLM's OPERATOR_CONDITION_NAME, the Upgradeable controller is not added.
func TestEveryControllerRunsTheWorkersTheFlagSays(t *testing.T) {
	o := options{}
	managertest.ExpectWorkers(t, "../config/crd/bases", o.name(), newScheme(), o.setup, []string{"etcdbackup", "etcdcluster"}, etcdcluster.CacheOptions)
}

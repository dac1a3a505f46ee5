package main

import (
	"testing"

	"github.com/quintet-operators/quintet/operators/kre-runtime/internal/controller/kreruntime"
	"github.com/quintet-operators/quintet/shared/manager/managertest"
)

func TestEveryControllerRunsTheWorkersTheFlagSays(t *testing.T) {
	managertest.ExpectWorkers(t, "../config/crd/bases", "kre-runtime", newScheme(), setup, []string{"runtime", "runtimeversion"}, kreruntime.CacheOptions)
}

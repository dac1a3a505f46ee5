package main

import (
	"testing"

	minimartctrl "github.com/quintet-operators/quintet/operators/minimart/internal/controller/minimart"
	"github.com/quintet-operators/quintet/operators/minimart/internal/release"
	"github.com/quintet-operators/quintet/shared/manager/managertest"
)

func TestEveryControllerRunsTheWorkersTheFlagSays(t *testing.T) {
	managertest.ExpectWorkers(t, "../config/crd/bases", "minimart", newScheme(), setup(release.DefaultMaxHistory), []string{"minimart"}, minimartctrl.CacheOptions)
}

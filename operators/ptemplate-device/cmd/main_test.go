package main

import (
	"testing"

	"github.com/quintet-operators/quintet/operators/ptemplate-device/internal/controller/ptemplate"
	"github.com/quintet-operators/quintet/shared/manager/managertest"
)

func TestEveryControllerRunsTheWorkersTheFlagSays(t *testing.T) {
	managertest.ExpectWorkers(t, "../config/crd/bases", "ptemplate-device", newScheme(), setup, []string{"ptemplate"}, ptemplate.CacheOptions)
}

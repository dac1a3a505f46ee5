package main

import (
	"testing"

	"github.com/quintet-operators/quintet/operators/gordon/internal/controller/gordon"
	"github.com/quintet-operators/quintet/shared/manager/managertest"
)

func TestEveryControllerRunsTheWorkersTheFlagSays(t *testing.T) {
	managertest.ExpectWorkers(t, "../config/crd/bases", "gordon", newScheme(), setup, []string{"gordon"}, gordon.CacheOptions)
}

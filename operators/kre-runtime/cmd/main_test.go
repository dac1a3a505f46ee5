package main

import (
	"flag"
	"io"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/quintet-operators/quintet/operators/kre-runtime/internal/controller/kreruntime"
	"github.com/quintet-operators/quintet/shared/manager"
	"github.com/quintet-operators/quintet/shared/manager/managertest"
)

func TestEveryControllerRunsTheWorkersTheFlagSays(t *testing.T) {
	managertest.ExpectWorkers(t, "../config/crd/bases", "kre-runtime", newScheme(), setup(kreruntime.EntrypointPolicy{}),
		[]string{"runtime", "runtimeversion"}, kreruntime.CacheOptions)
}

func TestTheEntrypointPolicyComesFromTheEnvironmentAndTheCommandLineWins(t *testing.T) {
	g := NewWithT(t)
	parse := func(args ...string) kreruntime.EntrypointPolicy {
		fs := flag.NewFlagSet("manager", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var p kreruntime.EntrypointPolicy
		bindEntrypointPolicy(fs, &p)
		g.Expect(manager.SetFromEnv(fs, map[string]string{"entrypoint-hosts": "ENTRYPOINT_HOSTS", "ingress-classes": "INGRESS_CLASSES"})).To(Succeed())
		g.Expect(fs.Parse(args)).To(Succeed())
		return p
	}
	g.Expect(parse()).To(Equal(kreruntime.EntrypointPolicy{}), "no flag, no variable: any host and class")

	t.Setenv("ENTRYPOINT_HOSTS", "*.{namespace}.apps.example.com, runtime.local")
	t.Setenv("INGRESS_CLASSES", "public")
	g.Expect(parse()).To(Equal(kreruntime.EntrypointPolicy{
		Hosts: []string{"*.{namespace}.apps.example.com", "runtime.local"}, IngressClasses: []string{"public"}}))
	g.Expect(parse("--ingress-classes=internal,public").IngressClasses).To(Equal([]string{"internal", "public"}))
}

package main

import (
	"flag"
	"io"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/quintet-operators/quintet/operators/ptemplate-device/internal/controller/ptemplate"
	"github.com/quintet-operators/quintet/shared/manager/managertest"
)

func TestEveryControllerRunsTheWorkersTheFlagSays(t *testing.T) {
	managertest.ExpectWorkers(t, "../config/crd/bases", "ptemplate-device", newScheme(), setup(ptemplate.DefaultPolicy()), []string{"ptemplate"}, ptemplate.CacheOptions)
}

func TestThePolicyFlagsReplaceTheDefaultsAndRefuseMalformedEntries(t *testing.T) {
	g := NewWithT(t)
	parse := func(args ...string) (ptemplate.Policy, error) {
		fs := flag.NewFlagSet("manager", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		p := ptemplate.DefaultPolicy()
		bindPolicy(fs, &p)
		return p, fs.Parse(args)
	}
	p, err := parse()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(p).To(Equal(ptemplate.DefaultPolicy()))

	p, err = parse("--kernel-modules=gpu=registry.example.com/kmods/*,gpu=quay.io/acme/gpu,nic=quay.io/acme/nic",
		"--device-plugin-images=registry.example.com/plugins/*", "--module-node-selector=kmm=allowed,pool=gpu")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(p).To(Equal(ptemplate.Policy{
		KernelModules:      map[string][]string{"gpu": {"registry.example.com/kmods/*", "quay.io/acme/gpu"}, "nic": {"quay.io/acme/nic"}},
		DevicePluginImages: []string{"registry.example.com/plugins/*"},
		NodeSelector:       map[string]string{"kmm": "allowed", "pool": "gpu"},
	}))

	_, err = parse("--kernel-modules=quay.io/acme/gpu")
	g.Expect(err).To(MatchError(ContainSubstring(`"quay.io/acme/gpu" is not <module>=<image repository>`)))
	_, err = parse("--module-node-selector=kmm")
	g.Expect(err).To(HaveOccurred())
}

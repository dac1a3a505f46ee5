package robustness

import (
	"net"
	"strings"
	"testing"
)

func TestTargetRefusesWhatTheHarnessDidNotMake(t *testing.T) {
	made := Target{APIServer: "https://10.244.76.1:6443", Local: []net.IP{net.ParseIP("10.244.76.1")},
		Name: "robustness", Labels: map[string]string{HarnessLabel: "true"}, Endpoint: "10.96.0.12:2379"}
	if err := made.Refusal(); err != nil {
		t.Fatalf("the harness's own cluster refused: %v", err)
	}
	onLoopback := made
	onLoopback.APIServer, onLoopback.Local = "https://127.0.0.1:6443", nil
	if err := onLoopback.Refusal(); err != nil {
		t.Fatalf("an API server on loopback refused: %v", err)
	}
	for name, tc := range map[string]struct {
		change func(*Target)
		says   string
	}{
		"a remote API server":      {func(t *Target) { t.APIServer = "https://k8s.example.com:6443" }, "not the local cluster's"},
		"a public etcd endpoint":   {func(t *Target) { t.Endpoint = "203.0.113.7:2379" }, "not an address on this machine"},
		"an etcd endpoint by name": {func(t *Target) { t.Endpoint = "etcd.example.com:2379" }, "not an address on this machine"},
		"another name":             {func(t *Target) { t.Name = "production" }, `does not start with "robustness"`},
		"no harness label":         {func(t *Target) { t.Labels = nil }, "label robustness.quintet.dev/harness=true is missing"},
	} {
		t.Run(name, func(t *testing.T) {
			target := made
			tc.change(&target)
			err := target.Refusal()
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("refusal %v, want one saying %q", err, tc.says)
			}
		})
	}
}

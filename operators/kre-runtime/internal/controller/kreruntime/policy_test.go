package kreruntime

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/quintet-operators/quintet/operators/kre-runtime/api/v1alpha1"
)

func TestEntrypointPolicyRefusal(t *testing.T) {
	policy := EntrypointPolicy{Hosts: []string{"runtime.local", "*.{namespace}.apps.example.com"}, IngressClasses: []string{"public"}}
	runtime := func(host string, class *string) *v1alpha1.Runtime {
		rt := &v1alpha1.Runtime{ObjectMeta: metav1.ObjectMeta{Name: "rt", Namespace: "team-a"}}
		rt.Spec.Entrypoint = v1alpha1.RuntimeEntrypoint{Host: host, IngressClassName: class}
		return rt
	}
	tests := []struct {
		name   string
		policy EntrypointPolicy
		rt     *v1alpha1.Runtime
		refuse []string // words the refusal holds; none: allowed
	}{
		{"an empty policy allows any host and class", EntrypointPolicy{}, runtime("shop.example.com", ptr.To("private")), nil},
		{"a listed host", policy, runtime("runtime.local", nil), nil},
		{"no host is the default host", policy, runtime("", nil), nil},
		{"a name under the namespace's own domain", policy, runtime("kre.team-a.apps.example.com", ptr.To("public")), nil},
		{"a deeper name under it", policy, runtime("a.b.team-a.apps.example.com", nil), nil},
		{"another namespace's domain", policy, runtime("kre.team-b.apps.example.com", nil),
			[]string{`"kre.team-b.apps.example.com"`, "*.team-a.apps.example.com", "namespace team-a"}},
		{"the domain itself is not under it", policy, runtime("team-a.apps.example.com", nil), []string{"entrypoint.host"}},
		{"a look-alike suffix", policy, runtime("kre.evil-team-a.apps.example.com", nil), []string{"entrypoint.host"}},
		{"a class not listed", policy, runtime("runtime.local", ptr.To("private")), []string{`ingressClassName "private"`, "public"}},
		{"both refused at once", policy, runtime("shop.example.com", ptr.To("private")), []string{"entrypoint.host", "ingressClassName"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.policy.Refusal(tt.rt)
			if len(tt.refuse) == 0 {
				if got != "" {
					t.Fatalf("refused: %s", got)
				}
				return
			}
			for _, want := range append(tt.refuse, "--entrypoint-hosts") {
				if !strings.Contains(got, want) {
					t.Errorf("refusal %q lacks %q", got, want)
				}
			}
		})
	}
}

package kreruntime

import (
	"crypto/rand"
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quintet-operators/quintet/operators/kre-runtime/api/v1alpha1"
)

// generatedSecretLength is the length of a generated password or secret key.
const generatedSecretLength = 24

// credentialsSecret is the Secret the operator keeps c's credentials in: the spec's inline
// values, or generated ones (a user name of the component's name and a random secret).
// Generated credentials are made once: the operator never replaces an existing Secret's
// values with new random ones, which would lock the component out of its own data.
func credentialsSecret(rt *v1alpha1.Runtime, c component) *corev1.Secret {
	data := maps.Clone(c.credentials.inline)
	if data == nil {
		data = map[string][]byte{c.credentials.keys[0]: []byte("kre-" + c.name), c.credentials.keys[1]: []byte(rand.Text()[:generatedSecretLength])}
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: c.credentials.secret, Namespace: rt.Namespace, Labels: objectLabels(rt, c.name)},
		Type:       corev1.SecretTypeOpaque,
		Data:       data,
	}
}

package restore

import (
	"errors"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
)

// The environment that tells a verification what the member held: KeyspaceEnv writes it,
// KeyspaceFromEnv reads it back.
const (
	EnvKeyspaceRevision        = "VERIFY_REVISION"
	EnvKeyspaceCompactRevision = "VERIFY_COMPACT_REVISION"
	EnvKeyspaceKeys            = "VERIFY_KEYS"
	EnvKeyspaceHash            = "VERIFY_HASH_KV"
)

// KeyspaceEnv is k as a verification's environment.
func KeyspaceEnv(k *v1beta2.KeyspaceFingerprint) []corev1.EnvVar {
	return []corev1.EnvVar{
		{Name: EnvKeyspaceRevision, Value: strconv.FormatInt(k.Revision, 10)},
		{Name: EnvKeyspaceCompactRevision, Value: strconv.FormatInt(k.CompactRevision, 10)},
		{Name: EnvKeyspaceKeys, Value: strconv.FormatInt(k.Keys, 10)},
		{Name: EnvKeyspaceHash, Value: k.HashKV},
	}
}

// KeyspaceFromEnv reads what KeyspaceEnv wrote.
func KeyspaceFromEnv(getenv func(string) string) (*v1beta2.KeyspaceFingerprint, error) {
	k := &v1beta2.KeyspaceFingerprint{HashKV: getenv(EnvKeyspaceHash)}
	errs := make([]error, 0, 3)
	for name, v := range map[string]*int64{EnvKeyspaceRevision: &k.Revision, EnvKeyspaceCompactRevision: &k.CompactRevision, EnvKeyspaceKeys: &k.Keys} {
		n, err := strconv.ParseInt(getenv(name), 10, 64)
		errs = append(errs, err)
		*v = n
	}
	return k, errors.Join(errs...)
}

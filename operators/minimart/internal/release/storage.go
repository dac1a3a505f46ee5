package release

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
)

// releaseSecrets is Helm's Secrets storage driver writing releases with compressors it keeps
// between writes. Helm's own makes a gzip compressor for every release it writes, about
// 0.76 MB (the deflate window and hash chains): at 1000 Minimarts that was a quarter of all
// the manager allocated while they installed (two writes each), and one more per uninstall.
// The Secrets it writes are Helm's, byte for byte (the same encoding, labels and type), so
// the helm CLI and Helm's driver read them; reading is Helm's driver's own.
// Reading refuses a revision that does not stay in the namespace (confine.go).
type releaseSecrets struct {
	*driver.Secrets
	secrets   corev1client.SecretInterface
	namespace string
	mapper    meta.RESTMapper
}

func newReleaseSecrets(secrets corev1client.SecretInterface, namespace string, mapper meta.RESTMapper) *releaseSecrets {
	return &releaseSecrets{Secrets: driver.NewSecrets(secrets), secrets: secrets, namespace: namespace, mapper: mapper}
}

// Create stores rls under key, as Helm's driver does: ErrReleaseExists when it is there.
func (s *releaseSecrets) Create(key string, rls *release.Release) error {
	obj, err := releaseSecret(key, rls, "createdAt")
	if err != nil {
		return fmt.Errorf("create: failed to encode release %q: %w", rls.Name, err)
	}
	if _, err := s.secrets.Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return driver.ErrReleaseExists
		}
		return fmt.Errorf("create: failed to create: %w", err)
	}
	return nil
}

// Update replaces the release stored under key with rls, as Helm's driver does.
func (s *releaseSecrets) Update(key string, rls *release.Release) error {
	obj, err := releaseSecret(key, rls, "modifiedAt")
	if err != nil {
		return fmt.Errorf("update: failed to encode release %q: %w", rls.Name, err)
	}
	if _, err := s.secrets.Update(context.Background(), obj, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update: failed to update: %w", err)
	}
	return nil
}

// Delete removes the Secret under key, and a Secret already gone counts as removed. Helm's
// driver reads and decodes the release first, to return it, and fails with ErrReleaseNotFound
// when it is gone: a namespace's controller deletes a release's Secrets while the Minimart's
// uninstall runs, and Helm's uninstall then failed its purge ("release: not found") with
// nothing of the release left. The release is not returned: Helm's callers, the purge and the
// pruning of a history, discard it.
func (s *releaseSecrets) Delete(key string) (*release.Release, error) {
	if err := s.secrets.Delete(context.Background(), key, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("delete: %w", err)
	}
	return nil, nil
}

// releaseSecret is the Secret Helm stores rls in under key: the release's own labels, then
// Helm's (name, owner, status, version, and the time of this write under stamp), type
// helm.sh/release.v1, and the encoded release under "release".
func releaseSecret(key string, rls *release.Release, stamp string) (*corev1.Secret, error) {
	encoded, err := encodeRelease(rls)
	if err != nil {
		return nil, err
	}
	labels := make(map[string]string, len(rls.Labels)+5)
	for k, v := range rls.Labels {
		labels[k] = v
	}
	labels[stamp] = strconv.FormatInt(time.Now().Unix(), 10)
	labels["name"] = rls.Name
	labels["owner"] = "helm"
	labels["status"] = rls.Info.Status.String()
	labels["version"] = strconv.Itoa(rls.Version)
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: key, Labels: labels},
		Type:       "helm.sh/release.v1",
		Data:       map[string][]byte{"release": encoded},
	}, nil
}

// compressors keeps gzip writers between releases. A sync.Pool gives them back to the
// collector when writes stop, so an idle manager holds none.
var compressors = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(nil, gzip.BestCompression) // a valid level: no error
	return w
}}

// encodeRelease is Helm's encoding of a release: its JSON, gzipped at the best compression,
// in base64.
func encodeRelease(rls *release.Release) ([]byte, error) {
	js, err := json.Marshal(rls)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	w := compressors.Get().(*gzip.Writer)
	defer compressors.Put(w) // Reset clears its tables (640 KB) when it is taken again, not twice
	w.Reset(&buf)
	if _, err := w.Write(js); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	encoded := make([]byte, base64.StdEncoding.EncodedLen(buf.Len()))
	base64.StdEncoding.Encode(encoded, buf.Bytes())
	return encoded, nil
}

package backup

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/shared/conditions"
)

// OpenStore is the store of src, signed with the credentials of its awsSecret in namespace,
// read with reader (the API server: the manager's cache holds only the Secrets of clusters);
// an endpoint reach does not allow is refused (EndpointNotAllowed) before the Secret is read.
func OpenStore(ctx context.Context, reader client.Reader, namespace string, src *v1beta2.S3BackupSource, reach Reach) (*Store, error) {
	if src.Endpoint != "" {
		if err := reach.check(ctx, src.Endpoint); err != nil {
			return nil, err
		}
	}
	data, err := SecretData(ctx, reader, namespace, src.AWSSecret)
	if err != nil {
		return nil, err
	}
	creds, err := CredentialsFrom(data)
	if err != nil {
		return nil, &Error{Reason: v1beta2.ReasonCredentialsInvalid, Err: fmt.Errorf("awsSecret %s: %w", src.AWSSecret, err)}
	}
	return NewS3Store(src, creds, reach), nil
}

// SecretData is the data of a Secret a backup or restore names; a missing one is
// CredentialsInvalid.
func SecretData(ctx context.Context, reader client.Reader, namespace, name string) (map[string][]byte, error) {
	s := &corev1.Secret{}
	if err := reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, s); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, &Error{Reason: v1beta2.ReasonCredentialsInvalid, Err: fmt.Errorf("no Secret %q in namespace %s", name, namespace)}
		}
		return nil, ReadFailed(err)
	}
	return s.Data, nil
}

// ReadFailed is a failed read of the API server: retried, and reported as such rather than
// as the cluster's or the store's fault.
func ReadFailed(err error) error {
	return &Error{Reason: conditions.ReasonReconcileFailed, Err: err}
}

package release

import (
	"fmt"
	"strings"

	"helm.sh/helm/v3/pkg/release"
	"k8s.io/apimachinery/pkg/api/meta"
)

// A release's history is Secrets in its namespace, which whoever may write Secrets there can
// forge: a revision whose manifest names objects elsewhere would have the manager create
// them (restoring drift), upgrade over them or delete them (uninstalling), with its own
// rights. So every revision read from storage must stay in its namespace: the release's
// namespace is the storage's, and each object of its manifest is of a namespaced kind and in
// that namespace. A revision that does not is refused, and the release with it, until the
// Secret is removed.

// UntrustedError is a stored revision the manager refuses to act on.
type UntrustedError struct {
	Secret, Namespace, Why string
}

func (e *UntrustedError) Error() string {
	return fmt.Sprintf("release Secret %s/%s %s: a release stays in its Minimart's namespace, so the operator acts on none of its revisions "+
		"until that Secret is removed (it was not written by the operator)", e.Namespace, e.Secret, e.Why)
}

// confined returns rls when it stays in namespace, else an UntrustedError naming key.
func confined(rls *release.Release, key, namespace string, mapper meta.RESTMapper) (*release.Release, error) {
	refuse := func(format string, a ...any) (*release.Release, error) {
		return nil, &UntrustedError{Secret: key, Namespace: namespace, Why: fmt.Sprintf(format, a...)}
	}
	if rls.Namespace != namespace {
		return refuse("is a release of namespace %q", rls.Namespace)
	}
	objects, err := Objects(strings.NewReader(rls.Manifest))
	if err != nil {
		return refuse("holds a manifest that does not decode: %v", err)
	}
	for _, obj := range objects {
		gvk := obj.GroupVersionKind()
		if ns := obj.GetNamespace(); ns != "" && ns != namespace {
			return refuse("holds %s %s in namespace %s", gvk.Kind, obj.GetName(), ns)
		}
		mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return refuse("holds %s %s, a kind the API server does not serve", gvk.Kind, obj.GetName())
		}
		if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
			return refuse("holds %s %s, which is cluster-scoped", gvk.Kind, obj.GetName())
		}
	}
	return rls, nil
}

// Get reads the revision under key, refused when it does not stay in the namespace.
func (s *releaseSecrets) Get(key string) (*release.Release, error) {
	rls, err := s.Secrets.Get(key)
	if err != nil {
		return nil, err
	}
	return confined(rls, key, s.namespace, s.mapper)
}

// List reads the revisions filter keeps; any that does not stay in the namespace fails it.
func (s *releaseSecrets) List(filter func(*release.Release) bool) ([]*release.Release, error) {
	list, err := s.Secrets.List(filter)
	return s.confineAll(list, err)
}

// Query reads the revisions of labels; any that does not stay in the namespace fails it.
func (s *releaseSecrets) Query(labels map[string]string) ([]*release.Release, error) {
	list, err := s.Secrets.Query(labels)
	return s.confineAll(list, err)
}

func (s *releaseSecrets) confineAll(list []*release.Release, err error) ([]*release.Release, error) {
	if err != nil {
		return nil, err
	}
	for _, rls := range list {
		if _, err := confined(rls, fmt.Sprintf("sh.helm.release.v1.%s.v%d", rls.Name, rls.Version), s.namespace, s.mapper); err != nil {
			return nil, err
		}
	}
	return list, nil
}

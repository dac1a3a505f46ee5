// Package release runs Helm's own actions (install, upgrade, uninstall) on the releases of
// one chart, with Helm's release storage (Secrets in the release's namespace, written as Helm
// writes them), so that `helm list`, `helm history` and `helm get values` show what the
// operator did. It keeps the costs of the Helm CLI out of a long-running manager: discovery
// and the cluster's capabilities are read once, manifests are not validated against the
// OpenAPI schema (the API server validates them), and a release is written with a gzip
// compressor kept from the last write, not a new one each time.
package release

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/kube"
	"helm.sh/helm/v3/pkg/postrender"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/releaseutil"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// DefaultMaxHistory is how many revisions of a release Helm keeps by default.
const DefaultMaxHistory = 10

// Client runs Helm actions for releases of one chart.
type Client struct {
	Chart *chart.Chart
	// MaxHistory caps the revisions each release keeps (helm upgrade --history-max).
	MaxHistory int
	Log        logr.Logger

	config    *rest.Config
	mapper    meta.RESTMapper
	discovery discovery.CachedDiscoveryInterface
	clientset kubernetes.Interface

	mu           sync.Mutex
	capabilities *chartutil.Capabilities
}

// NewClient makes a Client that reaches the API server with config and maps kinds with
// mapper (the manager's).
func NewClient(config *rest.Config, mapper meta.RESTMapper, c *chart.Chart, maxHistory int, log logr.Logger) (*Client, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(config)
	if err != nil {
		return nil, err
	}
	clientset, err := kubernetes.NewForConfig(config)
	if err != nil {
		return nil, err
	}
	return &Client{
		Chart: c, MaxHistory: maxHistory, Log: log,
		config: config, mapper: mapper, discovery: memory.NewMemCacheClient(dc), clientset: clientset,
	}, nil
}

// History returns every stored revision of the release, oldest first; none when it was
// never installed or was uninstalled.
func (c *Client) History(namespace, name string) ([]*release.Release, error) {
	cfg, err := c.ActionConfig(namespace)
	if err != nil {
		return nil, err
	}
	revisions, err := cfg.Releases.History(name)
	if errors.Is(err, driver.ErrReleaseNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the history of release %s: %w", name, err)
	}
	releaseutil.SortByRevision(revisions)
	return revisions, nil
}

// Install installs the chart as release name with values, through post, also over the
// history of a release uninstalled with its history kept.
func (c *Client) Install(namespace, name string, values map[string]any, post postrender.PostRenderer) (*release.Release, error) {
	cfg, err := c.ActionConfig(namespace)
	if err != nil {
		return nil, err
	}
	install := action.NewInstall(cfg)
	install.ReleaseName, install.Namespace = name, namespace
	install.Replace = true // over a history kept by helm uninstall --keep-history
	install.PostRenderer = post
	install.DisableOpenAPIValidation = true
	return install.Run(c.Chart, values)
}

// Upgrade upgrades release name to the chart with values (not reusing earlier values),
// through post; history beyond MaxHistory is pruned.
func (c *Client) Upgrade(namespace, name string, values map[string]any, post postrender.PostRenderer) (*release.Release, error) {
	cfg, err := c.ActionConfig(namespace)
	if err != nil {
		return nil, err
	}
	upgrade := action.NewUpgrade(cfg)
	upgrade.Namespace = namespace
	upgrade.PostRenderer = post
	upgrade.MaxHistory = c.MaxHistory
	upgrade.DisableOpenAPIValidation = true
	return upgrade.Run(name, c.Chart, values)
}

// Uninstall uninstalls release name and deletes its history; a release that is not there
// is not an error.
func (c *Client) Uninstall(namespace, name string) error {
	cfg, err := c.ActionConfig(namespace)
	if err != nil {
		return err
	}
	_, err = action.NewUninstall(cfg).Run(name)
	if errors.Is(err, driver.ErrReleaseNotFound) {
		return nil
	}
	return err
}

// MarkFailed records rel, left pending by an operation that was interrupted, as failed
// with description: Helm refuses to upgrade a pending release ("another operation is in
// progress"), and upgrades a failed one.
func (c *Client) MarkFailed(rel *release.Release, description string) error {
	cfg, err := c.ActionConfig(rel.Namespace)
	if err != nil {
		return err
	}
	rel.SetStatus(release.StatusFailed, description)
	return cfg.Releases.Update(rel)
}

// Restore puts the objects of rel's manifest back as the manifest has them: those deleted
// are created, fields edited are patched back (Helm's three-way merge, as an upgrade does),
// without a new revision.
func (c *Client) Restore(rel *release.Release) error {
	cfg, err := c.ActionConfig(rel.Namespace)
	if err != nil {
		return err
	}
	resources, err := cfg.KubeClient.Build(strings.NewReader(rel.Manifest), false)
	if err != nil {
		return fmt.Errorf("reading the manifest of release %s: %w", rel.Name, err)
	}
	_, err = cfg.KubeClient.Update(resources, resources, false)
	return err
}

// ActionConfig is Helm's configuration for actions in namespace.
func (c *Client) ActionConfig(namespace string) (*action.Configuration, error) {
	caps, err := c.clusterCapabilities()
	if err != nil {
		return nil, err
	}
	getter := &restClientGetter{config: c.config, mapper: c.mapper, discovery: c.discovery, namespace: namespace}
	kc := kube.New(getter)
	kc.Namespace = namespace
	kc.Log = c.debugLog
	secrets := newReleaseSecrets(c.clientset.CoreV1().Secrets(namespace), namespace, c.mapper)
	secrets.Log = c.debugLog
	store := storage.Init(secrets)
	store.Log = c.debugLog
	return &action.Configuration{RESTClientGetter: getter, Releases: store, KubeClient: kc, Capabilities: caps, Log: c.debugLog}, nil
}

// clusterCapabilities reads the API server's version and API versions once (the Helm CLI
// reads them again for every command).
func (c *Client) clusterCapabilities() (*chartutil.Capabilities, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.capabilities != nil {
		return c.capabilities, nil
	}
	version, err := c.discovery.ServerVersion()
	if err != nil {
		return nil, fmt.Errorf("reading the API server's version: %w", err)
	}
	apiVersions, err := action.GetVersionSet(c.discovery)
	if err != nil {
		return nil, fmt.Errorf("reading the API server's API versions: %w", err)
	}
	c.capabilities = &chartutil.Capabilities{
		APIVersions: apiVersions,
		KubeVersion: chartutil.KubeVersion{Version: version.GitVersion, Major: version.Major, Minor: version.Minor},
		HelmVersion: chartutil.DefaultCapabilities.HelmVersion,
	}
	return c.capabilities, nil
}

func (c *Client) debugLog(format string, v ...any) {
	c.Log.V(1).Info(fmt.Sprintf(format, v...))
}

package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Addresses and ranges of the local cluster. Everything listens on loopback, except the API
// server when real nodes run: then it listens on the host address (see realnode.go), which
// pods can reach and nothing outside the machine can. Pod addresses of kwok nodes exist
// only inside API objects.
const (
	host            = "127.0.0.1"
	etcdClientPort  = 2479
	etcdPeerPort    = 2480
	apiServerPort   = 6443
	kwokServerPort  = 10247
	serviceCIDR     = "10.96.0.0/16"
	kwokPodCIDR     = "10.240.0.0/16"
	kubeVersion     = "v1.36.3"
	kwokNodeLabel   = "quintet.dev/node"
	kwokAnnotation  = "kwok.x-k8s.io/node"
	stopGracePeriod = 15 * time.Second
)

// layout is where the cluster keeps its binaries, state, pid files and logs.
type layout struct {
	Bin        string // kube-apiserver, etcd, kwok ... and kwok-stages/
	Root       string // .local
	PKI        string
	Run        string
	Logs       string
	EtcdData   string
	Kubeconfig string
	Images     string     // image tarballs `make images` writes, imported into the real nodes
	CoreDNS    string     // the CoreDNS binary
	PauseImage string     // the pod sandbox image, one of Images
	RealNodes  []realNode // the cluster's real nodes (none: kwok nodes only)
	// RegistryCA is "HOST:PORT=CA_FILE": the real nodes' containerd trusts CA_FILE for the
	// HTTPS registry at HOST:PORT (the local registry's HTTPS side). Empty: none.
	RegistryCA string
}

func newLayout(root, bin, images, coredns, pauseImage string) (*layout, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	abs := map[*string]string{&bin: bin, &images: images, &coredns: coredns}
	for p, v := range abs {
		if *p, err = filepath.Abs(v); err != nil {
			return nil, err
		}
	}
	l := &layout{
		Bin:        bin,
		Root:       root,
		PKI:        filepath.Join(root, "pki"),
		Run:        filepath.Join(root, "run"),
		Logs:       filepath.Join(root, "logs"),
		EtcdData:   filepath.Join(root, "etcd"),
		Kubeconfig: filepath.Join(root, "kubeconfig"),
		Images:     images,
		CoreDNS:    coredns,
		PauseImage: pauseImage,
	}
	l.RealNodes = l.readRealNodes()
	return l, nil
}

// kwokStages is the file of kwok stages `make tools` writes beside the binaries.
func (l *layout) kwokStages() string { return filepath.Join(l.Bin, "kwok-stages.yaml") }

// apiHost is the API server's address: the host address when real nodes run, so pods reach it.
func (l *layout) apiHost() string {
	if len(l.RealNodes) > 0 {
		return hostIP
	}
	return host
}

func (l *layout) server() string { return fmt.Sprintf("https://%s:%d", l.apiHost(), apiServerPort) }

// components are the names of every process of the cluster, in start order, but those of real
// nodes stopped on purpose (node-stop, node-wipe).
func (l *layout) components() []string {
	names := append(slices.Clone(componentNames), provisionerProc)
	if len(l.RealNodes) > 0 {
		names = append(names, hostServiceNames...)
	}
	for _, n := range l.RealNodes {
		if !l.isStopped(n) {
			names = append(names, n.containerd(), n.kubelet())
		}
	}
	return names
}

// up starts the cluster unless it already runs, and waits until it is usable. realNode is
// one of the real-node modes, realCount the number of real nodes it asks for.
func up(ctx context.Context, l *layout, nodes int, realNode string, realCount int) error {
	if l.healthy(ctx) {
		fmt.Printf("The local cluster is already running.\n")
		return nil
	}
	// A partial or stale cluster (a crash, a reboot) is cleared before starting again.
	if err := down(l); err != nil {
		return err
	}
	if err := l.checkBinaries(); err != nil {
		return err
	}
	if err := l.decideRealNodes(ctx, realNode, realCount); err != nil {
		return err
	}
	for _, dir := range []string{l.Root, l.Run, l.Logs} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	started := time.Now()
	if err := l.startAll(ctx, nodes); err != nil {
		return errors.Join(err, down(l))
	}
	real := "no real node"
	switch len(l.RealNodes) {
	case 0:
	case 1:
		real = "the real node " + l.RealNodes[0].Name()
	default:
		real = fmt.Sprintf("%d real nodes (%s to %s)", len(l.RealNodes), l.RealNodes[0].Name(), l.RealNodes[len(l.RealNodes)-1].Name())
	}
	fmt.Printf("The local cluster is up in %.1fs with %d kwok nodes and %s.\n", time.Since(started).Seconds(), nodes, real)
	return nil
}

// decideRealNodes sets l.RealNodes from the mode, the count and what this machine can do,
// saying plainly why there is no real node when there cannot be one.
func (l *layout) decideRealNodes(ctx context.Context, mode string, count int) error {
	l.RealNodes = nil
	if count < 1 || count > maxRealNodes {
		return fmt.Errorf("%d real nodes: want 1 to %d (and --real-node off for none)", count, maxRealNodes)
	}
	switch mode {
	case realNodeOff:
		return nil
	case realNodeAuto, realNodeRequired:
	default:
		return fmt.Errorf("unknown real-node mode %q: want %s, %s or %s", mode, realNodeAuto, realNodeRequired, realNodeOff)
	}
	if err := l.realNodePreflight(ctx); err != nil {
		if mode == realNodeRequired {
			return fmt.Errorf("the real nodes cannot start: %w", err)
		}
		fmt.Printf("No real node: %v. Continuing with kwok nodes only (REAL_NODE=required makes this an error).\n", err)
		return nil
	}
	if err := os.MkdirAll(l.nodeDir(), 0o755); err != nil {
		return err
	}
	l.RealNodes = realNodes(count)
	return l.saveRealNodeSettings()
}

func (l *layout) checkBinaries() error {
	for _, p := range l.processes() {
		if _, err := os.Stat(p.Exe); err != nil {
			return fmt.Errorf("%s is missing: run `make tools` to build the control plane from source", p.Exe)
		}
	}
	if _, err := os.Stat(l.kwokStages()); err != nil {
		return fmt.Errorf("kwok stages are missing in %s: run `make tools`", l.Bin)
	}
	return nil
}

func (l *layout) startAll(ctx context.Context, nodes int) error {
	p, err := generatePKI(l.PKI, l.certRequests())
	if err != nil {
		return err
	}
	for _, name := range []string{controllerManagerName, schedulerName, kwokName} {
		if err := writeKubeconfig(filepath.Join(l.PKI, name+".kubeconfig"), l.server(), p.CA, p.Clients[name], name); err != nil {
			return err
		}
	}
	if err := writeKubeconfig(l.Kubeconfig, l.server(), p.CA, p.Clients["admin"], "quintet-admin"); err != nil {
		return err
	}
	if len(l.RealNodes) > 0 {
		// The API server listens on the host address; the guard is in place before any pod.
		if err := l.setUpHostNetwork(); err != nil {
			return err
		}
	}
	procs := l.processes()
	etcd, apiserver, rest := procs[0], procs[1], procs[2:]
	if err := l.start(etcd); err != nil {
		return err
	}
	if err := l.waitHTTP(ctx, etcd.Name, fmt.Sprintf("http://%s:%d/health", host, etcdClientPort), http.DefaultClient); err != nil {
		return err
	}
	if err := l.start(apiserver); err != nil {
		return err
	}
	api, err := newAPIClient(l.server(), p.CA, p.Clients["admin"])
	if err != nil {
		return err
	}
	if err := l.waitHTTP(ctx, apiserver.Name, l.server()+"/readyz", api.http); err != nil {
		return err
	}
	provisioner, err := l.provisionerProcess()
	if err != nil {
		return err
	}
	for _, proc := range append(rest, provisioner) {
		if err := l.start(proc); err != nil {
			return err
		}
	}
	if err := ensureStorageClass(ctx, api); err != nil {
		return err
	}
	if err := createKwokNodes(ctx, api, nodes); err != nil {
		return err
	}
	if len(l.RealNodes) > 0 {
		if err := l.startHostServices(ctx, p, api); err != nil {
			return err
		}
		if err := l.startRealNodes(ctx, p, api); err != nil {
			return err
		}
	}
	return l.waitUsable(ctx, api, nodes)
}

// waitHTTP waits for url to answer 200, failing early with the log when the process dies.
func (l *layout) waitHTTP(ctx context.Context, name, url string, c *http.Client) error {
	err := poll(ctx, 60*time.Second, name+" to become healthy", func(ctx context.Context) (bool, string, error) {
		if _, alive := l.running(name); !alive {
			return false, "", fmt.Errorf("%s exited", name)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, "", err
		}
		resp, err := c.Do(req)
		if err != nil {
			return false, err.Error(), nil
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status, nil
	})
	if err != nil {
		return fmt.Errorf("%w; last lines of %s:\n%s", err, l.logFile(name), l.tailLog(name))
	}
	return nil
}

// waitUsable waits until the kwok nodes are Ready, the other components stay up, and the
// default ServiceAccount exists (pods cannot be created before it does).
func (l *layout) waitUsable(ctx context.Context, api *apiClient, nodes int) error {
	return poll(ctx, 60*time.Second, "the cluster to become usable", func(ctx context.Context) (bool, string, error) {
		for _, name := range l.components() {
			if _, alive := l.running(name); !alive {
				return false, "", l.exited(name)
			}
		}
		ready, err := api.readyNodes(ctx, kwokNodeLabel+"%3Dkwok")
		if err != nil {
			return false, err.Error(), nil
		}
		if len(ready) < nodes {
			return false, fmt.Sprintf("%d of %d kwok nodes Ready", len(ready), nodes), nil
		}
		if _, err := api.do(ctx, http.MethodGet, "/api/v1/namespaces/default/serviceaccounts/default", nil, nil); err != nil {
			return false, "no default ServiceAccount yet", nil
		}
		return true, "", nil
	})
}

// healthy reports whether every component runs and the API server is ready.
func (l *layout) healthy(ctx context.Context) bool {
	for _, name := range l.components() {
		if _, ok := l.running(name); !ok {
			return false
		}
	}
	api, err := l.adminClient()
	if err != nil {
		return false
	}
	_, err = api.do(ctx, http.MethodGet, "/readyz", nil, nil)
	return err == nil
}

// down stops every process recorded in the run folder (first the extras, such as the
// managers `make demo` starts, then the real nodes, then the control plane in reverse order)
// and removes the cluster state, keeping logs: also after a node fault (a stopped, wiped,
// partitioned or isolated node).
func down(l *layout) error {
	var errs []error
	for _, name := range l.extraProcesses() {
		errs = append(errs, l.stop(name, stopGracePeriod))
	}
	errs = append(errs, l.stop(provisionerProc, stopGracePeriod), l.stopRealNodes())
	for i := len(componentNames) - 1; i >= 0; i-- {
		errs = append(errs, l.stop(componentNames[i], stopGracePeriod))
	}
	errs = append(errs, l.removeRealNodes())
	for _, dir := range []string{l.PKI, l.EtcdData, l.Run, l.volumesDir()} {
		errs = append(errs, os.RemoveAll(dir))
	}
	errs = append(errs, removeIfExists(l.Kubeconfig))
	return errors.Join(errs...)
}

// isComponent tells whether name is one of the cluster's own processes (not an extra).
func isComponent(name string) bool {
	return slices.Contains(componentNames, name) || slices.Contains(hostServiceNames, name) || name == provisionerProc ||
		strings.HasPrefix(name, containerdName+"-"+realNodePrefix) || strings.HasPrefix(name, kubeletName+"-"+realNodePrefix)
}

// extraProcesses names the pid files in the run folder that are not cluster components.
func (l *layout) extraProcesses() []string {
	files, _ := filepath.Glob(filepath.Join(l.Run, "*.pid"))
	var extras []string
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".pid")
		if !isComponent(name) {
			extras = append(extras, name)
		}
	}
	return extras
}

func removeIfExists(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// status prints each component's state and reports whether all run (real nodes stopped on
// purpose are said to be, and count as intended).
func status(l *layout) bool {
	all := true
	for _, n := range l.RealNodes {
		if l.isStopped(n) {
			fmt.Printf("%-24s stopped (%s or %s; `make node-start NODE=%s` starts it)\n", n.Name(), faultStop, faultWipe, n.Name())
		}
	}
	for _, name := range l.components() {
		pid, ok := l.running(name)
		state := "stopped"
		if ok {
			state = fmt.Sprintf("running (pid %d)", pid)
		} else {
			all = false
		}
		fmt.Printf("%-24s %s\n", name, state)
	}
	return all
}

func usage(l *layout) string {
	return strings.Join([]string{
		"Kubeconfig: " + l.Kubeconfig,
		"Use it with:",
		"  export KUBECONFIG=" + l.Kubeconfig,
		"  kubectl get nodes",
		"Logs: " + l.Logs,
	}, "\n")
}

// Command localcluster runs Quintet's embedded local cluster: etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler and kwok nodes, all built from source, on
// 127.0.0.1; and, where the machine allows, real nodes (containerd, runc and a kubelet each;
// one kube-proxy and CoreDNS for all) whose pods run for real on bridges that cannot reach
// outside.
//
//	localcluster up     [--dir .local] [--bin bin/k8s-v1.36.3] [--nodes 3] [--real-node auto|required|off]
//	                    [--real-nodes 3] [--images DIR] [--coredns FILE] [--pause-image REF]
//	                    [--registry-ca HOST:PORT=CA_FILE]
//	localcluster down   [--dir .local]
//	localcluster status [--dir .local]
//	localcluster load-images [--dir .local] [--images DIR]
//	localcluster install-packages [--real-node auto|required|off]
//	localcluster start  [--dir .local] [--cluster-dns] --name NAME -- EXE [ARGS...]
//	localcluster stop   [--dir .local] --name NAME
//	localcluster exec   [--dir .local] [--cluster-dns] -- EXE [ARGS...]
//	localcluster node-stop|node-start|node-wipe|node-partition|node-isolate|node-heal|node-drain|node-uncordon
//	                    [--dir .local] --node NAME
//
// start runs an extra process (a manager, OLM) the way the cluster's own run: its own process
// group, output in <dir>/logs/NAME.log, a pid file that `down` and `status` read. A running
// NAME is stopped first.
//
// exec runs a program in the foreground in localcluster's place (`make run`: Ctrl-C stops
// it). With --cluster-dns, when $KUBECONFIG is this cluster's kubeconfig and the real node's
// DNS runs, it resolves names with the cluster's DNS, as `start --cluster-dns` does; otherwise
// it runs as it is.
//
// The node-* commands play a fault on one real node of this cluster (see nodefaults.go) and
// refuse any other name.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "localcluster:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: localcluster up|down|status|load-images|install-packages|start|stop|exec|node-* [flags]")
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	dir := fs.String("dir", ".local", "state, pid files, logs and the kubeconfig")
	bin := fs.String("bin", "bin/k8s-"+kubeVersion, "folder of the control-plane binaries")
	nodes := fs.Int("nodes", 3, "number of kwok nodes")
	realNode := fs.String("real-node", realNodeAuto, "the real nodes: auto (when this machine can), required, or off")
	realCount := fs.Int("real-nodes", 3, "up: the number of real nodes")
	node := fs.String("node", "", "node-*: the real node")
	images := fs.String("images", "bin/images", "image tarballs to load into the real nodes")
	coredns := fs.String("coredns", "bin/coredns", "the CoreDNS binary")
	pauseImage := fs.String("pause-image", "", "the pod sandbox image (one of --images)")
	name := fs.String("name", "", "start: the extra process's name")
	registryCA := fs.String("registry-ca", "", "up: HOST:PORT=CA_FILE, an HTTPS registry the real nodes trust")
	clusterDNS := fs.Bool("cluster-dns", false, "start, exec: resolve names with the cluster's DNS (the real nodes')")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	l, err := newLayout(*dir, *bin, *images, *coredns, *pauseImage)
	if err != nil {
		return err
	}
	l.RegistryCA = *registryCA
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	switch args[0] {
	case "up":
		if *nodes < 1 {
			return fmt.Errorf("--nodes must be at least 1")
		}
		if err := up(ctx, l, *nodes, *realNode, *realCount); err != nil {
			return err
		}
		fmt.Println(usage(l))
		return nil
	case "down":
		if err := down(l); err != nil {
			return err
		}
		fmt.Println("The local cluster is stopped; logs stay in", l.Logs)
		return nil
	case "load-images":
		return loadImagesIntoRunningNodes(ctx, l)
	case "install-packages": // before tests that need nft, as cluster-up would
		if *realNode == realNodeOff || os.Geteuid() != 0 {
			fmt.Println("Not installing the real nodes' Debian packages: REAL_NODE=off or not root.")
			return nil
		}
		return installNodePackages(ctx)
	case "start":
		if *name == "" || fs.NArg() == 0 {
			return fmt.Errorf("usage: localcluster start --name NAME -- EXE [ARGS...]")
		}
		return startExtra(l, *name, fs.Args(), *clusterDNS)
	case "exec":
		if fs.NArg() == 0 {
			return fmt.Errorf("usage: localcluster exec [--cluster-dns] -- EXE [ARGS...]")
		}
		return execForeground(l, fs.Args(), *clusterDNS)
	case "stop":
		if *name == "" || isComponent(*name) {
			return fmt.Errorf("usage: localcluster stop --name NAME (an extra process, not a cluster component)")
		}
		return l.stop(*name, stopGracePeriod)
	case "provision": // run by up as the cluster's local-path provisioner
		return provision(ctx, l)
	case "status":
		if !status(l) {
			return fmt.Errorf("the local cluster is not (fully) running")
		}
		return nil
	case faultStop, faultStart, faultWipe, faultPartition, faultIsolate, faultHeal, faultDrain, faultUncordon:
		if *node == "" {
			return fmt.Errorf("usage: localcluster %s --node NAME (a real node of the local cluster)", args[0])
		}
		return nodeFault(ctx, l, args[0], *node)
	default:
		return fmt.Errorf("unknown command %q: want up, down, status, load-images, install-packages, start, stop, exec or node-*", args[0])
	}
}

// loadImagesIntoRunningNodes imports the image tarballs into every real node that runs.
func loadImagesIntoRunningNodes(ctx context.Context, l *layout) error {
	loaded := 0
	for _, n := range l.RealNodes {
		if _, ok := l.running(n.containerd()); ok {
			if err := l.loadImages(ctx, n); err != nil {
				return err
			}
			loaded++
		}
	}
	if loaded == 0 {
		fmt.Println("No real node is running; cluster-up (or node-start) loads the images when it starts one.")
	}
	return nil
}

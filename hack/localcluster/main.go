// Command localcluster runs Quintet's embedded local cluster: etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler and kwok nodes, all built from source, on
// 127.0.0.1; and, where the machine allows, a real node (containerd, runc, kubelet,
// kube-proxy, CoreDNS) whose pods run for real on a bridge that cannot reach outside.
//
//	localcluster up     [--dir .local] [--bin bin/k8s-v1.36.3] [--nodes 3] [--real-node auto|required|off]
//	                    [--images DIR] [--coredns FILE] [--pause-image REF] [--registry-ca HOST:PORT=CA_FILE]
//	localcluster down   [--dir .local]
//	localcluster status [--dir .local]
//	localcluster load-images [--dir .local] [--images DIR]
//	localcluster install-packages [--real-node auto|required|off]
//	localcluster start  [--dir .local] [--cluster-dns] --name NAME -- EXE [ARGS...]
//	localcluster stop   [--dir .local] --name NAME
//	localcluster exec   [--dir .local] [--cluster-dns] -- EXE [ARGS...]
//
// start runs an extra process (a manager, OLM) the way the cluster's own run: its own process
// group, output in <dir>/logs/NAME.log, a pid file that `down` and `status` read. A running
// NAME is stopped first.
//
// exec runs a program in the foreground in localcluster's place (`make run`: Ctrl-C stops
// it). With --cluster-dns, when $KUBECONFIG is this cluster's kubeconfig and the real node's
// DNS runs, it resolves names with the cluster's DNS, as `start --cluster-dns` does; otherwise
// it runs as it is.
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
		return fmt.Errorf("usage: localcluster up|down|status|load-images|install-packages|start|stop|exec [flags]")
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	dir := fs.String("dir", ".local", "state, pid files, logs and the kubeconfig")
	bin := fs.String("bin", "bin/k8s-"+kubeVersion, "folder of the control-plane binaries")
	nodes := fs.Int("nodes", 3, "number of kwok nodes")
	realNode := fs.String("real-node", realNodeAuto, "the real node: auto (when this machine can), required, or off")
	images := fs.String("images", "bin/images", "image tarballs to load into the real node")
	coredns := fs.String("coredns", "bin/coredns", "the CoreDNS binary")
	pauseImage := fs.String("pause-image", "", "the pod sandbox image (one of --images)")
	name := fs.String("name", "", "start: the extra process's name")
	registryCA := fs.String("registry-ca", "", "up: HOST:PORT=CA_FILE, an HTTPS registry the real node trusts")
	clusterDNS := fs.Bool("cluster-dns", false, "start, exec: resolve names with the cluster's DNS (the real node's)")
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
		if err := up(ctx, l, *nodes, *realNode); err != nil {
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
		if _, ok := l.running(containerdName); !l.RealNode || !ok {
			fmt.Println("No real node is running; cluster-up loads the images when it starts one.")
			return nil
		}
		return l.loadImages(ctx)
	case "install-packages": // before tests that need nft, as cluster-up would
		if *realNode == realNodeOff || os.Geteuid() != 0 {
			fmt.Println("Not installing the real node's Debian packages: REAL_NODE=off or not root.")
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
	default:
		return fmt.Errorf("unknown command %q: want up, down, status, load-images, install-packages, start, stop or exec", args[0])
	}
}

//go:build tools

// Package tools pins the control-plane and node commands Quintet builds from source.
package tools

import (
	_ "go.etcd.io/etcd/server/v3/etcdmain"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
	_ "sigs.k8s.io/cri-tools/cmd/crictl"
	_ "sigs.k8s.io/kwok/cmd/kwok"
	_ "sigs.k8s.io/kwok/kustomize/stage/node/fast"
	_ "sigs.k8s.io/kwok/kustomize/stage/node/heartbeat-with-lease"
	_ "sigs.k8s.io/kwok/kustomize/stage/pod/fast"
)

package main

import (
	"context"
	"fmt"
	"net/http"
)

// kwokNode is a Node that kwok manages: labelled like a worker, without taints, so that
// ordinary workloads land on it and turn Running without containers.
func kwokNode(name string) map[string]any {
	// As a kubelet reports them, ephemeral-storage included: pods that request it (every
	// manager does) schedule here as on a real node.
	resources := map[string]string{"cpu": "32", "memory": "256Gi", "ephemeral-storage": "200Gi", "pods": "110"}
	return map[string]any{
		"apiVersion": "v1",
		"kind":       "Node",
		"metadata": map[string]any{
			"name":        name,
			"annotations": map[string]string{kwokAnnotation: "fake", "node.alpha.kubernetes.io/ttl": "0"},
			"labels": map[string]string{
				"kubernetes.io/hostname":         name,
				"kubernetes.io/os":               "linux",
				"kubernetes.io/arch":             "amd64",
				"node-role.kubernetes.io/worker": "",
				"type":                           "kwok",
				kwokNodeLabel:                    "kwok",
			},
		},
		"status": map[string]any{"allocatable": resources, "capacity": resources},
	}
}

func createKwokNodes(ctx context.Context, api *apiClient, count int) error {
	for i := 1; i <= count; i++ {
		code, err := api.do(ctx, http.MethodPost, "/api/v1/nodes", kwokNode(fmt.Sprintf("kwok-worker-%d", i)), nil)
		if err != nil && code != http.StatusConflict {
			return fmt.Errorf("creating kwok node: %w", err)
		}
	}
	return nil
}

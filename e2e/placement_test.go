//go:build e2e || bench

package e2e

// realNodeLabel is the label (and taint) of each of the local cluster's real nodes.
const realNodeLabel = "quintet.dev/real-node"

// realNodePlacement is the nodeSelector and toleration that put a pod on a real node, as
// the fields of an unstructured pod policy (an EtcdCluster's spec.pod, a Subscription's config).
func realNodePlacement() map[string]any {
	return map[string]any{
		"nodeSelector": map[string]any{realNodeLabel: "true"},
		"tolerations":  []any{map[string]any{"key": realNodeLabel, "operator": "Equal", "value": "true", "effect": "NoSchedule"}},
	}
}

package main

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const kindNetworkPolicy = "NetworkPolicy"

// fromPlaceholder stands for the peers a policy admits, which a value sets.
const fromPlaceholder = "@@FROM@@"

// networkPolicyTemplate writes the manager's NetworkPolicy of config/default (metrics scrapes
// only) behind networkPolicy.enable, admitting networkPolicy.metricsFrom.
func networkPolicyTemplate(u *unstructured.Unstructured) (string, error) {
	return policyTemplate(u, "{{- if .Values.networkPolicy.enable }}", ".Values.networkPolicy.metricsFrom")
}

// apiNetworkPolicyTemplate writes the NetworkPolicy of the operator's config/api, beside its
// Service, behind api.enable and networkPolicy.enable, admitting networkPolicy.apiFrom.
func apiNetworkPolicyTemplate(o chartOptions) (string, error) {
	u, err := apiObject(o, "network_policy.yaml")
	if err != nil {
		return "", err
	}
	return policyTemplate(u, "{{- if and .Values.api.enable .Values.networkPolicy.enable }}", ".Values.networkPolicy.apiFrom")
}

// policyTemplate writes a policy of one ingress rule, its peers from the value from, inside
// the condition cond.
func policyTemplate(u *unstructured.Unstructured, cond, from string) (string, error) {
	u = u.DeepCopy()
	ingress, _, _ := unstructured.NestedSlice(u.Object, "spec", "ingress")
	if len(ingress) != 1 {
		return "", fmt.Errorf("NetworkPolicy %s: %d ingress rules, want one (its peers are a value)", u.GetName(), len(ingress))
	}
	ingress[0].(map[string]any)["from"] = fromPlaceholder
	_ = unstructured.SetNestedSlice(u.Object, ingress, "spec", "ingress")
	u.SetNamespace(phNamespace)
	y, err := toTemplate(u.Object, map[string]string{fromPlaceholder: fmt.Sprintf("{{- toYaml %s | nindent 6 }}", from)}, nil)
	if err != nil {
		return "", err
	}
	return cond + "\n" + y + "{{- end }}\n", nil
}

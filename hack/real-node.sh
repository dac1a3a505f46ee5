# real-node.sh, sourced by hack/demo.sh and hack/olm.sh (which define k, their kubectl).

# real_nodes prints the names of the local cluster's real nodes (label quintet.dev/real-node=true),
# one a line; nothing when the cluster runs none.
real_nodes() {
  k get nodes -l quintet.dev/real-node=true -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}' 2>/dev/null || true
}

# real_node_namespace NAME makes namespace NAME, or brings it up to date, with the annotations
# by which the PodNodeSelector and PodTolerationRestriction admission plugins place its pods
# on the real nodes, in one write: the plugins read namespaces from an informer, so
# annotations added by a later write may not yet be seen when the first pod comes. It applies
# them server-side under a field manager of its own, so that a later apply of the namespace
# without them (demo.sh applies an operator's config/default, which has its namespace) keeps
# them: a client-side apply's annotations would be taken over and dropped by that apply.
real_node_namespace() {
  k apply --server-side --field-manager=quintet-real-node -f - >/dev/null <<EOF
apiVersion: v1
kind: Namespace
metadata:
  name: $1
  annotations:
    scheduler.alpha.kubernetes.io/node-selector: quintet.dev/real-node=true
    scheduler.alpha.kubernetes.io/defaultTolerations: '[{"key":"quintet.dev/real-node","operator":"Equal","value":"true","effect":"NoSchedule"}]'
EOF
}

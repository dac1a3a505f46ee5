#!/usr/bin/env bash
# make demo: on the running local cluster, install every operator and apply its samples, wait
# until each sample is Ready and print a table. With real nodes, each operator is deployed
# as a platform team would (config/default: namespace, RBAC, Deployment with the image `make
# images` built) and its manager runs in a pod there, the tutorial's EtcdCluster runs three
# real etcd members there (config/demo/etcd-real-node), backed up hourly to the local S3 store,
# and KRE's Runtime runs NATS and the
# sample RuntimeVersion's workflow there, answering a request (config/demo/kre-real-node), and
# the Minimart's store page runs there, answering on its NodePort (config/demo/minimart-real-node);
# without it, managers run as local processes and those pods sit on kwok nodes, where nothing runs.
# Environment (from the Makefile): KUBECTL, LOCALCLUSTER, LOCAL, HELM, OPERATORS (may be empty).
set -euo pipefail
cd "$(dirname "$0")/.."
: "${KUBECTL:?}" "${LOCALCLUSTER:?}" "${LOCAL:?}" "${HELM:?}"
NS=quintet-demo
k() { "$KUBECTL" "$@"; }
source hack/real-node.sh

echo "== Nodes"
k get nodes -L quintet.dev/node

k apply -f config/demo/namespace.yaml >/dev/null
k apply -f config/demo/deployment.yaml >/dev/null

# api_port OPERATOR: the loopback port of a local manager's REST API, one per operator.
api_port() {
  local i=0 o
  for o in ${OPERATORS:-}; do [ "$o" = "$1" ] && break; i=$((i + 1)); done
  echo $((18082 + i))
}

# start_manager builds and (re)starts one operator's manager against the local cluster, as a
# process bin/localcluster tracks (`make cluster-down` stops it), with its REST API on loopback.
start_manager() {
  local op=$1 bin="bin/$1-manager"
  (cd "operators/$op" && go build -o "../../$bin" ./cmd)
  # Probes and metrics off: several managers share this host.
  "$LOCALCLUSTER" start --dir "$LOCAL" --name "$op-manager" -- \
    "$bin" --metrics-bind-address=0 --health-probe-bind-address=0 --api-bind-address="127.0.0.1:$(api_port "$op")"
}

# deploy_in_cluster installs one operator from its config/default into <operator>-system,
# a namespace whose pods the PodNodeSelector and PodTolerationRestriction admission plugins
# place on the real nodes, and waits for its manager.
deploy_in_cluster() {
  local op=$1 ns=$1-system
  real_node_namespace "$ns"
  # config/default with the REST API turned on (the operator's config/api component).
  local overlay="$LOCAL/demo/$op" root
  mkdir -p "$overlay"
  root=$(realpath --relative-to="$overlay" .)
  printf 'resources:\n- %s/operators/%s/config/default\ncomponents:\n- %s/operators/%s/config/api\n' \
    "$root" "$op" "$root" "$op" >"$overlay/kustomization.yaml"
  if [ "$op" = etcd-cluster ]; then
    # The administrator's opt-in (docs/security.md): backups and restores may reach the local
    # cluster's S3 store, which is inside the cluster.
    printf 'patches:\n- target: {kind: Deployment}\n  patch: |-\n    - op: add\n      path: /spec/template/spec/containers/0/env/-\n      value: {name: BACKUP_S3_ENDPOINTS, value: s3.quintet-s3.svc}\n' \
      >>"$overlay/kustomization.yaml"
  fi
  k apply --server-side -k "$overlay" >/dev/null
  k rollout status -n "$ns" "deployment/$op-controller-manager" --timeout=180s >/dev/null
  echo "Deployed $op: manager $(k get pods -n "$ns" -l control-plane=controller-manager -o jsonpath='{.items[0].metadata.name} on {.items[0].spec.nodeName}')"
}

real_node=""
[ -n "$(real_nodes)" ] && real_node=yes

# samples OPERATOR: the kustomization of the samples the demo applies: the operator's
# config/samples or, with real nodes, an overlay of them under config/demo that runs their
# pods there for real (etcd-cluster's: kwok nodes run no etcd).
samples() {
  case "$real_node:$1" in
    yes:etcd-cluster) echo config/demo/etcd-real-node ;;
    yes:kre-runtime) echo config/demo/kre-real-node ;;
    yes:minimart) echo config/demo/minimart-real-node ;;
    *) echo "operators/$1/config/samples" ;;
  esac
}

# backup_store readies the store of etcd-cluster's EtcdBackup sample, with real nodes: the
# local cluster's S3 store and its bucket etcd-backups (make s3-up), and the sample's awsSecret
# holding its credentials. Without it no store runs; the sample's cluster sits on kwok nodes
# and the backup waits for it (WaitingForCluster).
backup_store() {
  [ -n "$real_node" ] || return 0
  make --no-print-directory s3-up
  KUBECTL=$KUBECTL hack/s3.sh aws-secret "$NS" etcd-backup-aws
}

# Every sample object, plus the smoke Deployment, as kind/name; on_real_node lists those whose
# pods run on the real nodes.
objects=(deployment.apps/demo-smoke)
on_real_node=()
for op in ${OPERATORS:-}; do
  echo "== $op"
  k apply --server-side -f "operators/$op/config/crd/bases" >/dev/null
  k wait --for=condition=Established --timeout=60s -f "operators/$op/config/crd/bases" >/dev/null
  if [ -n "$real_node" ]; then deploy_in_cluster "$op"; else start_manager "$op"; fi
  if [ "$op" = ptemplate-device ]; then
    # KMM is not installed here: a stand-in for its Module CRD, and a node where "KMM" loaded
    # the sample's module (config/demo/ptemplate-kmm).
    k apply --server-side -f operators/ptemplate-device/test/kmm-module-crd.yaml >/dev/null
    k apply --server-side -f config/demo/ptemplate-kmm/node.yaml >/dev/null
    echo "KMM is not installed here: applied a stand-in Module CRD and node ptemplate-worker, labelled as KMM labels nodes with the module loaded"
  fi
  [ "$op" = etcd-cluster ] && backup_store
  dir=$(samples "$op")
  k apply -n "$NS" -k "$dir" >/dev/null
  echo "Applied the samples of $dir"
  while read -r o; do
    objects+=("$o")
    [[ $dir == config/demo/* ]] && on_real_node+=("$o")
  done < <(k get -n "$NS" -k "$dir" -o name)
done

# Reasons a sample cannot be Ready on kwok nodes, where containers do not run: its status
# says so, and the demo accepts that truth instead of waiting for what cannot happen.
# (An EtcdRestore there finds no store and no awsSecret: CredentialsInvalid.)
UNREADY_ON_KWOK="MembersUnreachable WaitingForCluster CredentialsInvalid"

# wait_ready OBJECT CONDITION [REASONS]: wait until the condition is True, or its reason is
# one of REASONS.
wait_ready() {
  local o=$1 cond=$2 accepted=${3:-}
  for _ in $(seq 1 300); do
    status=$(k get -n "$NS" "$o" -o jsonpath="{.status.conditions[?(@.type==\"$cond\")].status}")
    reason=$(k get -n "$NS" "$o" -o jsonpath="{.status.conditions[?(@.type==\"$cond\")].reason}")
    [ "$status" = True ] && return 0
    [ -n "$accepted" ] && [[ " $accepted " == *" $reason "* ]] && return 0
    sleep 1
  done
  echo "$o did not become $cond:"; k describe -n "$NS" "$o" | tail -20; return 1
}

echo "== Waiting for every sample to report Ready (Available for the Deployment)"
for o in "${objects[@]}"; do
  cond=Ready; [ "$o" = deployment.apps/demo-smoke ] && cond=Available
  accepted=$UNREADY_ON_KWOK; [[ " ${on_real_node[*]} " == *" $o "* ]] && accepted=""
  wait_ready "$o" "$cond" "$accepted"
done

# created lists, by kind, the objects in the namespace that the given UID controls.
created() {
  k get -n "$NS" pods,services,deployments,replicasets,statefulsets,daemonsets,jobs,configmaps,secrets,poddisruptionbudgets.policy \
    -o jsonpath='{range .items[*]}{.kind}{" "}{.metadata.ownerReferences[0].uid}{"\n"}{end}' |
    awk -v uid="$1" '$2 == uid { n[$1]++ } END { for (kind in n) { printf "%s%d %s", sep, n[kind], kind; sep = ", " } }'
}

echo "== Summary (namespace $NS)"
printf '%-14s %-30s %-6s %-25s %s\n' KIND NAME READY REASON CREATED
for o in "${objects[@]}"; do
  kind=$(k get -n "$NS" "$o" -o jsonpath='{.kind}')
  name=$(k get -n "$NS" "$o" -o jsonpath='{.metadata.name}')
  uid=$(k get -n "$NS" "$o" -o jsonpath='{.metadata.uid}')
  cond=Ready; [ "$kind" = Deployment ] && cond=Available
  ready=$(k get -n "$NS" "$o" -o jsonpath="{.status.conditions[?(@.type==\"$cond\")].status}")
  reason=$(k get -n "$NS" "$o" -o jsonpath="{.status.conditions[?(@.type==\"$cond\")].reason}")
  printf '%-14s %-30s %-6s %-25s %s\n' "$kind" "$name" "$ready" "$reason" "$(created "$uid")"
done
if [ -z "$real_node" ] && k get -n "$NS" etcdclusters -o name 2>/dev/null | grep -q .; then
  echo "(An EtcdCluster on kwok nodes says MembersUnreachable: kwok runs no containers, so no etcd answers."
  echo " With real nodes, make demo runs it there, with three real etcd members, and its"
  echo " EtcdBackup, WaitingForCluster here, backs it up to the local cluster's S3 store, and its"
  echo " EtcdRestore, CredentialsInvalid here (no store runs), restores the newest backup into"
  echo " example-etcd-cluster-restored.)"
fi
if [ -n "$real_node" ] && k get -n "$NS" service greeter-v1-entrypoint >/dev/null 2>&1; then
  echo
  echo "== kre-runtime: POST /predict to greeter-v1's entrypoint; NATS carries it through prepare, greet and"
  echo "   stamp, which keeps the answer in the bucket kre (versitygw) and a document in MongoDB (FerretDB)"
  ip=$(k get -n "$NS" service greeter-v1-entrypoint -o jsonpath='{.spec.clusterIP}')
  echo "\$ curl -i -X POST --data hello http://$ip/predict?workflow=Greet"
  for _ in $(seq 1 20); do
    answer=$(curl -fsS -i --max-time 10 -X POST --data hello "http://$ip/predict?workflow=Greet" 2>&1) && break
    sleep 1
  done
  echo "$answer" | grep -iv '^date:\|^content-length:\|^content-type:'
  echo "(the document: database data, collection greeter-v1, _id the request id; the object: kre/greeter-v1/<request id>)"
fi
if k get -n "$NS" minimarts.charts.samutup.com minimart-sample >/dev/null 2>&1; then
  echo
  echo "== minimart: the sample is a Helm release; its page on the NodePort"
  echo "\$ helm list -n $NS"
  "$HELM" list -n "$NS"
  port=$(k get -n "$NS" service minimart-sample -o jsonpath='{.spec.ports[0].nodePort}')
  node=$(k get -n "$NS" pods -l app.kubernetes.io/instance=minimart-sample -o jsonpath='{.items[0].spec.nodeName}')
  if [ -n "$real_node" ]; then
    # One kube-proxy serves the NodePorts of every real node, on the host address they share
    # (the API server's).
    ip=$(k config view --minify -o jsonpath='{.clusters[0].cluster.server}'); ip=${ip#*://}; ip=${ip%%:*}
    echo "\$ curl http://$ip:$port/    # its pod runs on $node"
    curl -fsS --max-time 10 "http://$ip:$port/"
  else
    ip=$(k get node "$node" -o jsonpath='{.status.addresses[?(@.type=="InternalIP")].address}')
    echo "\$ curl http://$ip:$port/"
    echo "(kwok node $node runs no container: with real nodes, the page answers on this NodePort)"
  fi
fi
# api_url OPERATOR: where the operator's REST API answers from this machine.
api_url() {
  if [ -n "$real_node" ]; then
    echo "https://$(k get -n "$1-system" service "$1-controller-manager-api" -o jsonpath='{.spec.clusterIP}')"
  else
    echo "https://127.0.0.1:$(api_port "$1")"
  fi
}

if [ -n "${OPERATORS:-}" ]; then
  echo
  echo "== REST APIs with Swagger UI; they act with the caller's token (here: the demo-portal account, which may use the Quintet kinds in $NS)"
  k apply --server-side -f config/demo/portal.yaml >/dev/null
  token=$(k create token demo-portal -n "$NS")
  printf '%-18s %-48s %s\n' OPERATOR "SWAGGER UI" "GET $NS/<kind> WITH THE TOKEN"
  for op in $OPERATORS; do
    crd=$(ls "operators/$op/config/crd/bases" | head -n 1)
    plural=${crd#*_}; plural=${plural%.yaml}
    url=$(api_url "$op")
    code=000
    for _ in $(seq 1 30); do # a manager just (re)started may not listen yet
      code=$(curl -sk -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $token" "$url/api/v1/namespaces/$NS/$plural") || true
      [ "$code" = 200 ] && break
      sleep 1
    done
    printf '%-18s %-48s %s\n' "$op" "$url/api/v1/docs/" "$plural: $code"
  done
  echo "A token for Authorize: kubectl create token demo-portal -n $NS (the certificates are self-signed: curl -k)"
  echo
  echo "== Web console: every Quintet kind, live, with forms and one-click actions (each manager serves it; log in with the token)"
  echo "$(api_url "$(echo $OPERATORS | cut -d' ' -f1)")/console/"
  echo "Token: $token"
fi
if [ -n "$real_node" ]; then
  echo
  echo "== Pods on the real nodes"
  for node in $(real_nodes); do
    echo "-- $node"
    k get pods -A --field-selector "spec.nodeName=$node" -o wide
  done
fi
echo
echo "Managers keep running on the local cluster; 'make cluster-down' stops everything."
echo "kubectl: export KUBECONFIG=$LOCAL/kubeconfig PATH=$(dirname "$KUBECTL"):\$PATH"

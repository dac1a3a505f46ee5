#!/usr/bin/env bash
# s3.sh: the local cluster's S3 store (make s3-up runs it), from this machine.
#
#   s3.sh wait                     wait until the store's pod is Ready; when it is not in 3
#                                  minutes, say why and make it again, once; when that one is not
#                                  in 4, say why in full (events, logs, then a summary) and fail
#   s3.sh bucket NAME              make bucket NAME (nothing when it exists)
#   s3.sh aws-secret NAMESPACE NAME
#                                  a Secret NAME in NAMESPACE holding the store's root
#                                  credentials as the CoreOS operator's awsSecret: an AWS
#                                  shared credentials file under the key `credentials`
#
# The store's Service is reached at its cluster IP, which this machine routes to the real
# node's pods. Environment: KUBECTL.
set -euo pipefail
: "${KUBECTL:?}"
k() { "$KUBECTL" "$@"; }
NS=quintet-s3

root_key() { k -n "$NS" get secret versitygw-root -o "jsonpath={.data.$1}" | base64 -d; }

# diagnose prints why the store's pod is not Ready, most telling last (a CI log is often read
# from its end): the claims, pod and events; its logs, the last start's and this one's; then a
# summary of twenty lines at most: the pod's state and probe failures, the store's process on
# the real node (state, wait channel, sockets), and the path from the kubelet to it: /health
# asked from the pod's own network namespace and from this host (as the kubelet's probe is),
# the route and neighbour entry to the pod's address (and the bridge port that neighbour is
# behind), and whatever else holds that address.
diagnose() {
  k -n "$NS" describe persistentvolumeclaims,pods
  k -n "$NS" get events --sort-by=.lastTimestamp
  echo "--- the store's log, the last start's"
  k -n "$NS" logs versitygw-0 --previous --tail=20 2>/dev/null || echo "(none)"
  echo "--- the store's log, this start's"
  k -n "$NS" logs versitygw-0 --tail=20 || true
  summary
}

# ready TIMEOUT: the store's pod exists and is Ready within TIMEOUT (each).
ready() {
  k -n "$NS" wait --for=create pod/versitygw-0 --timeout="$1" >/dev/null &&
    k -n "$NS" wait --for=condition=Ready pod/versitygw-0 --timeout="$1"
}

# health URL [PID]: /health's HTTP status (000 when none) after curl's error, if any, in 3 s at
# most; asked from PID's network namespace when given, else from this host's.
health() { ${2:+nsenter -t "$2" -n} curl -sS -m 3 -o /dev/null -w '%{http_code}' "$1/health" 2>&1 | tr '\n' ' '; }

summary() {
  local ip pid
  ip=$(k -n "$NS" get pod versitygw-0 -o jsonpath='{.status.podIP}' 2>/dev/null || true)
  echo "=== s3-up: why versitygw-0 is not Ready (a summary)"
  k -n "$NS" get pod versitygw-0 --no-headers -o custom-columns='phase:.status.phase,ip:.status.podIP,ready:.status.containerStatuses[0].ready,started:.status.containerStatuses[0].started,restarts:.status.containerStatuses[0].restartCount,since:.status.containerStatuses[0].state.running.startedAt' 2>&1 | sed 's/^/pod: /' || true
  k -n "$NS" get events --field-selector involvedObject.name=versitygw-0,reason=Unhealthy \
    -o jsonpath='{range .items[*]}{.count}x {.message}{"\n"}{end}' 2>/dev/null | tail -3 | cut -c1-200 | sed 's/^/probe: /' || true
  echo "now: $(date -u +%FT%TZ)"
  for pid in $(pgrep -x versitygw); do
    echo "process $pid: $(ps -o stat=,etimes=,wchan:32= -p "$pid" | tr -s ' ') (state, seconds, wait channel)"
    echo "  listening: $(nsenter -t "$pid" -n ss -Hltn 2>&1 | awk '{print $4}' | tr '\n' ' ')"
    echo "  /health from its own namespace: 127.0.0.1 $(health http://127.0.0.1:9000 "$pid"); ${ip:-?} $(health "http://$ip:9000" "$pid")"
    echo "  its interfaces: $(nsenter -t "$pid" -n ip -br addr 2>&1 | tr -s ' ' | tr '\n' ';') eth0's address $(nsenter -t "$pid" -n ip -br link show dev eth0 2>&1 | awk '{print $3}')"
  done
  [ -n "$ip" ] || return 0
  echo "/health from this host: $(health "http://$ip:9000")"
  echo "route: $(ip route get "$ip" 2>&1 | head -1)"
  local mac
  mac=$(ip neigh show "$ip" 2>/dev/null | awk '{for (i = 1; i < NF; i++) if ($i == "lladdr") print $(i + 1)}')
  echo "neighbour: $(ip neigh show "$ip" 2>&1) behind bridge port: $(bridge fdb show 2>/dev/null | awk -v m="$mac" 'm != "" && $1 == m {print $3; exit}')"
  echo "bridge ports ($(bridge link show 2>/dev/null | wc -l)): $(bridge link show 2>&1 | sed -E 's/^[0-9]+: ([^:]+):.* master ([^ ]+) state ([^ ]+).*/\1 \2 \3/' | tr '\n' ';' | cut -c1-300)"
  echo "host addresses: $(ip -br -4 addr 2>&1 | tr -s ' ' | tr '\n' ';' | cut -c1-300)"
  # Another network namespace, or this host, holding the pod's address would answer in its place.
  local holders="" seen="" ns p
  for p in /proc/[0-9]*; do
    ns=$(readlink "$p/ns/net" 2>/dev/null) || continue
    case " $seen " in *" $ns "*) continue ;; esac
    seen="$seen $ns"
    if nsenter -t "${p#/proc/}" -n ip -4 -o addr 2>/dev/null | grep -q " $ip/"; then
      holders="$holders ${p#/proc/}($(cat "$p/comm" 2>/dev/null))"
    fi
  done
  echo "network namespaces holding $ip (by one process in each):${holders:- none}"
}

case "${1:-}" in
wait)
  # The pod's Ready condition (the kubelet's), not the StatefulSet's status: on a loaded machine
  # kube-controller-manager has been seen updating a StatefulSet's status minutes late. A pod
  # that is not Ready in 3 minutes (it is in seconds) is summed up and made again, once.
  ready 3m && exit 0
  summary
  echo "s3.sh: versitygw-0 is not Ready after 3 minutes: deleting it, for its StatefulSet to make it again"
  k -n "$NS" delete pod versitygw-0 --wait=true --timeout=2m || true
  ready 4m || { diagnose; exit 1; }
  echo "s3.sh: versitygw-0 made again is Ready"
  ;;
bucket)
  name=${2:?bucket name}
  endpoint="http://$(k -n "$NS" get service s3 -o jsonpath='{.spec.clusterIP}'):9000"
  # S3's CreateBucket, signed with SigV4 by curl (S3 wants the payload's SHA-256 in a header,
  # here the empty body's): 200 when made, 409 when it exists.
  answer=$(mktemp)
  trap 'rm -f "$answer"' EXIT
  code=$(curl -sS --retry 60 --retry-connrefused --retry-delay 2 --retry-max-time 180 -o "$answer" -w '%{http_code}' -X PUT \
    --aws-sigv4 "aws:amz:us-east-1:s3" --user "$(root_key access-key):$(root_key secret-key)" \
    -H "x-amz-content-sha256: $(printf '' | sha256sum | cut -d' ' -f1)" "$endpoint/$name")
  case "$code" in
    200) echo "Made bucket $name in the S3 store" ;;
    409) ;;
    *) echo "making bucket $name in the S3 store at $endpoint: HTTP $code: $(cat "$answer")" >&2; exit 1 ;;
  esac
  ;;
aws-secret)
  ns=${2:?namespace} name=${3:?secret name}
  printf '[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n' "$(root_key access-key)" "$(root_key secret-key)" |
    k -n "$ns" create secret generic "$name" --from-file=credentials=/dev/stdin --dry-run=client -o yaml | k apply -f - >/dev/null
  ;;
*)
  sed -n '2,14p' "$0"; exit 2 ;;
esac

package etcd

import (
	"bufio"
	"io"
	"strconv"
	"strings"
)

// activePeersMetric is the gauge each member keeps per peer: 1 while the peer's stream
// is connected, 0 after it dropped (rafthttp's peer status).
const activePeersMetric = "etcd_network_active_peers{"

// parseActivePeers reads etcd's Prometheus text and returns, per peer ID, whether the
// member's connection to it is up. A peer it never connected to is absent.
func parseActivePeers(r io.Reader) (map[uint64]bool, error) {
	active := map[uint64]bool{}
	scanner := bufio.NewScanner(r)
	scanner.Buffer(make([]byte, 64*1024), 1024*1024)
	for scanner.Scan() {
		line := scanner.Text()
		if !strings.HasPrefix(line, activePeersMetric) {
			continue
		}
		labels, value, ok := strings.Cut(strings.TrimPrefix(line, activePeersMetric), "} ")
		if !ok {
			continue
		}
		remote := labelValue(labels, "Remote")
		id, err := strconv.ParseUint(remote, 16, 64)
		if err != nil {
			continue
		}
		n, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		active[id] = err == nil && n > 0
	}
	return active, scanner.Err()
}

// labelValue finds name="value" in a metric's label list.
func labelValue(labels, name string) string {
	for _, kv := range strings.Split(labels, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if ok && k == name {
			return strings.Trim(v, `"`)
		}
	}
	return ""
}

package etcd

import (
	"strings"
	"testing"
)

func TestParseActivePeersReadsEtcdsGauge(t *testing.T) {
	text := `# HELP etcd_network_active_peers The current number of active peer connections.
# TYPE etcd_network_active_peers gauge
etcd_network_active_peers{Local="8e9e05c52164694d",Remote="91bc3c398fb3c146"} 1
etcd_network_active_peers{Local="8e9e05c52164694d",Remote="fd422379fda50e48"} 0
etcd_network_disconnected_peers_total{Local="8e9e05c52164694d",Remote="fd422379fda50e48"} 3
`
	got, err := parseActivePeers(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !got[0x91bc3c398fb3c146] || got[0xfd422379fda50e48] {
		t.Fatalf("active peers = %v; want 91bc3c398fb3c146 up, fd422379fda50e48 down", got)
	}
}

//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive // ginkgo's DSL
	. "github.com/onsi/gomega"    //nolint:revive // gomega's DSL
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/quintet-operators/quintet/e2e/robustness"
)

// etcdTraffic is robustness traffic running against an etcd cluster's client Service: three
// clients doing puts, gets, deletes, compare-and-swaps and ranges on ten keys, each at most
// 50 operations a second (the machine runs the other specs meanwhile), every operation
// recorded, until stopAndCheck checks the history.
type etcdTraffic struct {
	traffic robustness.Traffic
	history *robustness.History
	cancel  context.CancelFunc
	done    chan struct{}
}

// startEtcdTraffic starts traffic at endpoint (http://host:port) on the keys under prefix.
func startEtcdTraffic(ctx context.Context, endpoint, prefix string) *etcdTraffic {
	t := &etcdTraffic{traffic: robustness.Traffic{Prefix: prefix, Keys: 10, Timeout: 2 * time.Second, Interval: 20 * time.Millisecond},
		history: robustness.NewHistory(), done: make(chan struct{})}
	for range 3 {
		c, err := clientv3.New(clientv3.Config{Endpoints: []string{strings.TrimPrefix(endpoint, "http://")},
			DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { _ = c.Close() }) // its error is the cancelled context it closes with
		t.traffic.Clients = append(t.traffic.Clients, c)
	}
	var trafficCtx context.Context
	trafficCtx, t.cancel = context.WithCancel(context.WithoutCancel(ctx))
	go func() {
		defer close(t.done)
		t.traffic.Run(trafficCtx, t.history)
	}()
	return t
}

// stopAndCheck stops the traffic, reads the final state, and fails unless the history is
// linearizable with no acknowledged write lost; a failed check leaves the history and
// porcupine's visualization in the log folder, under robustness/<scenario>.
func (t *etcdTraffic) stopAndCheck(ctx context.Context, scenario string) {
	t.cancel()
	<-t.done
	var final map[string]string
	Eventually(func() (err error) {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		final, err = t.traffic.State(rctx, t.traffic.Clients[0])
		return err
	}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
	ops := t.history.Ops()
	report := robustness.Check(ops, t.traffic.KeySpace(), final, 2*time.Minute)
	By(scenario + ": " + report.String())
	if !report.OK() {
		dir := filepath.Join(logDir(), "robustness", scenario)
		Expect(report.WriteEvidence(dir, ops)).To(Succeed())
		Fail(fmt.Sprintf("%s: %s; lost %v; stale %v; history and visualization in %s", scenario, report, report.Lost, report.StaleReads, dir))
	}
	Expect(report.Acknowledged).To(BeNumerically(">", 0), "the traffic ran")
}

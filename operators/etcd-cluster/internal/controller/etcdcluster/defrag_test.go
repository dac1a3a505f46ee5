package etcdcluster

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/membership"
)

func TestNextDefragmentationTakesFollowersFirstAndTheLeaderLast(t *testing.T) {
	p := &v1beta2.DefragmentationPolicy{FreePercent: 50, MinDBSize: ptr.To(resource.MustParse("64Mi"))}
	mi := int64(1 << 20)
	leader := membership.Member{Ordinal: 0, ID: 1, Healthy: true, DBSize: 500 * mi, DBSizeInUse: 100 * mi}
	lessFree := membership.Member{Ordinal: 1, ID: 2, Healthy: true, DBSize: 300 * mi, DBSizeInUse: 140 * mi}
	moreFree := membership.Member{Ordinal: 2, ID: 3, Healthy: true, DBSize: 300 * mi, DBSizeInUse: 10 * mi}
	small := membership.Member{Ordinal: 3, ID: 4, Healthy: true, DBSize: 10 * mi, DBSizeInUse: 1 * mi}
	notEnough := membership.Member{Ordinal: 4, ID: 5, Healthy: true, DBSize: 300 * mi, DBSizeInUse: 200 * mi}
	silent := membership.Member{Ordinal: 5, ID: 6} // its status request failed: size unknown
	learner := membership.Member{Ordinal: 5, ID: 6, Healthy: true, Learner: true}
	run := time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name    string
		members []membership.Member
		last    map[uint64]time.Time
		run     *time.Time
		want    uint64 // 0: none
		reason  string
	}{
		{"followers first, the most free first", []membership.Member{leader, lessFree, moreFree}, nil, nil, 3, v1beta2.ReasonFreePages},
		{"the leader once no follower needs it", []membership.Member{leader, notEnough, small}, nil, nil, 1, v1beta2.ReasonFreePages},
		{"small or not free enough: none", []membership.Member{notEnough, small}, nil, nil, 0, ""},
		{"a scheduled run takes every member not defragmented since", []membership.Member{leader, notEnough, small},
			map[uint64]time.Time{5: run.Add(time.Minute)}, &run, 4, v1beta2.ReasonScheduled},
		{"a scheduled run ends with the leader", []membership.Member{leader, notEnough}, map[uint64]time.Time{5: run.Add(time.Minute)}, &run, 1, v1beta2.ReasonScheduled},
		{"a member that did not answer: none (it may be a follower that needs it)", []membership.Member{leader, moreFree, silent}, nil, nil, 0, ""},
		{"a learner: none", []membership.Member{leader, moreFree, learner}, nil, nil, 0, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := nextDefragmentation(p, tt.members, leader.ID, tt.last, tt.run)
			if (tt.want == 0) != !ok || (ok && (got.member.ID != tt.want || got.reason != tt.reason)) {
				t.Errorf("nextDefragmentation = member %d (%s), %v; want %d (%s)", got.member.ID, got.reason, ok, tt.want, tt.reason)
			}
		})
	}
	off := &v1beta2.DefragmentationPolicy{}
	if _, ok := nextDefragmentation(off, []membership.Member{moreFree}, leader.ID, nil, nil); ok {
		t.Error("freePercent 0 defragmented a member")
	}
	if _, ok := nextDefragmentation(p, []membership.Member{leader, moreFree}, 0, nil, nil); ok {
		t.Error("a pass with no leader answering defragmented a member")
	}
}

func TestScheduledRunStartsAtItsTimeAndWaitsForTheNext(t *testing.T) {
	g := NewWithT(t)
	p := &v1beta2.DefragmentationPolicy{Schedule: "0 3 * * *"}
	st := &v1beta2.DefragmentationStatus{}
	now := time.Date(2026, 11, 25, 2, 0, 0, 0, time.UTC)
	run, err := scheduledRun(p, st, now)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(run).To(BeNil(), "a new schedule waits for its first time")
	g.Expect(st.NextScheduleTime.Time).To(Equal(now.Add(time.Hour)))

	run, _ = scheduledRun(p, st, now.Add(90*time.Minute))
	g.Expect(run).To(HaveValue(Equal(now.Add(time.Hour))))
	g.Expect(st.NextScheduleTime.Time).To(Equal(now.Add(25 * time.Hour)))
	run, _ = scheduledRun(p, st, now.Add(2*time.Hour))
	g.Expect(run).To(HaveValue(Equal(now.Add(time.Hour))), "the run goes on until every member is done")

	_, err = scheduledRun(&v1beta2.DefragmentationPolicy{Schedule: "61 * * * *"}, st, now)
	g.Expect(err).To(MatchError(ContainSubstring("defragmentation.schedule")))
	_, _ = scheduledRun(&v1beta2.DefragmentationPolicy{}, st, now)
	g.Expect(st.NextScheduleTime).To(BeNil())
}

// fillAndFree writes about 8 MiB to the member at url, deletes it and compacts: the member's
// database keeps its size with most of it free pages.
func fillAndFree(t *testing.T, url string) {
	t.Helper()
	ctx := t.Context()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{url}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	value := strings.Repeat("x", 512<<10)
	for i := range 16 {
		if _, err := c.Put(ctx, fmt.Sprintf("/fill/%02d", i), value); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := c.Delete(ctx, "/fill/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Compact(ctx, resp.Header.Revision, clientv3.WithCompactPhysical()); err != nil {
		t.Fatal(err)
	}
	// bbolt gives the compacted pages back to its free list at a commit after the read
	// transactions that saw them end: until a write makes one, the member can report them in
	// use (a run here saw 8.1 of 9.6 MiB in use for 30 s). Write until it reports them free.
	var status *clientv3.StatusResponse
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if _, err := c.Put(ctx, "/fill/commit", "x"); err != nil {
			t.Fatal(err)
		}
		if status, err = c.Status(ctx, url); err != nil {
			t.Fatal(err)
		}
		if status.DbSizeInUse*2 <= status.DbSize {
			return
		}
	}
	t.Fatalf("the member reports %d of its %d bytes in use after the compaction", status.DbSizeInUse, status.DbSize)
}

func TestEtcdClusterDefragmentsAMemberWithFreePagesThenOnSchedule(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	c := &v1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{Name: "defrag", Namespace: ns}, Spec: v1beta2.EtcdClusterSpec{Size: 1,
		Defragmentation: &v1beta2.DefragmentationPolicy{FreePercent: 50, MinDBSize: ptr.To(resource.MustParse("4Mi"))}}}
	runLoopbackMember(t, c)
	fillAndFree(t, testAddresses(c).ClientURL(0))
	memberClaim(t, ns, c.Name, 0, "") // the volume the StatefulSet would have made: without it the member is lost
	g.Expect(env.Client.Create(ctx, c)).To(Succeed())

	g.Eventually(func(g Gomega) {
		get(g, c)
		g.Expect(c.Status.Defragmentation).NotTo(BeNil(), "%+v\n%+v", c.Status.Conditions, c.Status.Members)
		g.Expect(c.Status.Defragmentation.Last).NotTo(BeNil(), "%+v\n%+v", c.Status.Conditions, c.Status.Members)
		// The member's time and the record agree (a pass may write one before the other shows).
		g.Expect(c.Status.Members[0].LastDefragmentTime).To(HaveValue(Equal(c.Status.Defragmentation.Last.Time)))
	}, timeout, tick).Should(Succeed())
	last := c.Status.Defragmentation.Last
	g.Expect(last.Reason).To(Equal(v1beta2.ReasonFreePages))
	g.Expect(last.Leader).To(BeTrue(), "a one-member cluster's member is its leader")
	g.Expect(last.Member).To(Equal("defrag-0"))
	g.Expect(last.DBSizeBefore).To(BeNumerically(">=", 8<<20))
	g.Expect(last.DBSizeAfter).To(BeNumerically("<", last.DBSizeBefore/2), "the free pages went back to the disk")
	g.Expect(events.Emitted(c, v1beta2.ReasonDefragmented)).To(Equal(1))
	g.Consistently(func() int { return events.Emitted(c, v1beta2.ReasonDefragmented) }, 2*time.Second, tick).Should(Equal(1),
		"a member defragmented is not defragmented again")

	get(g, c)
	c.Spec.Defragmentation.Schedule = "@every 2s"
	g.Expect(env.Client.Update(ctx, c)).To(Succeed())
	g.Eventually(func(g Gomega) {
		get(g, c)
		g.Expect(c.Status.Defragmentation.Last.Reason).To(Equal(v1beta2.ReasonScheduled))
		g.Expect(c.Status.Defragmentation.NextScheduleTime).NotTo(BeNil())
	}, timeout, tick).Should(Succeed())
}

func TestEtcdClusterRefusesABadDefragmentationPolicyAtAdmission(t *testing.T) {
	ns := newNamespace(t)
	for _, tt := range []struct {
		policy map[string]any
		want   string
	}{
		{map[string]any{"schedule": "daily"}, "schedule is a cron expression of five fields"},
		{map[string]any{"freePercent": 100}, "should be less than or equal to 99"},
		{map[string]any{"freePercent": -1}, "should be greater than or equal to 0"},
		{map[string]any{"minDBSize": "lots"}, "spec.defragmentation.minDBSize in body should match"},
	} {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": v1beta2.GroupVersion.String(), "kind": "EtcdCluster",
			"metadata": map[string]any{"generateName": "bad-", "namespace": ns},
			"spec":     map[string]any{"defragmentation": tt.policy},
		}}
		NewWithT(t).Expect(env.Client.Create(context.Background(), u)).To(MatchError(ContainSubstring(tt.want)), "%v", tt.policy)
	}
}

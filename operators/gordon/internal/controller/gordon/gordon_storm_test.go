package gordon

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/quintet-operators/quintet/operators/gordon/api/v1"
)

// TestGordonCreatesExactlyOnePodPerPodLostInConcurrentStorms runs replacement storms on
// several Gordons at once, against a cache that delivers every event cacheLag late (so the
// controller keeps reconciling on lists that miss its own creations and the storm's
// deletions), and counts the pods created per Gordon against what was needed: its replicas
// plus one per pod the storm deleted. One more is an over-creation.
func TestGordonCreatesExactlyOnePodPerPodLostInConcurrentStorms(t *testing.T) {
	const (
		gordons  = 6
		replicas = 5
		rounds   = 6
	)
	ctx := context.Background()
	type storm struct {
		gordon  *v1.Gordon
		deleted int
	}
	storms := make([]*storm, gordons)
	for i := range storms {
		storms[i] = &storm{gordon: newGordon(t, newNamespace(t), replicas)}
	}
	var wg sync.WaitGroup
	for i, s := range storms {
		wg.Go(func() {
			g := NewWithT(t)
			rng := rand.New(rand.NewPCG(uint64(i), 42)) //nolint:gosec // a reproducible storm, not a secret
			for round := range rounds {
				// Kill one to three of the live pods, whichever the API server shows now.
				pods := livePods(g, s.gordon)
				rng.Shuffle(len(pods), func(a, b int) { pods[a], pods[b] = pods[b], pods[a] })
				for _, p := range pods[:min(len(pods), 1+rng.IntN(3))] {
					if err := env.Client.Delete(ctx, &p, client.Preconditions{UID: &p.UID}); err == nil {
						s.deleted++
					}
				}
				// And poke the Gordon, so reconciles pile up on the lagging cache.
				patch := client.RawPatch("application/merge-patch+json", fmt.Appendf(nil, `{"metadata":{"annotations":{"round":"%d"}}}`, round))
				g.Expect(env.Client.Patch(ctx, s.gordon, patch)).To(Succeed())
				time.Sleep(time.Duration(rng.IntN(int(2 * cacheLag))))
			}
		})
	}
	wg.Wait()

	g := NewWithT(t)
	for _, s := range storms {
		g.Eventually(func(g Gomega) { g.Expect(livePods(g, s.gordon)).To(HaveLen(replicas)) }, timeout, tick).Should(Succeed())
	}
	// Quiet for a while: late events must not bring a late extra pod.
	time.Sleep(3 * cacheLag)
	for _, s := range storms {
		g.Expect(livePods(g, s.gordon)).To(HaveLen(replicas), "Gordon in %s", s.gordon.Namespace)
		g.Expect(writes.Creates(s.gordon.Namespace)).To(Equal(replicas+s.deleted),
			"pods created in %s for %d replicas and %d pods deleted", s.gordon.Namespace, replicas, s.deleted)
	}
}

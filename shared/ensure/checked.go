package ensure

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// minCheckedGeneration is the fewest objects CheckedVersions remembers before it forgets any.
const minCheckedGeneration = 4096

// CheckedVersions lets the manager's cache hold objects of kinds without a generation
// (Services) as metadata alone. Their spec can change without their generation moving, so
// AppliedSpecAnnotation cannot tell that they are as the operator left them; their
// resourceVersion can, as any write moves it. CheckedVersions remembers, by UID, the
// resourceVersion at which Ensure last read each such object whole (or wrote it) and found it
// holding what the operator wanted, with the hash of that. While the cache's resourceVersion
// and the hash of what the operator wants still match, Ensure neither reads nor writes the
// object; otherwise it reads it whole from the API server once and compares.
//
// It forgets an object it was not asked about within two generations of at least
// minCheckedGeneration objects (as many as the generation before), so objects long gone do not
// pile up; an object it forgot, or never saw (after a restart), is read whole once. Safe for
// concurrent use.
type CheckedVersions struct {
	kinds             map[reflect.Type]bool // by Go type: the API types of the kinds covered
	mu                sync.Mutex
	current, previous map[types.UID]checkedVersion
}

// checkedVersion is an object's resourceVersion when it held what the operator wanted, of hash.
type checkedVersion struct {
	resourceVersion string
	hash            wantedSum
}

// wantedSum is the hash of what the operator wanted of an object: the first half of its
// SHA-256, as a change is all it has to tell.
type wantedSum [sha256.Size / 2]byte

// NewCheckedVersions covers objs' kinds, which the manager's cache must hold as metadata alone
// (the controllers' Owns with builder.OnlyMetadata): Ensure reads them from the cache as
// metadata, and nothing else of the operator may read them from the cache whole.
func NewCheckedVersions(objs ...client.Object) *CheckedVersions {
	c := &CheckedVersions{kinds: map[reflect.Type]bool{}, current: map[types.UID]checkedVersion{}}
	for _, obj := range objs {
		c.kinds[reflect.TypeOf(obj)] = true
	}
	return c
}

// covers says whether Ensure reads objects of obj's kind from the cache as metadata.
func (c *CheckedVersions) covers(obj client.Object) bool {
	return c != nil && c.kinds[reflect.TypeOf(obj)]
}

// wantedHash is the hash of desired whole, owner reference included.
func wantedHash(desired client.Object) (wantedSum, error) {
	data, err := json.Marshal(desired)
	if err != nil {
		return wantedSum{}, fmt.Errorf("hashing %s: %w", desired.GetName(), err)
	}
	sum := sha256.Sum256(data)
	return wantedSum(sum[:len(wantedSum{})]), nil
}

// asChecked says whether obj, as the cache holds it, was last found holding what hash is of.
func (c *CheckedVersions) asChecked(obj metav1.Object, hash wantedSum) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	got, ok := c.current[obj.GetUID()]
	if !ok {
		if got, ok = c.previous[obj.GetUID()]; ok {
			c.put(obj.GetUID(), got)
		}
	}
	return ok && got == checkedVersion{resourceVersion: obj.GetResourceVersion(), hash: hash}
}

// record remembers that obj, read whole or just written, holds what hash is of.
func (c *CheckedVersions) record(obj metav1.Object, hash wantedSum) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.put(obj.GetUID(), checkedVersion{resourceVersion: obj.GetResourceVersion(), hash: hash})
}

// put adds an entry to the current generation, which becomes the previous one once it holds
// as many objects as that did (and at least minCheckedGeneration).
func (c *CheckedVersions) put(uid types.UID, v checkedVersion) {
	c.current[uid] = v
	if len(c.current) >= max(minCheckedGeneration, len(c.previous)) {
		c.previous, c.current = c.current, map[types.UID]checkedVersion{}
	}
}

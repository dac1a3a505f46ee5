package manager

import (
	"hash/maphash"
	"maps"
	"reflect"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
)

// The strings a manager's cache holds repeat from object to object: the namespace, label keys
// and values (which a Service's selector repeats again), the owner's API version, kind, name
// and UID in each of its children's owner references, container names, images, condition
// types and reasons. Each object decoded from the API server has its own copy of each: a
// quarter of the 2.2 KB a kre-runtime Service takes in the cache (BenchmarkCacheHeapPerService).
// The cache's transform makes the objects
// share one copy of each such string (strings are immutable, so sharing changes nothing a
// reader sees), and one copy of each map of strings they repeat whole: the labels of a
// kre-runtime server's Secret, Services and StatefulSet, which the Services' selectors and
// the StatefulSet's repeat again. A shared map is written by no one: the cache hands out deep
// copies, and what reads it in place (event handlers, UnsafeDisableDeepCopy lists) only reads.
// Other maps and slices stay each object's own.

// stringPoolGeneration is how many new strings a manager's pool takes before it starts
// forgetting those not given again: more than the distinct short strings of a thousand
// objects of each of an operator's kinds (a few tens of thousands).
const stringPoolGeneration = 1 << 16

// mapPoolGeneration is the same for maps of strings. A map of a few labels takes about 300
// bytes beside its strings, ten times a string, so its generations are smaller: the maps of
// objects gone that the pool keeps (two generations at most) are about 5 MB at most. A map
// given again within two generations, as a cached object's labels are at each of its
// updates, stays shared.
const mapPoolGeneration = 1 << 13

// cacheTransform is a manager's cache transform: it drops managedFields (no controller reads
// them, often the largest part of a cached object) and makes the objects share their strings.
func cacheTransform(pool *stringPool) func(any) (any, error) {
	strip := cache.TransformStripManagedFields()
	return func(obj any) (any, error) {
		obj, err := strip(obj)
		if err == nil {
			pool.internStrings(obj)
		}
		return obj, err
	}
}

// maxInterned is the longest string shared: longer ones (messages, certificates in an
// annotation) seldom repeat.
const maxInterned = 256

// stringPool hands out one copy of each string, and of each map of strings, it is given. It
// forgets those not given again within two generations (see generations), so names of
// objects long gone do not pile up: an object that still holds such a string keeps it, and
// the next object with it starts a new copy.
type stringPool struct {
	mu      sync.Mutex
	strings generations[string, string]
	// Maps by the hash of their contents (mapHash): a few share a hash, most have it alone.
	maps generations[uint64, []map[string]string]
}

func newStringPool(generationSize, mapGenerationSize int) *stringPool {
	return &stringPool{strings: newGenerations[string, string](generationSize),
		maps: newGenerations[uint64, []map[string]string](mapGenerationSize)}
}

// intern is the pool's copy of s (a copy of s made now, if the pool has none).
func (p *stringPool) intern(s string) string {
	if s == "" || len(s) > maxInterned {
		return s
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	shared, current, ok := p.strings.get(s)
	if current {
		return shared
	}
	if !ok {
		shared = strings.Clone(s) // never a part of a larger allocation the pool would keep alive
	}
	p.strings.put(shared, shared)
	return shared
}

// shareMap is the pool's map equal to m, whose strings are the pool's already: m itself,
// pooled now, when the pool has none.
func (p *stringPool) shareMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return m
	}
	key := mapHash(m)
	p.mu.Lock()
	defer p.mu.Unlock()
	candidates, current, _ := p.maps.get(key)
	shared := equalMap(candidates, m)
	if shared != nil && current {
		return shared
	}
	if shared == nil {
		shared, candidates = m, append(candidates, m)
	}
	p.maps.put(key, candidates)
	return shared
}

// generations hold a pool's entries in two generations of size each: an entry not put again
// within two of them is forgotten.
type generations[K comparable, V any] struct {
	size              int
	current, previous map[K]V
}

func newGenerations[K comparable, V any](size int) generations[K, V] {
	return generations[K, V]{size: size, current: map[K]V{}}
}

// get is the entry of k, and whether it is in the current generation: one found only in the
// previous generation is forgotten with it unless put again.
func (g *generations[K, V]) get(k K) (v V, current, ok bool) {
	if v, ok = g.current[k]; ok {
		return v, true, true
	}
	v, ok = g.previous[k]
	return v, false, ok
}

// put sets the entry of k in the current generation, which becomes the previous one once it
// holds size entries.
func (g *generations[K, V]) put(k K, v V) {
	if len(g.current) >= g.size {
		g.previous, g.current = g.current, make(map[K]V, len(g.current))
	}
	g.current[k] = v
}

// equalMap is the map of candidates equal to m; nil when none is.
func equalMap(candidates []map[string]string, m map[string]string) map[string]string {
	for _, c := range candidates {
		if maps.Equal(c, m) {
			return c
		}
	}
	return nil
}

var mapSeed = maphash.MakeSeed()

// mapHash is a hash of m's keys and values, whatever the order a range gives them in.
func mapHash(m map[string]string) uint64 {
	var sum uint64
	for k, v := range m {
		sum += maphash.Comparable(mapSeed, [2]string{k, v})
	}
	return sum
}

var objectMetaType, stringMapType = reflect.TypeFor[metav1.ObjectMeta](), reflect.TypeFor[map[string]string]()

// internStrings makes obj, a pointer to an object, hold the pool's copy of each of its
// strings (fields, slice elements, map keys and values, and the contents of unstructured
// objects) and of each of its fields that is a map of strings (labels, annotations,
// selectors). An object's own UID and resourceVersion, which no other object has, are left.
func (p *stringPool) internStrings(obj any) {
	if v := reflect.ValueOf(obj); v.Kind() == reflect.Pointer {
		p.internValue(v.Elem())
	}
}

func (p *stringPool) internValue(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		if v.CanSet() {
			v.SetString(p.intern(v.String()))
		}
	case reflect.Pointer:
		p.internValue(v.Elem())
	case reflect.Interface: // in unstructured contents: a string, a map[string]any or an []any
		if e := v.Elem(); e.Kind() == reflect.String && v.CanSet() {
			v.Set(reflect.ValueOf(p.intern(e.String())))
		} else if e.IsValid() {
			p.internValue(e)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() && (v.Type() != objectMetaType || !ownToTheObject(v.Type().Field(i).Name)) {
				p.internValue(f)
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return // data, not strings
		}
		for i := range v.Len() {
			p.internValue(v.Index(i))
		}
	case reflect.Map:
		p.internMap(v)
		if v.Type() == stringMapType && v.CanSet() {
			v.Set(reflect.ValueOf(p.shareMap(v.Interface().(map[string]string))))
		}
	}
}

// internMap shares m's string keys (assigning to an existing key replaces the key too) and
// string values, and what its other values hold where that can be set in place.
func (p *stringPool) internMap(m reflect.Value) {
	keyType, valueType := m.Type().Key(), m.Type().Elem()
	if keyType.Kind() != reflect.String {
		return
	}
	iter := m.MapRange()
	for iter.Next() {
		value := iter.Value()
		switch {
		case value.Kind() == reflect.String:
			value = reflect.ValueOf(p.intern(value.String())).Convert(valueType)
		case value.Kind() == reflect.Interface && value.Elem().Kind() == reflect.String:
			value = reflect.ValueOf(p.intern(value.Elem().String()))
		default:
			p.internValue(value) // a struct value in a map cannot be set: left as it is
		}
		m.SetMapIndex(reflect.ValueOf(p.intern(iter.Key().String())).Convert(keyType), value)
	}
}

// ownToTheObject says whether an ObjectMeta field holds what only that object has.
func ownToTheObject(field string) bool {
	return field == "UID" || field == "ResourceVersion"
}

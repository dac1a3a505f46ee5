package gordon

import (
	"testing"
	"time"
)

func TestExpectationsWaitForEveryCreationAndDeletion(t *testing.T) {
	e := newExpectations()
	const key = "ns/g"
	if !e.satisfied(key) {
		t.Fatal("a Gordon without expectations must be satisfied")
	}
	e.expectCreations(key, 2)
	e.creationObserved(key)
	if e.satisfied(key) {
		t.Fatal("satisfied with one of two creations observed")
	}
	e.creationObserved(key)
	if !e.satisfied(key) {
		t.Fatal("not satisfied after both creations were observed")
	}
	e.expectDeletions(key, []string{"ns/a", "ns/b"})
	e.deletionObserved(key, "ns/a")
	e.deletionObserved(key, "ns/a")
	if e.satisfied(key) {
		t.Fatal("satisfied while ns/b's deletion is outstanding (ns/a observed twice)")
	}
	e.deletionObserved(key, "ns/b")
	if !e.satisfied(key) {
		t.Fatal("not satisfied after both deletions were observed")
	}
}

func TestExpectationsExpire(t *testing.T) {
	e := newExpectations()
	now := time.Now()
	e.now = func() time.Time { return now }
	e.expectCreations("ns/g", 3)
	now = now.Add(expectationsTTL + time.Second)
	if !e.satisfied("ns/g") {
		t.Fatal("expectations must expire after their TTL")
	}
}

func TestForgetDropsExpectations(t *testing.T) {
	e := newExpectations()
	e.expectCreations("ns/g", 1)
	e.forget("ns/g")
	if !e.satisfied("ns/g") {
		t.Fatal("a forgotten Gordon must be satisfied")
	}
}

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
	e.expect(key, 2, nil)
	e.creationObserved(key)
	if e.satisfied(key) {
		t.Fatal("satisfied with one of two creations observed")
	}
	e.creationObserved(key)
	if !e.satisfied(key) {
		t.Fatal("not satisfied after both creations were observed")
	}
	e.expect(key, 0, []string{"ns/a", "ns/b"})
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
	e.expect("ns/g", 3, nil)
	now = now.Add(expectationsTTL + time.Second)
	if !e.satisfied("ns/g") {
		t.Fatal("expectations must expire after their TTL")
	}
}

func TestForgetDropsExpectations(t *testing.T) {
	e := newExpectations()
	e.expect("ns/g", 1, nil)
	e.forget("ns/g")
	if !e.satisfied("ns/g") {
		t.Fatal("a forgotten Gordon must be satisfied")
	}
}

func TestExpectationsOfARolloutWaitForBothCreationsAndDeletions(t *testing.T) {
	e := newExpectations()
	const key = "ns/g"
	e.expect(key, 1, []string{"ns/old"})
	e.creationObserved(key)
	if e.satisfied(key) {
		t.Fatal("satisfied while the outdated pod's deletion is outstanding")
	}
	e.deletionObserved(key, "ns/old")
	if !e.satisfied(key) {
		t.Fatal("not satisfied after the creation and the deletion were observed")
	}
}

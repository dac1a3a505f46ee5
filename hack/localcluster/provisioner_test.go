package main

import (
	"encoding/json"
	"testing"
)

func TestProvisionerWantsOnlyPendingClaimsOfItsClassWithASelectedNode(t *testing.T) {
	base := func() claim {
		var c claim
		class := storageClassName
		c.Spec.StorageClassName = &class
		c.Status.Phase = "Pending"
		c.Metadata.Annotations = map[string]string{selectedNodeKey: "quintet-node"}
		return c
	}
	if !wantsVolume(base()) {
		t.Fatal("a pending claim of the class with a selected node wants a volume")
	}
	other := "fast"
	for name, change := range map[string]func(*claim){
		"bound":            func(c *claim) { c.Status.Phase = "Bound" },
		"has a volume":     func(c *claim) { c.Spec.VolumeName = "pv-1" },
		"no selected node": func(c *claim) { c.Metadata.Annotations = nil },
		"no class":         func(c *claim) { c.Spec.StorageClassName = nil },
		"another class":    func(c *claim) { c.Spec.StorageClassName = &other },
	} {
		c := base()
		change(&c)
		if wantsVolume(c) {
			t.Errorf("a claim that is %s must not get a volume", name)
		}
	}
}

func TestVolumeIsPinnedToTheSelectedNodeAndBoundToTheClaim(t *testing.T) {
	var c claim
	c.Metadata.Name, c.Metadata.Namespace, c.Metadata.UID = "data-example-0", "demo", "1234"
	c.Metadata.Annotations = map[string]string{selectedNodeKey: "quintet-node"}
	c.Spec.AccessModes = []string{"ReadWriteOnce"}
	c.Spec.Resources.Requests = map[string]string{"storage": "1Gi"}
	data, err := volumeFor(c, "/volumes/pvc-1234")
	if err != nil {
		t.Fatal(err)
	}
	var pv struct {
		Metadata struct{ Name string }
		Spec     struct {
			Capacity     map[string]string
			ClaimRef     map[string]string
			Local        struct{ Path string }
			NodeAffinity struct {
				Required struct {
					NodeSelectorTerms []struct {
						MatchExpressions []struct {
							Key    string
							Values []string
						}
					}
				}
			}
		}
	}
	if err := json.Unmarshal(data, &pv); err != nil {
		t.Fatal(err)
	}
	if pv.Metadata.Name != "pvc-1234" || pv.Spec.Capacity["storage"] != "1Gi" || pv.Spec.Local.Path != "/volumes/pvc-1234" {
		t.Errorf("volume %s", data)
	}
	if ref := pv.Spec.ClaimRef; ref["name"] != "data-example-0" || ref["namespace"] != "demo" || ref["uid"] != "1234" {
		t.Errorf("claimRef %v", ref)
	}
	terms := pv.Spec.NodeAffinity.Required.NodeSelectorTerms
	if len(terms) != 1 || terms[0].MatchExpressions[0].Key != "kubernetes.io/hostname" || terms[0].MatchExpressions[0].Values[0] != "quintet-node" {
		t.Errorf("node affinity %s", data)
	}
}

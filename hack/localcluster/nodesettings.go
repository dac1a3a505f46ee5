package main

import (
	"encoding/json"
	"os"
)

// realNodeSettings are what up was given for the real nodes, kept while they run so that
// node-start and node-wipe bring a node back as up made it.
type realNodeSettings struct {
	Count      int    `json:"count"`
	Bin        string `json:"bin"`
	Images     string `json:"images"`
	PauseImage string `json:"pauseImage"`
	RegistryCA string `json:"registryCA,omitempty"`
}

// realNodesMarker holds the realNodeSettings while the cluster runs with real nodes.
func (l *layout) realNodesMarker() string { return l.nodeDir("real-nodes.json") }

func (l *layout) saveRealNodeSettings() error {
	data, err := json.Marshal(realNodeSettings{Count: len(l.RealNodes), Bin: l.Bin, Images: l.Images, PauseImage: l.PauseImage, RegistryCA: l.RegistryCA})
	if err != nil {
		return err
	}
	return os.WriteFile(l.realNodesMarker(), data, 0o644)
}

// readRealNodeSettings reads the settings up saved (false without them, or when they are not
// a real-node cluster's).
func (l *layout) readRealNodeSettings() (realNodeSettings, bool) {
	var s realNodeSettings
	data, err := os.ReadFile(l.realNodesMarker())
	if err != nil || json.Unmarshal(data, &s) != nil || s.Count < 1 || s.Count > maxRealNodes {
		return realNodeSettings{}, false
	}
	return s, true
}

// readRealNodes reads the cluster's real nodes from their marker (none without it).
func (l *layout) readRealNodes() []realNode {
	s, ok := l.readRealNodeSettings()
	if !ok {
		return nil
	}
	return realNodes(s.Count)
}

// useSavedNodeSettings takes the binaries, images, pause image and registry CA up was given.
func (l *layout) useSavedNodeSettings() {
	if s, ok := l.readRealNodeSettings(); ok {
		l.Bin, l.Images, l.PauseImage, l.RegistryCA = s.Bin, s.Images, s.PauseImage, s.RegistryCA
	}
}

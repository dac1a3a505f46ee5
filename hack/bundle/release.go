package main

import (
	"fmt"
	"os"
	"strings"

	"sigs.k8s.io/yaml"
)

// release is what the package's catalog template (config/catalog/<package>.yaml, opm's basic
// template) says of one bundle: the channels that list it, the package's default channel and
// the bundle's upgrade edge. The template is the one source of the upgrade graph; the CSV
// repeats its own edge (spec.replaces, olm.skipRange) and annotations.yaml its channels.
type release struct {
	channels       []string
	defaultChannel string
	replaces       string
	skipRange      string
}

// catalogTemplate is the part of a basic template the bundle reads.
type catalogTemplate struct {
	Entries []struct {
		Schema         string         `json:"schema"`
		Name           string         `json:"name"`
		DefaultChannel string         `json:"defaultChannel"`
		Entries        []channelEntry `json:"entries"`
	} `json:"entries"`
}

type channelEntry struct {
	Name      string `json:"name"`
	Replaces  string `json:"replaces"`
	SkipRange string `json:"skipRange"`
}

// readRelease reads the release of bundle csvName from the template at path. Every channel
// that lists the bundle must give it the same edge.
func readRelease(path, csvName string) (release, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return release{}, err
	}
	var t catalogTemplate
	if err := yaml.Unmarshal(data, &t); err != nil {
		return release{}, fmt.Errorf("%s: %w", path, err)
	}
	var r release
	var edge *channelEntry
	for _, e := range t.Entries {
		switch e.Schema {
		case "olm.package":
			r.defaultChannel = e.DefaultChannel
		case "olm.channel":
			for i, c := range e.Entries {
				if c.Name != csvName {
					continue
				}
				if edge != nil && (c.Replaces != edge.Replaces || c.SkipRange != edge.SkipRange) {
					return release{}, fmt.Errorf("%s: channels %s and %s give %s different upgrade edges",
						path, r.channels[0], e.Name, csvName)
				}
				edge = &e.Entries[i]
				r.channels = append(r.channels, e.Name)
			}
		}
	}
	if edge == nil {
		return release{}, fmt.Errorf("%s: no channel lists %s; add it to the channels it is published in", path, csvName)
	}
	if r.defaultChannel == "" {
		return release{}, fmt.Errorf("%s: the olm.package entry has no defaultChannel", path)
	}
	r.replaces, r.skipRange = edge.Replaces, edge.SkipRange
	return r, nil
}

func (r release) channelList() string { return strings.Join(r.channels, ",") }

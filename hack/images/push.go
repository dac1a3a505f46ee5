package main

import (
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// push pushes the image of a tarball this program wrote to the reference it carries. The
// registry is plain HTTP (go-containerregistry uses HTTP for loopback registries).
func push(path string) (string, error) {
	manifest, err := tarball.LoadManifest(pathOpener(path))
	if err != nil {
		return "", err
	}
	if len(manifest) != 1 || len(manifest[0].RepoTags) != 1 {
		return "", fmt.Errorf("%s: want one image with one tag", path)
	}
	ref, err := name.NewTag(manifest[0].RepoTags[0], name.StrictValidation)
	if err != nil {
		return "", err
	}
	img, err := tarball.ImageFromPath(path, &ref)
	if err != nil {
		return "", err
	}
	digest, err := img.Digest()
	if err != nil {
		return "", err
	}
	if err := remote.Write(ref, img); err != nil {
		return "", err
	}
	return ref.String() + "@" + digest.String(), nil
}

// Command images builds Quintet's container images without a container engine: each image
// is one static binary on a minimal root filesystem (passwd and group files naming the
// non-root user 65532, a /tmp), assembled with go-containerregistry and written as a
// docker-archive tarball (<name>-<tag>.tar) that containerd imports (`ctr images import`).
//
//	images --out DIR REF=BINARY:PATH [REF=BINARY:PATH ...]
//
// REF is the image reference, BINARY the file to copy, PATH where it goes in the image and
// the image's entrypoint. Layers carry a zero timestamp, so the same binaries give the same
// image digest.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

func main() {
	out := flag.String("out", "", "directory for the image tarballs (one <name>-<tag>.tar per image)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: images --out DIR REF=BINARY:PATH [REF=BINARY:PATH ...]")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *out == "" || flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fatal(err)
	}
	for _, arg := range flag.Args() {
		spec, err := parseSpec(arg)
		if err != nil {
			fatal(err)
		}
		path, err := spec.write(*out)
		if err != nil {
			fatal(fmt.Errorf("%s: %w", spec.ref, err))
		}
		fmt.Printf("%s -> %s\n", spec.ref, path)
	}
}

// imageSpec is one image to build: its reference, the binary and where the binary goes.
type imageSpec struct {
	ref        name.Tag
	binary     string
	entrypoint string
}

func parseSpec(arg string) (imageSpec, error) {
	ref, rest, ok := strings.Cut(arg, "=")
	binary, entrypoint, ok2 := strings.Cut(rest, ":")
	if !ok || !ok2 || !strings.HasPrefix(entrypoint, "/") {
		return imageSpec{}, fmt.Errorf("%q: want REF=BINARY:/PATH", arg)
	}
	tag, err := name.NewTag(ref, name.StrictValidation)
	if err != nil {
		return imageSpec{}, fmt.Errorf("%q: %w", arg, err)
	}
	return imageSpec{ref: tag, binary: binary, entrypoint: entrypoint}, nil
}

// write builds the image and writes it to DIR/<repository base name>-<tag>.tar.
func (s imageSpec) write(dir string) (string, error) {
	img, err := buildImage(s.binary, s.entrypoint)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, filepath.Base(s.ref.RepositoryStr())+"-"+s.ref.TagStr()+".tar")
	return path, tarball.WriteToFile(path, s.ref, img)
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "images:", err)
	os.Exit(1)
}

// Command images builds, pushes and serves Quintet's container images without a container
// engine, with go-containerregistry. Images are written as docker-archive tarballs
// (<name>-<tag>.tar) that containerd imports (`ctr images import`) and `push` sends to the
// registry their reference names. Layers carry a zero timestamp: the same inputs give the
// same digest.
//
//	images build   --out DIR REF=BINARY:PATH[,BINARY:PATH] ...  static binaries on a minimal rootfs
//	                                               (user 65532); the first is the entrypoint
//	images bundle  --out DIR REF=BUNDLE_DIR ...    an OLM bundle image (manifests/, metadata/, labels)
//	images catalog --out DIR --opm OPM --health-probe GRPC_HEALTH_PROBE [--shell SH] REF=FBC_DIR
//	                                               an OLM catalog image: opm serving /configs
//	images push    TARBALL ...                     push each to the reference it carries
//	images registry --addr 127.0.0.1:5000 --dir DIR [--tls-addr 127.0.0.1:5443 --tls-dir DIR]
//	                                               serve a registry on loopback (HTTP, and HTTPS)
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

const usage = `usage:
  images build   --out DIR REF=BINARY:PATH[,BINARY:PATH] [...]
  images bundle  --out DIR REF=BUNDLE_DIR [...]
  images catalog --out DIR --opm OPM --health-probe GRPC_HEALTH_PROBE [--shell SH] REF=CATALOG_DIR
  images push    TARBALL [...]
  images registry --addr 127.0.0.1:5000 --dir DIR [--tls-addr 127.0.0.1:5443 --tls-dir DIR]`

func main() {
	if len(os.Args) < 2 {
		fatal(fmt.Errorf("%s", usage))
	}
	flags := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	out := flags.String("out", "", "directory for the image tarballs (one <name>-<tag>.tar per image)")
	opm := flags.String("opm", "", "the static opm binary the catalog image serves with")
	healthProbe := flags.String("health-probe", "", "the static grpc_health_probe binary OLM probes catalog pods with")
	shell := flags.String("shell", "", "catalog: a static shell (busybox) to add as /bin/sh")
	addr := flags.String("addr", "127.0.0.1:5000", "the registry's loopback address")
	dir := flags.String("dir", "", "the registry's blob folder")
	tlsAddr := flags.String("tls-addr", "", "registry: also serve HTTPS on this loopback address")
	tlsDir := flags.String("tls-dir", "", "registry: where the HTTPS certificate's CA (ca.crt) is kept")
	_ = flags.Parse(os.Args[2:])
	var err error
	switch os.Args[1] {
	case "build":
		err = buildAll(*out, flags.Args(), binariesImage)
	case "bundle":
		err = buildAll(*out, flags.Args(), bundleImage)
	case "catalog":
		if *opm == "" || *healthProbe == "" {
			err = fmt.Errorf("--opm and --health-probe are required")
			break
		}
		err = buildAll(*out, flags.Args(), func(dir string) (v1.Image, error) { return catalogImage(dir, *opm, *healthProbe, *shell) })
	case "push":
		for _, path := range flags.Args() {
			pushed, perr := push(path)
			if perr != nil {
				err = fmt.Errorf("%s: %w", path, perr)
				break
			}
			fmt.Println("pushed", pushed)
		}
	case "registry":
		if *dir == "" || (*tlsAddr != "" && *tlsDir == "") {
			err = fmt.Errorf("--dir is required, and --tls-dir with --tls-addr")
			break
		}
		err = serveRegistry(*addr, *tlsAddr, *dir, *tlsDir)
	default:
		err = fmt.Errorf("unknown command %q\n%s", os.Args[1], usage)
	}
	if err != nil {
		fatal(err)
	}
}

// binariesImage is an image of static binaries, "BINARY:/PATH[,BINARY:/PATH...]"; the first
// is the entrypoint.
func binariesImage(source string) (v1.Image, error) {
	var files []tarEntry
	for _, spec := range strings.Split(source, ",") {
		binary, path, ok := strings.Cut(spec, ":")
		if !ok || !strings.HasPrefix(path, "/") {
			return nil, fmt.Errorf("%q: want BINARY:/PATH", spec)
		}
		file, err := fileEntry(binary, path, 0o755)
		if err != nil {
			return nil, err
		}
		files = append(files, file)
	}
	return buildImage(files, imageConfig{entrypoint: []string{"/" + files[0].name}})
}

// buildAll builds one image per REF=SOURCE argument and writes each to out/<name>-<tag>.tar.
func buildAll(out string, args []string, build func(source string) (v1.Image, error)) error {
	if out == "" || len(args) == 0 {
		return fmt.Errorf("--out and at least one REF=SOURCE are required\n%s", usage)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for _, arg := range args {
		ref, source, ok := strings.Cut(arg, "=")
		if !ok {
			return fmt.Errorf("%q: want REF=SOURCE", arg)
		}
		tag, err := name.NewTag(ref, name.StrictValidation)
		if err != nil {
			return fmt.Errorf("%q: %w", arg, err)
		}
		img, err := build(source)
		if err != nil {
			return fmt.Errorf("%s: %w", ref, err)
		}
		path := filepath.Join(out, tarballName(tag))
		if err := tarball.WriteToFile(path, tag, img); err != nil {
			return fmt.Errorf("%s: %w", ref, err)
		}
		fmt.Printf("%s -> %s\n", tag, path)
	}
	return nil
}

// tarballName is <repository base name>-<tag>.tar.
func tarballName(tag name.Tag) string {
	return filepath.Base(tag.RepositoryStr()) + "-" + tag.TagStr() + ".tar"
}

func pathOpener(path string) tarball.Opener {
	return func() (io.ReadCloser, error) { return os.Open(path) }
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "images:", err)
	os.Exit(1)
}

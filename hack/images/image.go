package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"path"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// nonRootUser is the user every Quintet image runs as (the distroless "nonroot" user), so
// pods meet the restricted Pod Security level with runAsNonRoot.
const nonRootUser = "65532"

// buildImage returns a one-layer linux/amd64 image holding the binary at entrypoint.
func buildImage(binary, entrypoint string) (v1.Image, error) {
	layer, err := rootfsLayer(binary, entrypoint)
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", "amd64"
	cfg.Created = v1.Time{Time: time.Unix(0, 0).UTC()}
	cfg.Config.Entrypoint = []string{entrypoint}
	cfg.Config.User = nonRootUser + ":" + nonRootUser
	cfg.Config.WorkingDir = "/"
	cfg.Config.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
	return mutate.ConfigFile(img, cfg)
}

// rootfsLayer is the image's only layer: the binary, passwd and group files, and /tmp.
func rootfsLayer(binary, entrypoint string) (v1.Layer, error) {
	content, err := os.ReadFile(binary)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	w := tar.NewWriter(&buf)
	entries := make([]tarEntry, 0, 16)
	entries = append(entries, []tarEntry{
		{name: "etc/", mode: 0o755, dir: true},
		{name: "etc/passwd", mode: 0o644, data: []byte(fmt.Sprintf(
			"root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%[1]s:%[1]s:nonroot:/home/nonroot:/sbin/nologin\n", nonRootUser))},
		{name: "etc/group", mode: 0o644, data: []byte(fmt.Sprintf("root:x:0:\nnonroot:x:%s:\n", nonRootUser))},
		{name: "tmp/", mode: 0o1777, dir: true},
		{name: "home/", mode: 0o755, dir: true},
		{name: "home/nonroot/", mode: 0o700, dir: true, owner: 65532},
	}...)
	var parents []tarEntry // the entrypoint's directories, outermost first
	for dir := path.Dir(entrypoint[1:]); dir != "."; dir = path.Dir(dir) {
		parents = append([]tarEntry{{name: dir + "/", mode: 0o755, dir: true}}, parents...)
	}
	entries = append(entries, parents...)
	entries = append(entries, tarEntry{name: entrypoint[1:], mode: 0o755, data: content})
	written := map[string]bool{}
	for _, e := range entries {
		if written[e.name] {
			continue
		}
		written[e.name] = true
		if err := e.write(w); err != nil {
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	})
}

type tarEntry struct {
	name  string
	mode  int64
	dir   bool
	owner int
	data  []byte
}

func (e tarEntry) write(w *tar.Writer) error {
	hdr := &tar.Header{
		Name: e.name, Mode: e.mode, Uid: e.owner, Gid: e.owner,
		ModTime: time.Unix(0, 0), Typeflag: tar.TypeReg, Size: int64(len(e.data)),
	}
	if e.dir {
		hdr.Typeflag, hdr.Size = tar.TypeDir, 0
	}
	if err := w.WriteHeader(hdr); err != nil {
		return err
	}
	_, err := w.Write(e.data)
	return err
}

package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// nonRootUser is the user every Quintet image runs as (the distroless "nonroot" user), so
// pods meet the restricted Pod Security level with runAsNonRoot.
const nonRootUser = "65532"

// imageConfig is what differs between our images: the entrypoint and its arguments, and labels.
type imageConfig struct {
	entrypoint []string
	cmd        []string
	labels     map[string]string
}

// buildImage returns a one-layer linux/amd64 image of files on the minimal root filesystem.
func buildImage(files []tarEntry, c imageConfig) (v1.Image, error) {
	layer, err := rootfsLayer(files)
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
	cfg.Config.Entrypoint, cfg.Config.Cmd, cfg.Config.Labels = c.entrypoint, c.cmd, c.labels
	cfg.Config.User = nonRootUser + ":" + nonRootUser
	cfg.Config.WorkingDir = "/"
	cfg.Config.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
	return mutate.ConfigFile(img, cfg)
}

// fileEntry is the file at src, placed at dst (absolute) in the image.
func fileEntry(src, dst string, mode int64) (tarEntry, error) {
	data, err := os.ReadFile(src)
	return tarEntry{name: dst[1:], mode: mode, data: data}, err
}

// treeEntries are the files and folders under src, placed under dst (absolute) in the image.
func treeEntries(src, dst string) ([]tarEntry, error) {
	var entries []tarEntry
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		name := path.Join(dst[1:], filepath.ToSlash(rel))
		if d.IsDir() {
			entries = append(entries, tarEntry{name: name + "/", mode: 0o755, dir: true})
			return nil
		}
		e, err := fileEntry(p, "/"+name, 0o644)
		entries = append(entries, e)
		return err
	})
	return entries, err
}

// rootfsLayer is the image's only layer: passwd and group files, /tmp, the user's home, and
// the files with the folders above them. Entries are written in order, each once.
func rootfsLayer(files []tarEntry) (v1.Layer, error) {
	entries := []tarEntry{
		{name: "etc/", mode: 0o755, dir: true},
		{name: "etc/passwd", mode: 0o644, data: []byte(fmt.Sprintf(
			"root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%[1]s:%[1]s:nonroot:/home/nonroot:/sbin/nologin\n", nonRootUser))},
		{name: "etc/group", mode: 0o644, data: []byte(fmt.Sprintf("root:x:0:\nnonroot:x:%s:\n", nonRootUser))},
		{name: "tmp/", mode: 0o1777, dir: true},
		{name: "home/", mode: 0o755, dir: true},
		{name: "home/nonroot/", mode: 0o700, dir: true, owner: 65532},
	}
	for _, f := range files {
		var parents []tarEntry // the file's folders, outermost first
		for dir := path.Dir(path.Clean(f.name)); dir != "."; dir = path.Dir(dir) {
			parents = append([]tarEntry{{name: dir + "/", mode: 0o755, dir: true}}, parents...)
		}
		entries = append(append(entries, parents...), f)
	}
	var buf bytes.Buffer
	w := tar.NewWriter(&buf)
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

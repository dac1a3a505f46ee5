package backup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
)

// Objects is where backups are kept: a bucket of an S3-compatible store (Store), or a folder
// of a volume (Folder).
type Objects interface {
	// Put streams body to key; check runs once body is read to its end, before the object
	// is visible: when it or anything else fails, nothing is stored and an object already
	// under key stays as it was.
	Put(ctx context.Context, key string, body io.Reader, check func() error) (int64, error)
	// Get opens key for reading.
	Get(ctx context.Context, key string) (io.ReadCloser, error)
	// List returns the objects whose keys start with prefix.
	List(ctx context.Context, prefix string) ([]Object, error)
	// Delete deletes key.
	Delete(ctx context.Context, key string) error
	// Path names key as status shows it: "<bucket>/<key>", or "<claim>/<file>".
	Path(key string) string
}

// partSuffix marks a file being written: it becomes the backup once checked and renamed.
const partSuffix = ".part"

// Folder is a folder of a volume, such as a PersistentVolumeClaim's mount: keys are file
// paths under Dir. Name is the volume's, for Path.
type Folder struct {
	Dir, Name string
}

func (f Folder) file(key string) string { return filepath.Join(f.Dir, filepath.FromSlash(key)) }

// Path is "<name>/<key>".
func (f Folder) Path(key string) string { return f.Name + "/" + key }

// Put writes body to key's file beside it, checks it, syncs it and renames it into place.
func (f Folder) Put(_ context.Context, key string, body io.Reader, check func() error) (int64, error) {
	file := f.file(key)
	if err := os.MkdirAll(filepath.Dir(file), 0o750); err != nil {
		return 0, f.volumeError("making the folder of "+key, err)
	}
	part, err := os.OpenFile(file+partSuffix, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o640) //nolint:gosec // under the backup volume
	if err != nil {
		return 0, f.volumeError("writing "+key, err)
	}
	size, err := io.Copy(part, body)
	var werr *os.PathError
	switch {
	case errors.As(err, &werr):
		err = f.volumeError("writing "+key, err)
	case err != nil:
		err = fmt.Errorf("reading the snapshot: %w", err)
	default:
		err = check()
	}
	if err == nil {
		if err = part.Sync(); err != nil {
			err = f.volumeError("writing "+key, err)
		}
	}
	if cerr := part.Close(); err == nil && cerr != nil {
		err = f.volumeError("writing "+key, cerr)
	}
	if err == nil {
		if err = os.Rename(file+partSuffix, file); err != nil {
			err = f.volumeError("renaming "+key, err)
		}
	}
	if err != nil {
		_ = os.Remove(file + partSuffix)
		return 0, err
	}
	return size, nil
}

// Get opens key's file.
func (f Folder) Get(_ context.Context, key string) (io.ReadCloser, error) {
	file, err := os.Open(f.file(key))
	if err != nil {
		return nil, f.volumeError("reading "+key, err)
	}
	return file, nil
}

// List returns the files whose keys start with prefix, in prefix's folder.
func (f Folder) List(_ context.Context, prefix string) ([]Object, error) {
	dir, base := filepath.Split(f.file(prefix))
	if strings.HasSuffix(prefix, "/") {
		base = ""
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, f.volumeError("listing "+prefix+"*", err)
	}
	keyDir := filepath.ToSlash(filepath.Dir(prefix + "x"))
	var objects []Object
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || !strings.HasPrefix(name, base) || strings.HasSuffix(name, partSuffix) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // gone since
		}
		key := name
		if keyDir != "." {
			key = keyDir + "/" + name
		}
		objects = append(objects, Object{Key: key, Size: info.Size(), LastModified: info.ModTime()})
	}
	return objects, nil
}

// Delete removes key's file.
func (f Folder) Delete(_ context.Context, key string) error {
	if err := os.Remove(f.file(key)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return f.volumeError("deleting "+key, err)
	}
	return nil
}

// volumeError says what failed on the volume, with the condition's reason: a missing file
// is SnapshotNotFound, a full volume or any other failure StoreFailed.
func (f Folder) volumeError(what string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &Error{Reason: v1beta2.ReasonSnapshotNotFound, Err: fmt.Errorf("%s: volume %s has no such file", what, f.Name)}
	case errors.Is(err, syscall.ENOSPC):
		return &Error{Reason: v1beta2.ReasonStoreFailed, Err: fmt.Errorf("%s: volume %s is full; older backups are kept", what, f.Name)}
	}
	return &Error{Reason: v1beta2.ReasonStoreFailed, Err: fmt.Errorf("%s on volume %s: %w", what, f.Name, err)}
}

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// The local cluster's storage: a default StorageClass whose volumes are folders under
// .local/volumes/<node>, provisioned like rancher's local-path provisioner does it. Binding
// waits for the first consumer, so each volume is a `local` PersistentVolume pinned to the node
// the scheduler picked (on a kwok node nothing uses the folder; on a real node the kubelet
// mounts it, applying the pod's fsGroup; node-wipe removes that node's folder, as a replaced
// machine loses its disks). Deleting the claim deletes the volume and the folder.
const (
	storageClassName = "standard"
	provisionerName  = "quintet.dev/local-path"
	provisionerProc  = "local-path-provisioner"
	selectedNodeKey  = "volume.kubernetes.io/selected-node"
	provisionedByKey = "pv.kubernetes.io/provisioned-by"
)

const storageClassJSON = `{"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
  "metadata": {"name": %q, "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
  "provisioner": %q, "reclaimPolicy": "Delete", "volumeBindingMode": "WaitForFirstConsumer"}`

func (l *layout) volumesDir() string { return filepath.Join(l.Root, "volumes") }

// nodeVolumesDir holds the volumes of one node.
func (l *layout) nodeVolumesDir(node string) string { return filepath.Join(l.volumesDir(), node) }

// provisionerProcess runs this program's `provision` command as a cluster component.
func (l *layout) provisionerProcess() (process, error) {
	exe, err := os.Executable()
	if err != nil {
		return process{}, err
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return process{}, err
	}
	return process{Name: provisionerProc, Exe: exe, Args: []string{"provision", "--dir", l.Root}}, nil
}

// ensureStorageClass creates the default StorageClass.
func ensureStorageClass(ctx context.Context, api *apiClient) error {
	obj := json.RawMessage(fmt.Sprintf(storageClassJSON, storageClassName, provisionerName))
	if code, err := api.do(ctx, http.MethodPost, "/apis/storage.k8s.io/v1/storageclasses", obj, nil); err != nil && code != http.StatusConflict {
		return fmt.Errorf("creating the default StorageClass: %w", err)
	}
	return nil
}

// claim is the part of a PersistentVolumeClaim the provisioner reads.
type claim struct {
	Metadata struct {
		Name        string            `json:"name"`
		Namespace   string            `json:"namespace"`
		UID         string            `json:"uid"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		StorageClassName *string  `json:"storageClassName"`
		VolumeName       string   `json:"volumeName"`
		AccessModes      []string `json:"accessModes"`
		Resources        struct {
			Requests map[string]string `json:"requests"`
		} `json:"resources"`
	} `json:"spec"`
	Status struct {
		Phase string `json:"phase"`
	} `json:"status"`
}

// volume is the part of a PersistentVolume the provisioner reads.
type volume struct {
	Metadata struct {
		Name        string            `json:"name"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		Local *struct {
			Path string `json:"path"`
		} `json:"local"`
	} `json:"spec"`
	Status struct {
		Phase string `json:"phase"`
	} `json:"status"`
}

// provision runs the provisioner until ctx ends: every second it creates volumes for the
// claims waiting for one and deletes the volumes whose claims are gone.
func provision(ctx context.Context, l *layout) error {
	api, err := l.adminClient()
	if err != nil {
		return err
	}
	log.Printf("Provisioning %s volumes under %s", storageClassName, l.volumesDir())
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		if err := provisionOnce(ctx, api, l.volumesDir()); err != nil {
			log.Printf("Provisioning: %v", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

func provisionOnce(ctx context.Context, api *apiClient, dir string) error {
	var claims struct{ Items []claim }
	if _, err := api.do(ctx, http.MethodGet, "/api/v1/persistentvolumeclaims", nil, &claims); err != nil {
		return err
	}
	var errs []error
	for _, c := range claims.Items {
		if wantsVolume(c) {
			errs = append(errs, createVolume(ctx, api, dir, c))
		}
	}
	var volumes struct{ Items []volume }
	if _, err := api.do(ctx, http.MethodGet, "/api/v1/persistentvolumes", nil, &volumes); err != nil {
		return errors.Join(append(errs, err)...)
	}
	for _, v := range volumes.Items {
		if v.Metadata.Annotations[provisionedByKey] == provisionerName && (v.Status.Phase == "Released" || v.Status.Phase == "Failed") {
			errs = append(errs, deleteVolume(ctx, api, v))
		}
	}
	return errors.Join(errs...)
}

// wantsVolume: a pending claim of our class, unbound, whose pod the scheduler placed.
func wantsVolume(c claim) bool {
	return c.Spec.StorageClassName != nil && *c.Spec.StorageClassName == storageClassName &&
		c.Status.Phase == "Pending" && c.Spec.VolumeName == "" && c.Metadata.Annotations[selectedNodeKey] != ""
}

// volumeJSON is the PersistentVolume for a claim: a folder pinned to the selected node and
// pre-bound to the claim.
const volumeJSON = `{"apiVersion": "v1", "kind": "PersistentVolume",
  "metadata": {"name": %[1]q, "annotations": {%[2]q: %[3]q}},
  "spec": {
    "capacity": {"storage": %[4]q},
    "accessModes": %[5]s,
    "persistentVolumeReclaimPolicy": "Delete",
    "storageClassName": %[6]q,
    "volumeMode": "Filesystem",
    "local": {"path": %[7]q},
    "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": %[8]q, "name": %[9]q, "uid": %[10]q},
    "nodeAffinity": {"required": {"nodeSelectorTerms": [
      {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": [%[11]q]}]}]}}}}`

func volumeFor(c claim, path string) (json.RawMessage, error) {
	modes, err := json.Marshal(c.Spec.AccessModes)
	if err != nil {
		return nil, err
	}
	return json.RawMessage(fmt.Sprintf(volumeJSON, "pvc-"+c.Metadata.UID, provisionedByKey, provisionerName,
		c.Spec.Resources.Requests["storage"], modes, storageClassName, path,
		c.Metadata.Namespace, c.Metadata.Name, c.Metadata.UID, c.Metadata.Annotations[selectedNodeKey])), nil
}

func createVolume(ctx context.Context, api *apiClient, dir string, c claim) error {
	path := filepath.Join(dir, c.Metadata.Annotations[selectedNodeKey], "pvc-"+c.Metadata.UID)
	// The kubelet hands the folder to the pod's fsGroup when it mounts it.
	if err := os.MkdirAll(path, 0o750); err != nil {
		return err
	}
	pv, err := volumeFor(c, path)
	if err != nil {
		return err
	}
	code, err := api.do(ctx, http.MethodPost, "/api/v1/persistentvolumes", pv, nil)
	if err != nil && code != http.StatusConflict {
		return fmt.Errorf("creating the volume of %s/%s: %w", c.Metadata.Namespace, c.Metadata.Name, err)
	}
	if err == nil {
		log.Printf("Created volume pvc-%s for %s/%s on %s", c.Metadata.UID, c.Metadata.Namespace, c.Metadata.Name, c.Metadata.Annotations[selectedNodeKey])
	}
	return nil
}

func deleteVolume(ctx context.Context, api *apiClient, v volume) error {
	if v.Spec.Local != nil {
		if err := os.RemoveAll(v.Spec.Local.Path); err != nil {
			return err
		}
	}
	code, err := api.do(ctx, http.MethodDelete, "/api/v1/persistentvolumes/"+v.Metadata.Name, nil, nil)
	if err != nil && code != http.StatusNotFound {
		return err
	}
	log.Printf("Deleted volume %s", v.Metadata.Name)
	return nil
}

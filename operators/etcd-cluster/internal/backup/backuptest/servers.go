// Package backuptest runs the real servers backups are tested against, on loopback: an etcd
// member (the control plane's etcd, from bin/) and an S3 store (versitygw, built from source
// into bin/ by make, named by $QUINTET_VERSITYGW).
package backuptest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/backup"
	"github.com/quintet-operators/quintet/shared/testenv"
)

// VersityGWEnv names the versitygw binary; make test sets it.
const VersityGWEnv = "QUINTET_VERSITYGW"

// Server is a process serving on loopback.
type Server struct {
	URL  string
	cmd  *exec.Cmd
	done chan struct{} // closed when it exited, with exit
	exit error
	log  string
}

// Stop kills the process and waits for it.
func (s *Server) Stop() {
	_ = s.cmd.Process.Kill()
	<-s.done
}

// S3 is a running versitygw, with its root credentials.
type S3 struct {
	*Server
	AccessKey, SecretKey string
}

// StartS3 runs versitygw's POSIX backend on a folder under dir.
func StartS3(dir string) (*S3, error) {
	bin := os.Getenv(VersityGWEnv)
	if bin == "" {
		return nil, fmt.Errorf("$%s is unset: run the tests with `make test-etcd-cluster`, which builds versitygw from source and sets it", VersityGWEnv)
	}
	data, meta := filepath.Join(dir, "s3-data"), filepath.Join(dir, "s3-meta")
	for _, d := range []string{data, meta} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			return nil, err
		}
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	s := &S3{AccessKey: "backuptest", SecretKey: "backuptest-secret-key"}
	cmd := exec.Command(bin, "--port", addr, "--health", "/health", "posix", "--sidecar", meta, data) //nolint:gosec // the binary make built
	cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY_ID="+s.AccessKey, "ROOT_SECRET_ACCESS_KEY="+s.SecretKey)
	if s.Server, err = launch(cmd, "http://"+addr, filepath.Join(dir, "versitygw.log")); err == nil {
		err = s.await()
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

// StartAll runs a store with bucket made and an etcd member, their data in a new temporary
// folder; stop ends both and removes the folder.
func StartAll(bucket string) (store *S3, member *Server, stop func(), err error) {
	dir, err := os.MkdirTemp("", "backuptest-")
	if err != nil {
		return nil, nil, nil, err
	}
	var stops []func()
	stop = func() {
		for _, s := range stops {
			s()
		}
		_ = os.RemoveAll(dir)
	}
	if store, err = StartS3(dir); err == nil {
		stops = append(stops, store.Stop)
		member, err = StartEtcd(dir)
	}
	if err == nil {
		stops = append(stops, member.Stop)
		err = store.CreateBucket(context.Background(), bucket)
	}
	if err != nil {
		stop()
		return nil, nil, nil, err
	}
	return store, member, stop, nil
}

// Main runs a test package's tests against StartAll's store (with bucket) and member, which
// it gives set first: a package's TestMain.
func Main(m *testing.M, bucket string, set func(*S3, *Server)) int {
	store, member, stop, err := StartAll(bucket)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer stop()
	set(store, member)
	return m.Run()
}

// Source is an s3 section for bucket/key in this store, with path-style addressing.
func (s *S3) Source(path, awsSecret string) *v1beta2.S3BackupSource {
	return &v1beta2.S3BackupSource{Path: path, AWSSecret: awsSecret, Endpoint: s.URL, ForcePathStyle: true}
}

// Store is a client of bucket in this store, with the root credentials.
func (s *S3) Store(bucket string) *backup.Store {
	creds := backup.Credentials{AccessKeyID: s.AccessKey, SecretAccessKey: s.SecretKey, Region: "us-east-1"}
	return backup.NewS3Store(s.Source(bucket+"/x", "unused"), creds, backup.Anywhere)
}

// CredentialsFile is an AWS shared credentials file with the given keys, as the CoreOS
// operator's awsSecret holds it.
func CredentialsFile(accessKey, secretKey string) []byte {
	return []byte(fmt.Sprintf("[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n", accessKey, secretKey))
}

// CreateBucket makes a bucket with the root credentials.
func (s *S3) CreateBucket(ctx context.Context, name string) error {
	client := s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String(s.URL), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(s.AccessKey, s.SecretKey, "")})
	_, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)})
	return err
}

// StartEtcd runs a one-member etcd cluster with its data under dir.
func StartEtcd(dir string) (*Server, error) {
	clientURL, err := FreeURL()
	if err != nil {
		return nil, err
	}
	peerURL, err := FreeURL()
	if err != nil {
		return nil, err
	}
	return StartMember(filepath.Join(dir, "etcd"), "backuptest", clientURL, peerURL, filepath.Join(dir, "etcd.log"))
}

// StartMember runs the etcd member name of a one-member cluster on dataDir (a new one, or
// data restored for it), logging to logPath.
func StartMember(dataDir, name, clientURL, peerURL, logPath string) (*Server, error) {
	cmd, err := memberCommand(dataDir, name, clientURL, peerURL, name+"="+peerURL)
	if err != nil {
		return nil, err
	}
	s, err := launch(cmd, clientURL, logPath)
	if err != nil {
		return nil, err
	}
	return s, s.await()
}

// StartCluster runs a cluster of n members with their data under dir.
func StartCluster(dir string, n int) ([]*Server, error) {
	var clients, peers, initial []string
	for i := range n {
		client, err := FreeURL()
		if err != nil {
			return nil, err
		}
		peer, err := FreeURL()
		if err != nil {
			return nil, err
		}
		clients, peers = append(clients, client), append(peers, peer)
		initial = append(initial, fmt.Sprintf("m%d=%s", i, peer))
	}
	var members []*Server
	stop := func() {
		for _, m := range members {
			m.Stop()
		}
	}
	for i := range n {
		name := fmt.Sprintf("m%d", i)
		cmd, err := memberCommand(filepath.Join(dir, name), name, clients[i], peers[i], strings.Join(initial, ","))
		var m *Server
		if err == nil {
			m, err = launch(cmd, clients[i], filepath.Join(dir, name+".log"))
		}
		if err != nil {
			stop()
			return nil, err
		}
		members = append(members, m)
	}
	for _, m := range members { // healthy once a quorum runs: every member first
		if err := m.await(); err != nil {
			stop()
			return nil, err
		}
	}
	return members, nil
}

// memberCommand runs bin/'s etcd as member name of initialCluster.
func memberCommand(dataDir, name, clientURL, peerURL, initialCluster string) (*exec.Cmd, error) {
	assets, err := testenv.AssetsDir(".")
	if err != nil {
		return nil, err
	}
	return exec.Command(filepath.Join(assets, "etcd"), "--name", name, "--data-dir", dataDir, //nolint:gosec // bin/'s etcd
		"--listen-client-urls", clientURL, "--advertise-client-urls", clientURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", initialCluster, "--quota-backend-bytes", strconv.Itoa(2<<30)), nil
}

// FreeURL is an http URL of a free loopback port.
func FreeURL() (string, error) {
	port, err := freePort()
	return fmt.Sprintf("http://127.0.0.1:%d", port), err
}

// launch runs cmd, logging to logPath, serving url.
func launch(cmd *exec.Cmd, url, logPath string) (*Server, error) {
	log, err := os.Create(logPath) //nolint:gosec // the test's own folder
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return nil, errors.Join(err, log.Close())
	}
	s := &Server{URL: url, cmd: cmd, done: make(chan struct{}), log: logPath}
	go func() { s.exit = cmd.Wait(); _ = log.Close(); close(s.done) }()
	return s, nil
}

// await waits until s's /health answers 200 (it is stopped if not within 30 s).
func (s *Server) await() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		if healthy(ctx, s.URL+"/health") {
			return nil
		}
		select {
		case <-s.done:
			return fmt.Errorf("%s exited (%v): see %s", s.cmd.Path, s.exit, s.log)
		case <-ctx.Done():
			s.Stop()
			return fmt.Errorf("%s did not answer %s/health in 30s: see %s", s.cmd.Path, s.URL, s.log)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func healthy(ctx context.Context, url string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil) //nolint:gosec // a loopback server of the test's
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req) //nolint:gosec // a loopback server of the test's
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}

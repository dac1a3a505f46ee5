package backup

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
)

// PartSize is the size of each part of a multipart upload, and so the memory a backup
// holds, whatever the size of the database.
const PartSize = 8 << 20

// Store is one bucket of an S3-compatible object store.
type Store struct {
	client *s3.Client
	bucket string
}

// Object is a stored backup.
type Object struct {
	Key          string
	Size         int64
	LastModified time.Time
}

// SplitPath splits an s3.path, "<bucket>/<key>".
func SplitPath(path string) (bucket, key string) {
	bucket, key, _ = strings.Cut(path, "/")
	return bucket, key
}

// NewS3Store is the bucket of src's path, signed with creds, reached only where reach allows.
func NewS3Store(src *v1beta2.S3BackupSource, creds Credentials, reach Reach) *Store {
	host := "s3.amazonaws.com"
	if u, err := url.Parse(src.Endpoint); err == nil && src.Endpoint != "" {
		host = u.Hostname()
	}
	httpClient := awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) {
		t.DialContext = reach.dialer(host)
	})
	client := s3.New(s3.Options{
		HTTPClient:   httpClient,
		Region:       creds.Region,
		Credentials:  credentials.NewStaticCredentialsProvider(creds.AccessKeyID, creds.SecretAccessKey, creds.SessionToken),
		UsePathStyle: src.ForcePathStyle,
		BaseEndpoint: endpointOf(src),
		// Checksums only where S3 requires them: many S3-compatible stores refuse the
		// newer default checksum headers. Integrity is etcd's SHA-256, checked before an
		// object is made visible, and Content-MD5 where S3 asks for it.
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	})
	bucket, _ := SplitPath(src.Path)
	return &Store{client: client, bucket: bucket}
}

func endpointOf(src *v1beta2.S3BackupSource) *string {
	if src.Endpoint == "" {
		return nil
	}
	return aws.String(src.Endpoint)
}

// Put streams body to key: one PutObject when it fits in a part, else a multipart upload of
// PartSize parts, so a backup holds one part in memory. check runs once body is read to its
// end and before the object becomes visible; when it fails, or anything else does, nothing
// is stored and an object already under key stays as it was. Errors reading body are
// returned as they are; the store's are *Error.
func (s *Store) Put(ctx context.Context, key string, body io.Reader, check func() error) (int64, error) {
	buf := make([]byte, PartSize)
	n, err := io.ReadFull(body, buf)
	switch {
	case err == nil:
		return s.putParts(ctx, key, buf, body, check)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
	default:
		return 0, fmt.Errorf("reading the snapshot: %w", err)
	}
	if err := check(); err != nil {
		return 0, err
	}
	_, err = s.client.PutObject(ctx, &s3.PutObjectInput{Bucket: &s.bucket, Key: &key,
		Body: bytes.NewReader(buf[:n]), ContentLength: aws.Int64(int64(n))})
	if err != nil {
		return 0, s.storeError("storing "+key, err)
	}
	return int64(n), nil
}

// putParts uploads buf, full, then the rest of body in parts; the upload is completed
// after check passes, and aborted on any failure.
func (s *Store) putParts(ctx context.Context, key string, buf []byte, body io.Reader, check func() error) (int64, error) {
	up, err := s.client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: &s.bucket, Key: &key})
	if err != nil {
		return 0, s.storeError("starting the upload of "+key, err)
	}
	size, parts, err := s.uploadParts(ctx, key, up.UploadId, buf, body)
	if err == nil {
		err = check()
	}
	if err == nil {
		_, err = s.client.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: &s.bucket, Key: &key,
			UploadId: up.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}})
		if err != nil {
			err = s.storeError("completing the upload of "+key, err)
		}
	}
	if err != nil {
		// ctx may be what ended: the abort gets its own time.
		abortCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if _, abortErr := s.client.AbortMultipartUpload(abortCtx, &s3.AbortMultipartUploadInput{Bucket: &s.bucket, Key: &key,
			UploadId: up.UploadId}); abortErr != nil {
			err = errors.Join(err, fmt.Errorf("aborting the upload (the store removes it when its lifecycle rules say): %w", abortErr))
		}
		return 0, err
	}
	return size, nil
}

func (s *Store) uploadParts(ctx context.Context, key string, uploadID *string, buf []byte, body io.Reader) (int64, []types.CompletedPart, error) {
	var parts []types.CompletedPart
	var size int64
	n, last := len(buf), false
	for number := int32(1); n > 0; number++ {
		out, err := s.client.UploadPart(ctx, &s3.UploadPartInput{Bucket: &s.bucket, Key: &key, UploadId: uploadID,
			PartNumber: aws.Int32(number), Body: bytes.NewReader(buf[:n]), ContentLength: aws.Int64(int64(n))})
		if err != nil {
			return 0, nil, s.storeError(fmt.Sprintf("uploading part %d of %s", number, key), err)
		}
		parts = append(parts, types.CompletedPart{ETag: out.ETag, PartNumber: aws.Int32(number)})
		size += int64(n)
		if last {
			break
		}
		n, err = io.ReadFull(body, buf)
		switch {
		case errors.Is(err, io.EOF):
			n = 0
		case errors.Is(err, io.ErrUnexpectedEOF):
			last = true
		case err != nil:
			return 0, nil, fmt.Errorf("reading the snapshot: %w", err)
		}
	}
	return size, parts, nil
}

// List returns the objects whose keys start with prefix.
func (s *Store) List(ctx context.Context, prefix string) ([]Object, error) {
	var objects []Object
	pages := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{Bucket: &s.bucket, Prefix: &prefix})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, s.storeError("listing "+prefix+"*", err)
		}
		for _, o := range page.Contents {
			objects = append(objects, Object{Key: aws.ToString(o.Key), Size: aws.ToInt64(o.Size), LastModified: aws.ToTime(o.LastModified)})
		}
	}
	return objects, nil
}

// Delete deletes key.
func (s *Store) Delete(ctx context.Context, key string) error {
	if _, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.bucket, Key: &key}); err != nil {
		return s.storeError("deleting "+key, err)
	}
	return nil
}

// Path is "<bucket>/<key>".
func (s *Store) Path(key string) string { return s.bucket + "/" + key }

// Get opens key for reading.
func (s *Store) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: &key})
	if err != nil {
		return nil, s.storeError("reading "+key, err)
	}
	return out.Body, nil
}

// storeError says what failed, in the store's words, with the reason of the condition it
// gives: refused credentials are CredentialsInvalid, anything else StoreFailed.
func (s *Store) storeError(what string, err error) error {
	if refused, ok := errors.AsType[*Error](err); ok { // a connection Reach refused
		return refused
	}
	var api smithy.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode() {
		case "InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "InvalidToken", "ExpiredToken",
			"XAdminUserNotFound": // versitygw's unknown access key
			return &Error{Reason: v1beta2.ReasonCredentialsInvalid, Err: fmt.Errorf("%s: the store refused the credentials: %s", what, api.ErrorMessage())}
		case "NoSuchKey":
			return &Error{Reason: v1beta2.ReasonSnapshotNotFound, Err: fmt.Errorf("%s: bucket %q has no such object", what, s.bucket)}
		case "NoSuchBucket":
			return &Error{Reason: v1beta2.ReasonStoreFailed, Err: fmt.Errorf("%s: bucket %q does not exist", what, s.bucket)}
		}
	}
	return &Error{Reason: v1beta2.ReasonStoreFailed, Err: fmt.Errorf("%s: %w", what, err)}
}

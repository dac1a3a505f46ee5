//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"crypto/md5" //nolint:gosec // S3's ETag of a single-part object is its MD5
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	. "github.com/onsi/ginkgo/v2" //nolint:revive // ginkgo's DSL
	. "github.com/onsi/gomega"    //nolint:revive // gomega's DSL
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The S3-compatible store make s3-up runs (config/s3store), as etcd-cluster's backups and
// kre-runtime's object storage reach it: the AWS SDK, SigV4, path-style, through its Service.
var _ = Describe("The local cluster's S3 store", func() {
	It("keeps and serves objects for its root credentials, checks them on every request, and refuses others", func(ctx SpecContext) {
		requireRealNode(ctx)
		endpoint, access, secret := localS3(ctx)
		Expect(access).NotTo(BeEmpty())
		Expect(secret).To(HaveLen(48), "make s3-up generates a 24-byte secret")
		store := s3Client(endpoint, access, secret)

		bucket := "e2e-" + randomHex(4)
		_, err := store.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &bucket})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func(ctx SpecContext) {
			objects, err := store.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: &bucket})
			Expect(err).NotTo(HaveOccurred())
			for _, o := range objects.Contents {
				_, err := store.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &bucket, Key: o.Key})
				Expect(err).NotTo(HaveOccurred())
			}
			_, err = store.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: &bucket})
			Expect(err).NotTo(HaveOccurred())
		})

		By("putting 1 MiB and reading it back")
		body := make([]byte, 1<<20)
		_, _ = rand.Read(body)
		key := "snapshots/one.db"
		put, err := store.PutObject(ctx, &s3.PutObjectInput{Bucket: &bucket, Key: &key, Body: bytes.NewReader(body),
			Metadata: map[string]string{"revision": "42"}})
		Expect(err).NotTo(HaveOccurred())
		sum := md5.Sum(body) //nolint:gosec // S3's ETag
		Expect(aws.ToString(put.ETag)).To(Equal(`"`+hex.EncodeToString(sum[:])+`"`), "the ETag of a single-part object is its MD5")
		got, err := store.GetObject(ctx, &s3.GetObjectInput{Bucket: &bucket, Key: &key})
		Expect(err).NotTo(HaveOccurred())
		read, err := io.ReadAll(got.Body)
		Expect(got.Body.Close()).To(Succeed())
		Expect(err).NotTo(HaveOccurred())
		Expect(bytes.Equal(read, body)).To(BeTrue(), "the object read back is the one put")
		Expect(got.Metadata).To(HaveKeyWithValue("revision", "42"), "user metadata is kept (in the sidecar directory)")

		By("listing it")
		list, err := store.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: &bucket, Prefix: aws.String("snapshots/")})
		Expect(err).NotTo(HaveOccurred())
		Expect(list.Contents).To(HaveLen(1))
		Expect(aws.ToString(list.Contents[0].Key)).To(Equal(key))
		Expect(aws.ToInt64(list.Contents[0].Size)).To(BeEquivalentTo(len(body)))

		By("refusing a wrong secret and an unknown access key")
		_, err = s3Client(endpoint, access, secret+"x").GetObject(ctx, &s3.GetObjectInput{Bucket: &bucket, Key: &key})
		Expect(s3ErrorCode(err)).To(Equal("SignatureDoesNotMatch"))
		_, err = s3Client(endpoint, "nobody", secret).GetObject(ctx, &s3.GetObjectInput{Bucket: &bucket, Key: &key})
		Expect(err).To(HaveOccurred())
		Expect(s3ErrorCode(err)).NotTo(BeEmpty(), "an S3 error, not a transport one: %v", err)
		var missing *s3types.NoSuchKey
		Expect(errors.As(err, &missing)).To(BeFalse(), "the request is refused before the key is looked up")
	})
})

// localS3 is the address of the store make s3-up runs, as this host reaches it (its
// Service's ClusterIP), and its root credentials.
func localS3(ctx context.Context) (endpoint, access, secret string) {
	svc := &corev1.Service{}
	Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: "quintet-s3", Name: "s3"}, svc)).To(Succeed())
	root := &corev1.Secret{}
	Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: "quintet-s3", Name: "versitygw-root"}, root)).To(Succeed())
	return fmt.Sprintf("http://%s:9000", svc.Spec.ClusterIP), string(root.Data["access-key"]), string(root.Data["secret-key"])
}

// s3Client reaches endpoint path-style, signing with SigV4 for these credentials.
func s3Client(endpoint, access, secret string) *s3.Client {
	return s3.New(s3.Options{
		BaseEndpoint: aws.String(endpoint), Region: "us-east-1", UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(access, secret, ""),
		// Checksums only when an operation requires them (versitygw, like most stores
		// besides AWS, does not take the SDK's default CRC32 trailers on every upload).
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	})
}

// s3ErrorCode is the S3 error code of err, "" when it is none.
func s3ErrorCode(err error) string {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode()
	}
	return ""
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

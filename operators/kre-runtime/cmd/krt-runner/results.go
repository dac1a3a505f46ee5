package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Result is what the last node of a workflow keeps of each request, as KRE's runners kept
// their data: a document in the version's collection of MongoDB's database KRT_MONGO_DB_NAME,
// and the answer as the object Object of the bucket KRT_MINIO_BUCKET.
type Result struct {
	RequestID  string    `bson:"_id"`
	Version    string    `bson:"version"`
	Workflow   string    `bson:"workflow"`
	Nodes      []string  `bson:"nodes"`
	Timings    []Timing  `bson:"timings"`
	ReceivedAt time.Time `bson:"receivedAt"`
	SavedAt    time.Time `bson:"savedAt"`
	Answer     string    `bson:"answer"`
	Object     string    `bson:"object"`
}

// Timing is when one node received a request and how long it took over it, in microseconds.
type Timing struct {
	Node       string    `bson:"node"`
	ReceivedAt time.Time `bson:"receivedAt"`
	Micros     int64     `bson:"micros"`
}

// ObjectKey is where the answer to a request of version is kept in the bucket.
func ObjectKey(version, requestID string) string { return version + "/" + requestID }

// results keeps Results in MongoDB and the object store.
type results struct {
	mongo      *mongo.Client
	collection *mongo.Collection
	s3         *s3.Client
	bucket     string
}

// resultsFromEnv connects to the Runtime's MongoDB and object store as a RuntimeVersion's
// environment names them; nil when KRT_SAVE_RESULTS is false. Nothing is dialled yet.
func resultsFromEnv(getenv func(string) string) (*results, error) {
	if getenv("KRT_SAVE_RESULTS") == "false" {
		return nil, nil
	}
	for _, name := range []string{"KRT_VERSION", "KRT_MONGO_URI", "KRT_MONGO_DB_NAME", "KRT_MINIO_ENDPOINT", "KRT_MINIO_BUCKET"} {
		if getenv(name) == "" {
			return nil, fmt.Errorf("%s is empty (set KRT_SAVE_RESULTS=false to keep no results)", name)
		}
	}
	opts, err := mongoOptions(getenv("KRT_MONGO_URI"), getenv("KRT_MONGO_USERNAME"), getenv("KRT_MONGO_PASSWORD"))
	if err != nil {
		return nil, err
	}
	client, err := mongo.Connect(opts)
	if err != nil {
		return nil, fmt.Errorf("KRT_MONGO_URI: %w", err)
	}
	endpoint := getenv("KRT_MINIO_ENDPOINT")
	if !strings.Contains(endpoint, "://") {
		endpoint = "http://" + endpoint
	}
	store := s3.New(s3.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(endpoint), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(getenv("KRT_MINIO_ACCESS_KEY"), getenv("KRT_MINIO_SECRET_KEY"), ""),
		// Checksums only where an operation requires them, as S3 stores besides AWS expect.
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	})
	return &results{
		mongo: client, collection: client.Database(getenv("KRT_MONGO_DB_NAME")).Collection(getenv("KRT_VERSION")),
		s3: store, bucket: getenv("KRT_MINIO_BUCKET"),
	}, nil
}

// mongoOptions connects to uri, as the user and password of their own variables when given:
// they are not URI-encoded in uri, which the kubelet composes from them.
func mongoOptions(uri, user, password string) (*options.ClientOptions, error) {
	if user != "" {
		scheme, rest, ok := strings.Cut(uri, "://")
		if !ok {
			return nil, errors.New("KRT_MONGO_URI has no scheme")
		}
		if at := strings.LastIndex(rest, "@"); at >= 0 {
			rest = rest[at+1:]
		}
		uri = scheme + "://" + rest
	}
	opts := options.Client().ApplyURI(uri).SetTimeout(10 * time.Second)
	if user != "" {
		opts.SetAuth(options.Credential{Username: user, Password: password, AuthSource: "admin"})
	}
	return opts, opts.Validate()
}

// check answers whether MongoDB accepts the credentials and the bucket exists, making it
// when it does not.
func (r *results) check(ctx context.Context) error {
	if err := r.mongo.Ping(ctx, nil); err != nil {
		return fmt.Errorf("MongoDB: %w", err)
	}
	_, err := r.s3.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(r.bucket)})
	var missing *s3types.NotFound
	if errors.As(err, &missing) {
		_, err = r.s3.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(r.bucket)})
		var owned *s3types.BucketAlreadyOwnedByYou
		if errors.As(err, &owned) {
			err = nil
		}
	}
	if err != nil {
		return fmt.Errorf("bucket %s: %w", r.bucket, err)
	}
	return nil
}

// save stores res's answer as its object, reads it back, and inserts res.
func (r *results) save(ctx context.Context, res *Result) error {
	if _, err := r.s3.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(r.bucket), Key: aws.String(res.Object),
		Body: strings.NewReader(res.Answer), ContentType: aws.String("text/plain")}); err != nil {
		return fmt.Errorf("storing %s/%s: %w", r.bucket, res.Object, err)
	}
	got, err := r.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(r.bucket), Key: aws.String(res.Object)})
	if err != nil {
		return fmt.Errorf("reading %s/%s back: %w", r.bucket, res.Object, err)
	}
	body, err := io.ReadAll(got.Body)
	_ = got.Body.Close()
	if err == nil && !bytes.Equal(body, []byte(res.Answer)) {
		err = fmt.Errorf("%d bytes instead of the %d stored", len(body), len(res.Answer))
	}
	if err != nil {
		return fmt.Errorf("reading %s/%s back: %w", r.bucket, res.Object, err)
	}
	res.SavedAt = time.Now().UTC()
	if _, err := r.collection.InsertOne(ctx, res); err != nil {
		return fmt.Errorf("inserting into MongoDB: %w", err)
	}
	return nil
}

// close disconnects from MongoDB.
func (r *results) close(ctx context.Context) {
	_ = r.mongo.Disconnect(ctx)
}

package backup

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
)

// The keys of an S3 backup's awsSecret, as the CoreOS etcd operator reads them: AWS's shared
// credentials file, and optionally its config file.
const (
	CredentialsKey = "credentials"
	ConfigKey      = "config"
)

// defaultRegion is used when the config file names none: S3-compatible stores accept any,
// and SigV4 needs one.
const defaultRegion = "us-east-1"

// Credentials are what an S3 client signs with.
type Credentials struct {
	AccessKeyID, SecretAccessKey, SessionToken, Region string
}

// CredentialsFrom reads the default profile of an awsSecret's files.
func CredentialsFrom(data map[string][]byte) (Credentials, error) {
	file, ok := data[CredentialsKey]
	if !ok {
		return Credentials{}, fmt.Errorf("no key %q (an AWS shared credentials file)", CredentialsKey)
	}
	creds := iniSection(file, "default")
	c := Credentials{
		AccessKeyID:     creds["aws_access_key_id"],
		SecretAccessKey: creds["aws_secret_access_key"],
		SessionToken:    creds["aws_session_token"],
		Region:          iniSection(data[ConfigKey], "default")["region"],
	}
	if c.AccessKeyID == "" || c.SecretAccessKey == "" {
		return Credentials{}, fmt.Errorf("key %q has no [default] profile with aws_access_key_id and aws_secret_access_key", CredentialsKey)
	}
	if c.Region == "" {
		c.Region = defaultRegion
	}
	return c, nil
}

// iniSection returns the key = value pairs of one [section] of an AWS ini file (a config
// file's default profile is [default]; others there are [profile name]). Comments start
// with # or ;.
func iniSection(file []byte, section string) map[string]string {
	values := map[string]string{}
	in := false
	lines := bufio.NewScanner(bytes.NewReader(file))
	for lines.Scan() {
		line := strings.TrimSpace(lines.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			in = strings.TrimSpace(line[1:len(line)-1]) == section
		case in:
			if k, v, ok := strings.Cut(line, "="); ok {
				values[strings.TrimSpace(k)] = strings.TrimSpace(v)
			}
		}
	}
	return values
}

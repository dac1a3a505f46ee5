package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// apiClient is the little of the Kubernetes REST API this tool needs, over the standard
// library only, so the tool builds in seconds and shares no dependency graph.
type apiClient struct {
	server string
	http   *http.Client
}

func newAPIClient(server string, ca, user *keyPair) (*apiClient, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca.CertPEM) {
		return nil, fmt.Errorf("invalid CA certificate")
	}
	cert, err := tls.X509KeyPair(user.CertPEM, user.KeyPEM)
	if err != nil {
		return nil, err
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}}
	return &apiClient{server: server, http: &http.Client{Transport: tr, Timeout: 10 * time.Second}}, nil
}

// do sends body (JSON-encoded unless nil) and decodes a 2xx answer into out (unless nil).
// It returns the HTTP status code.
func (c *apiClient) do(ctx context.Context, method, path string, body, out any) (int, error) {
	var reader io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		reader = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.server+path, reader)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, err
	}
	if resp.StatusCode/100 != 2 {
		return resp.StatusCode, fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, bytes.TrimSpace(data))
	}
	if out != nil {
		return resp.StatusCode, json.Unmarshal(data, out)
	}
	return resp.StatusCode, nil
}

// adminClient is a client of the running cluster's API server as its administrator, from the
// credentials up wrote.
func (l *layout) adminClient() (*apiClient, error) {
	p, err := loadAdmin(l.PKI)
	if err != nil {
		return nil, err
	}
	return newAPIClient(l.server(), p.CA, p.Clients["admin"])
}

// poll calls check every interval until it reports done, returns an error, or timeout passes.
// The last "not yet" reason is part of the timeout error.
func poll(ctx context.Context, timeout time.Duration, what string, check func(context.Context) (bool, string, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	var reason string
	for {
		done, why, err := check(ctx)
		if err != nil {
			return err
		}
		if done {
			return nil
		}
		reason = why
		select {
		case <-ctx.Done():
			return fmt.Errorf("timed out after %s waiting for %s: %s", timeout, what, reason)
		case <-tick.C:
		}
	}
}

// nodeList is the part of a NodeList this tool reads.
type nodeList struct {
	Items []struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Status struct {
			Conditions []struct {
				Type   string `json:"type"`
				Status string `json:"status"`
			} `json:"conditions"`
		} `json:"status"`
	} `json:"items"`
}

// readyNodes returns the names of the Ready nodes among those labelled selector.
func (c *apiClient) readyNodes(ctx context.Context, selector string) ([]string, error) {
	var list nodeList
	if _, err := c.do(ctx, http.MethodGet, "/api/v1/nodes?labelSelector="+selector, nil, &list); err != nil {
		return nil, err
	}
	var ready []string
	for _, n := range list.Items {
		for _, cond := range n.Status.Conditions {
			if cond.Type == "Ready" && cond.Status == "True" {
				ready = append(ready, n.Metadata.Name)
			}
		}
	}
	return ready, nil
}

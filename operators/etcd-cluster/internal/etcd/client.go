// Package etcd is the operator's narrow view of etcd's cluster API: list, add as learner,
// promote and remove members, and ask a member for its status. The controller only sees the
// Client interface; New dials real members with go.etcd.io/etcd/client/v3.
package etcd

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
)

// Member is one member of a cluster.
type Member struct {
	ID         uint64
	Name       string // empty until the member has started
	PeerURLs   []string
	ClientURLs []string
	IsLearner  bool
}

// Status is what one member says of itself and the cluster.
type Status struct {
	Leader    uint64
	RaftIndex uint64
	Version   string
	IsLearner bool
	// DBSize is the size of the member's database file; DBSizeInUse the part of it that holds
	// data: the rest is free pages a defragmentation gives back.
	DBSize, DBSizeInUse int64
}

// Alarm is an alarm a member raised: "NOSPACE" when its backend reached its quota,
// "CORRUPT" when its data failed a consistency check.
type Alarm struct {
	MemberID uint64
	Type     string
}

// Client is the cluster API the controller uses.
type Client interface {
	// MemberList returns the members, learners included.
	MemberList(ctx context.Context) ([]Member, error)
	// MemberAddAsLearner adds a non-voting member that will start at peerURL.
	MemberAddAsLearner(ctx context.Context, peerURL string) (Member, error)
	// MemberPromote turns a caught-up learner into a voting member.
	MemberPromote(ctx context.Context, id uint64) error
	// MemberRemove removes a member.
	MemberRemove(ctx context.Context, id uint64) error
	// Status asks the member serving clientURL for its status.
	Status(ctx context.Context, clientURL string) (Status, error)
	// Defragment rewrites the database of the member serving clientURL without its free
	// pages. The member serves nothing until it is done.
	Defragment(ctx context.Context, clientURL string) error
	// Alarms lists the cluster's raised alarms, such as NOSPACE.
	Alarms(ctx context.Context) ([]Alarm, error)
	// ActivePeers asks the member serving clientURL which peers it is connected to, from
	// its etcd_network_active_peers metric: etcd's own view of who is reachable.
	ActivePeers(ctx context.Context, clientURL string) (map[uint64]bool, error)
	// Close releases the connections.
	Close() error
}

// Dialer opens a Client to a cluster through the given client URLs.
type Dialer func(ctx context.Context, endpoints []string) (Client, error)

// ErrLearnerNotReady is returned by MemberPromote while the learner is behind the leader.
var ErrLearnerNotReady = errors.New("learner is not yet in sync with the leader")

// ErrNotYetSafe is returned by membership calls that etcd refuses for now (strict reconfig
// check): a member joined or was promoted less than etcd's health interval (5 s) ago.
var ErrNotYetSafe = errors.New("etcd refuses membership changes until every member has been connected for a few seconds")

// DefaultDialTimeout bounds connecting when the operator is not told otherwise; requests
// are bounded by the caller's context.
const DefaultDialTimeout = 3 * time.Second

// New dials the cluster with the official client, within DefaultDialTimeout.
func New(ctx context.Context, endpoints []string) (Client, error) {
	return NewDialer(DefaultDialTimeout, nil)(ctx, endpoints)
}

// NewDialer dials with the official client, giving up on connecting after dialTimeout; over
// TLS with tlsConfig (https endpoints) unless it is nil.
//
// It connects to every endpoint at once and waits until each has connected or failed, so a
// member whose name does not resolve or whose port refuses costs the pass nothing more: its
// requests fail at once (ErrUnreachable) instead of retrying until their deadline. When no
// endpoint connects, dialling fails with ErrUnreachable.
func NewDialer(dialTimeout time.Duration, tlsConfig *tls.Config) Dialer {
	return func(ctx context.Context, endpoints []string) (Client, error) {
		config := clientv3.Config{DialTimeout: dialTimeout, Context: ctx, Logger: zap.NewNop(), TLS: tlsConfig}
		c := &client{web: http.DefaultClient, members: map[string]*clientv3.Client{}, down: map[string]bool{}}
		if tlsConfig != nil {
			c.web = &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConfig}}
		}
		connected, errs := c.connectEach(ctx, endpoints, config)
		if len(connected) == 0 {
			return nil, fmt.Errorf("%w: %s", ErrUnreachable, strings.Join(errs, "; "))
		}
		config.Endpoints = connected
		cluster, err := clientv3.New(config)
		if err != nil {
			_ = c.Close()
			return nil, fmt.Errorf("connecting to etcd at %v: %w", connected, err)
		}
		c.c = cluster
		return c, nil
	}
}

// ErrUnreachable says a member's endpoint did not take a connection: its name does not
// resolve, its port refuses, the TLS handshake failed, or it did not connect within the
// dial timeout.
var ErrUnreachable = errors.New("no connection to etcd")

// connectEach opens a client to each endpoint on its own, at once, and keeps those that
// connect within the dial timeout; it returns them in the order given.
func (c *client) connectEach(ctx context.Context, endpoints []string, config clientv3.Config) (connected, failures []string) {
	ctx, cancel := context.WithTimeout(ctx, config.DialTimeout)
	defer cancel()
	clients := make([]*clientv3.Client, len(endpoints))
	errs := make([]error, len(endpoints))
	var wg sync.WaitGroup
	for i, endpoint := range endpoints {
		wg.Go(func() {
			config := config
			config.Endpoints = []string{endpoint}
			clients[i], errs[i] = clientv3.New(config)
			if errs[i] == nil {
				errs[i] = waitConnected(ctx, clients[i].ActiveConnection())
			}
		})
	}
	wg.Wait()
	for i, endpoint := range endpoints {
		if errs[i] == nil {
			c.members[endpoint] = clients[i]
			connected = append(connected, endpoint)
			continue
		}
		c.down[endpoint] = true
		failures = append(failures, fmt.Sprintf("%s: %v", endpoint, errs[i]))
		if clients[i] != nil {
			_ = clients[i].Close()
		}
	}
	return connected, failures
}

// waitConnected waits until conn is ready, or fails after its first failed attempt (the name did
// not resolve, the port refused, the TLS handshake failed) or when ctx ends.
func waitConnected(ctx context.Context, conn *grpc.ClientConn) error {
	for state := conn.GetState(); state != connectivity.Ready; state = conn.GetState() {
		if state == connectivity.TransientFailure || state == connectivity.Shutdown {
			return errors.New("connection failed")
		}
		conn.Connect()
		if !conn.WaitForStateChange(ctx, state) {
			return errors.New("no connection within the dial timeout")
		}
	}
	return nil
}

type client struct {
	c *clientv3.Client // the cluster, through every endpoint that connected
	// members are the endpoints that connected, each through its own connection, for the
	// requests to one member; down are those that did not.
	members map[string]*clientv3.Client
	down    map[string]bool
	web     *http.Client // for the metrics of members
}

// maintenance is the maintenance API of the member serving clientURL: over the connection
// made when dialling, ErrUnreachable when that failed, or a new connection for a URL that was
// not dialled.
func (c *client) maintenance(clientURL string) (clientv3.Maintenance, error) {
	if m, ok := c.members[clientURL]; ok {
		return clientv3.NewMaintenanceFromMaintenanceClient(clientv3.RetryMaintenanceClient(m, m.ActiveConnection()), m), nil
	}
	if c.down[clientURL] {
		return nil, ErrUnreachable
	}
	return c.c.Maintenance, nil
}

func (c *client) MemberList(ctx context.Context) ([]Member, error) {
	resp, err := c.c.MemberList(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing members: %w", err)
	}
	members := make([]Member, 0, len(resp.Members))
	for _, m := range resp.Members {
		members = append(members, Member{ID: m.ID, Name: m.Name, PeerURLs: m.PeerURLs, ClientURLs: m.ClientURLs, IsLearner: m.IsLearner})
	}
	return members, nil
}

func (c *client) MemberAddAsLearner(ctx context.Context, peerURL string) (Member, error) {
	resp, err := c.c.MemberAddAsLearner(ctx, []string{peerURL})
	if err != nil {
		// Right after a removal, a member that has not applied it yet still knows the URL.
		if isUnhealthy(err) || errors.Is(rpctypes.Error(err), rpctypes.ErrPeerURLExist) {
			return Member{}, ErrNotYetSafe
		}
		return Member{}, fmt.Errorf("adding learner %s: %w", peerURL, err)
	}
	return Member{ID: resp.Member.ID, PeerURLs: resp.Member.PeerURLs, IsLearner: true}, nil
}

func (c *client) MemberPromote(ctx context.Context, id uint64) error {
	if _, err := c.c.MemberPromote(ctx, id); err != nil {
		if isLearnerNotReady(err) {
			return ErrLearnerNotReady
		}
		return fmt.Errorf("promoting member %x: %w", id, err)
	}
	return nil
}

func (c *client) MemberRemove(ctx context.Context, id uint64) error {
	if _, err := c.c.MemberRemove(ctx, id); err != nil {
		if isUnhealthy(err) {
			return ErrNotYetSafe
		}
		return fmt.Errorf("removing member %x: %w", id, err)
	}
	return nil
}

func (c *client) Status(ctx context.Context, clientURL string) (Status, error) {
	m, err := c.maintenance(clientURL)
	if err != nil {
		return Status{}, fmt.Errorf("status of %s: %w", clientURL, err)
	}
	resp, err := m.Status(ctx, clientURL)
	if err != nil {
		return Status{}, fmt.Errorf("status of %s: %w", clientURL, err)
	}
	return Status{Leader: resp.Leader, RaftIndex: resp.RaftIndex, Version: resp.Version, IsLearner: resp.IsLearner,
		DBSize: resp.DbSize, DBSizeInUse: resp.DbSizeInUse}, nil
}

func (c *client) Defragment(ctx context.Context, clientURL string) error {
	m, err := c.maintenance(clientURL)
	if err == nil {
		_, err = m.Defragment(ctx, clientURL)
	}
	if err != nil {
		return fmt.Errorf("defragmenting %s: %w", clientURL, err)
	}
	return nil
}

func (c *client) Alarms(ctx context.Context) ([]Alarm, error) {
	resp, err := c.c.AlarmList(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing alarms: %w", err)
	}
	alarms := make([]Alarm, 0, len(resp.Alarms))
	for _, a := range resp.Alarms {
		alarms = append(alarms, Alarm{MemberID: a.MemberID, Type: a.Alarm.String()})
	}
	return alarms, nil
}

func (c *client) ActivePeers(ctx context.Context, clientURL string) (map[uint64]bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, clientURL+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.web.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reading the metrics of %s: %w", clientURL, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("reading the metrics of %s: %s", clientURL, resp.Status)
	}
	return parseActivePeers(resp.Body)
}

func (c *client) Close() error {
	if c.web != http.DefaultClient { // its own transport, for TLS; the shared one keeps its connections
		c.web.CloseIdleConnections()
	}
	var errs []error
	for _, m := range c.members {
		errs = append(errs, m.Close())
	}
	if c.c != nil {
		errs = append(errs, c.c.Close())
	}
	return errors.Join(errs...)
}

// isUnhealthy matches etcd's strict reconfig check refusing a change for now.
func isUnhealthy(err error) bool {
	return errors.Is(rpctypes.Error(err), rpctypes.ErrUnhealthy)
}

// isLearnerNotReady matches etcd's refusal to promote a learner that is still catching up.
func isLearnerNotReady(err error) bool {
	return errors.Is(rpctypes.Error(err), rpctypes.ErrMemberLearnerNotReady)
}

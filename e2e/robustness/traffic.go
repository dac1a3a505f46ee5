package robustness

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Traffic is what the clients do: each of Clients issues one operation at a time on Keys
// keys under Prefix, each bounded by Timeout and Interval after the one before (none when
// zero: as fast as answers come), until the context ends.
type Traffic struct {
	Clients  []*clientv3.Client
	Prefix   string
	Keys     int
	Timeout  time.Duration
	Interval time.Duration
}

// KeySpace is every key the traffic uses: Prefix and a number below Keys.
func (t Traffic) KeySpace() []string {
	keys := make([]string, t.Keys)
	for i := range keys {
		keys[i] = t.key(i)
	}
	return keys
}

func (t Traffic) key(i int) string { return fmt.Sprintf("%s%d", t.Prefix, i) }

// State reads every key under the traffic's prefix, linearizably: the final state a history
// is checked against once the traffic stopped.
func (t Traffic) State(ctx context.Context, c *clientv3.Client) (map[string]string, error) {
	r, err := c.Get(ctx, t.Prefix, clientv3.WithPrefix())
	if err != nil {
		return nil, err
	}
	state := map[string]string{}
	for _, kv := range r.Kvs {
		state[string(kv.Key)] = string(kv.Value)
	}
	return state, nil
}

// weights says how often each kind of operation is issued.
var weights = []struct {
	kind   Kind
	weight int
}{{Put, 30}, {Get, 20}, {GetSerializable, 10}, {Delete, 10}, {CAS, 20}, {Range, 10}}

// Run issues operations until ctx ends, recording each in h.
func (t Traffic) Run(ctx context.Context, h *History) {
	var wg sync.WaitGroup
	for id, c := range t.Clients {
		wg.Go(func() { t.client(ctx, h, id, c) })
	}
	wg.Wait()
}

// client is one client's loop: what it last read of a key is what its compare-and-swaps expect.
func (t Traffic) client(ctx context.Context, h *History, id int, c *clientv3.Client) {
	rng := rand.New(rand.NewPCG(uint64(id), uint64(time.Now().UnixNano()))) //nolint:gosec // traffic, not secrets
	lastRead := map[string]*string{}
	var tick <-chan time.Time
	if t.Interval > 0 {
		ticker := time.NewTicker(t.Interval)
		defer ticker.Stop()
		tick = ticker.C
	}
	for seq := 0; ctx.Err() == nil; seq++ {
		if tick != nil {
			select {
			case <-ctx.Done():
				return
			case <-tick:
			}
		}
		req := t.request(rng, id, seq, lastRead)
		call := h.Since()
		resp := t.do(ctx, c, req)
		if ctx.Err() != nil && !resp.Acknowledged() && !req.Writes() {
			return // a read cut by the end of the traffic says nothing
		}
		h.Record(Op{Client: id, Request: req, Response: resp, Call: call, Return: h.Since()})
		switch {
		case req.Kind != Get || !resp.Acknowledged():
		case resp.Found:
			v := resp.Value
			lastRead[req.Key] = &v
		default:
			delete(lastRead, req.Key)
		}
	}
}

// request picks the next operation; written values are unique in the history.
func (t Traffic) request(rng *rand.Rand, id, seq int, lastRead map[string]*string) Request {
	key := t.key(rng.IntN(t.Keys))
	value := fmt.Sprintf("c%d-%d", id, seq)
	n := rng.IntN(100)
	for _, w := range weights {
		if n -= w.weight; n < 0 {
			switch w.kind {
			case CAS:
				if v := lastRead[key]; v != nil {
					return Request{Kind: CAS, Key: key, Value: value, Expected: *v}
				}
				return Request{Kind: CAS, Key: key, Value: value, ExpectAbsent: true}
			case Range:
				return Request{Kind: Range, Key: t.Prefix}
			case Put:
				return Request{Kind: Put, Key: key, Value: value}
			}
			return Request{Kind: w.kind, Key: key}
		}
	}
	return Request{Kind: Get, Key: key}
}

// do issues req with the traffic's timeout. A write that fails has an unknown outcome.
func (t Traffic) do(ctx context.Context, c *clientv3.Client, req Request) Response {
	ctx, cancel := context.WithTimeout(ctx, t.Timeout)
	defer cancel()
	var resp Response
	var err error
	switch req.Kind {
	case Put:
		var r *clientv3.PutResponse
		if r, err = c.Put(ctx, req.Key, req.Value); err == nil {
			resp.Member = r.Header.MemberId
		}
	case Delete:
		var r *clientv3.DeleteResponse
		if r, err = c.Delete(ctx, req.Key); err == nil {
			resp.Member = r.Header.MemberId
		}
	case CAS:
		cmp := clientv3.Compare(clientv3.Value(req.Key), "=", req.Expected)
		if req.ExpectAbsent {
			cmp = clientv3.Compare(clientv3.CreateRevision(req.Key), "=", 0)
		}
		var r *clientv3.TxnResponse
		if r, err = c.Txn(ctx).If(cmp).Then(clientv3.OpPut(req.Key, req.Value)).Commit(); err == nil {
			resp.Succeeded, resp.Member = r.Succeeded, r.Header.MemberId
		}
	case Get, GetSerializable:
		var opts []clientv3.OpOption
		if req.Kind == GetSerializable {
			opts = append(opts, clientv3.WithSerializable())
		}
		var r *clientv3.GetResponse
		if r, err = c.Get(ctx, req.Key, opts...); err == nil {
			resp.Member = r.Header.MemberId
			if len(r.Kvs) > 0 {
				resp.Found, resp.Value = true, string(r.Kvs[0].Value)
			}
		}
	case Range:
		var r *clientv3.GetResponse
		if r, err = c.Get(ctx, req.Key, clientv3.WithPrefix()); err == nil {
			resp.Member, resp.KVs = r.Header.MemberId, map[string]string{}
			for _, kv := range r.Kvs {
				resp.KVs[string(kv.Key)] = string(kv.Value)
			}
		}
	}
	if err != nil {
		resp.Err, resp.Unknown = err.Error(), req.Writes()
	}
	return resp
}

package robustness

import (
	"fmt"
	"math"
	"slices"

	"github.com/anishathalye/porcupine"
)

// state is one key's value in the model: absent, or a value.
type state struct {
	exists bool
	value  string
}

// model is etcd's key-value semantics for one key: the history is partitioned by key (a
// range is split into one read per key it covers, with the range's call and return times,
// which checks less than the range's atomicity across keys). Serializable gets are not
// linearizable by design and are left out (see checkSerializable).
var model = porcupine.Model{
	Partition: partitionByKey,
	Init:      func() any { return state{} },
	Step: func(st, in, out any) (bool, any) {
		s, req, resp := st.(state), in.(Request), out.(Response)
		switch req.Kind {
		case Put:
			return true, state{exists: true, value: req.Value}
		case Delete:
			return true, state{}
		case CAS:
			holds := (req.ExpectAbsent && !s.exists) || (!req.ExpectAbsent && s.exists && s.value == req.Expected)
			if !resp.Unknown && resp.Succeeded != holds {
				return false, s
			}
			if holds {
				return true, state{exists: true, value: req.Value}
			}
			return true, s
		case Get:
			return resp.Found == s.exists && (!s.exists || resp.Value == s.value), s
		}
		return false, s
	},
	DescribeOperation: func(in, out any) string {
		req, resp := in.(Request), out.(Response)
		switch {
		case resp.Unknown:
			return fmt.Sprintf("%s(%s, %s) -> unknown", req.Kind, req.Key, req.Value)
		case req.Kind == Get && !resp.Found:
			return fmt.Sprintf("get(%s) -> absent", req.Key)
		case req.Kind == Get:
			return fmt.Sprintf("get(%s) -> %s", req.Key, resp.Value)
		case req.Kind == CAS:
			return fmt.Sprintf("cas(%s, %q->%s) -> %v", req.Key, req.Expected, req.Value, resp.Succeeded)
		}
		return fmt.Sprintf("%s(%s, %s)", req.Kind, req.Key, req.Value)
	},
	DescribeState: func(st any) string {
		if s := st.(state); s.exists {
			return s.value
		}
		return "absent"
	},
}

// unknownReturn is the return time porcupine gets for an operation of unknown outcome.
const unknownReturn = math.MaxInt64

// operations turns a history into porcupine's operations over keys (keys: every key the
// traffic uses, which a range covers). Failed reads had no effect and are left out; a write
// of unknown outcome may take effect at any time after its call, or never: its return is
// the end of time.
func operations(ops []Op, keys []string) []porcupine.Operation {
	var out []porcupine.Operation
	for _, op := range ops {
		ret := op.Return
		switch {
		case op.Request.Kind == GetSerializable:
			continue
		case op.Response.Unknown:
			ret = unknownReturn
		case !op.Response.Acknowledged():
			continue
		}
		if op.Request.Kind != Range {
			out = append(out, porcupine.Operation{ClientId: op.Client, Input: op.Request, Output: op.Response, Call: op.Call, Return: ret})
			continue
		}
		for _, k := range keys {
			v, found := op.Response.KVs[k]
			out = append(out, porcupine.Operation{ClientId: op.Client, Input: Request{Kind: Get, Key: k},
				Output: Response{Found: found, Value: v}, Call: op.Call, Return: ret})
		}
	}
	return out
}

func partitionByKey(history []porcupine.Operation) [][]porcupine.Operation {
	byKey := map[string][]porcupine.Operation{}
	for _, op := range history {
		k := op.Input.(Request).Key
		byKey[k] = append(byKey[k], op)
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([][]porcupine.Operation, 0, len(keys))
	for _, k := range keys {
		out = append(out, byKey[k])
	}
	return out
}

package nvuesim

import (
	"sort"
	"strings"
)

// Tree is an NVUE configuration tree as the API's JSON carries it: objects
// keyed by NVUE's names ("interface" → "swp1" → "link" → "mtu"), leaves are
// strings, numbers and booleans, and a member of a set is a key whose value
// is an empty object ("address": {"31.31.31.254/24": {}}).
type Tree = map[string]any

// clone deep-copies a JSON value.
func clone(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = clone(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = clone(e)
		}
		return out
	}
	return v
}

// cloneTree is clone for a tree; nil becomes an empty tree.
func cloneTree(t Tree) Tree {
	if t == nil {
		return Tree{}
	}
	return clone(t).(map[string]any)
}

// mergePatch applies patch to dst at path the way the NVUE API's PATCH
// does: objects merge key by key, null unsets a key, anything else
// replaces the value (RFC 7396 JSON merge patch; docs/nvue.md says why
// that semantics is inferred).
func mergePatch(dst Tree, path []string, patch any) {
	node := dst
	for i, seg := range path {
		if patch == nil && i == len(path)-1 {
			delete(node, seg)
			return
		}
		next, ok := node[seg].(map[string]any)
		if !ok {
			next = map[string]any{}
			node[seg] = next
		}
		node = next
	}
	if len(path) == 0 || patch != nil {
		// mergeInto extends its path in place for each level it goes down
		// (it keeps none): one buffer, not one path per key.
		buf := make([]string, len(path), len(path)+8)
		copy(buf, path)
		mergeInto(node, buf, patch)
	}
}

// mergeNode returns the object at path in dst, making the objects on the
// way (and replacing what is not an object there).
func mergeNode(dst Tree, path []string) map[string]any {
	node := dst
	for _, seg := range path {
		next, ok := node[seg].(map[string]any)
		if !ok {
			next = map[string]any{}
			node[seg] = next
		}
		node = next
	}
	return node
}

func mergeInto(node map[string]any, path []string, patch any) {
	obj, ok := patch.(map[string]any)
	if !ok {
		return
	}
	if exclusive(path) && len(obj) > 0 {
		// A one-of choice: the new choice replaces the old one.
		for k := range node {
			if _, kept := obj[k]; !kept {
				delete(node, k)
			}
		}
	}
	for k, v := range obj {
		switch pv := v.(type) {
		case nil:
			delete(node, k)
		case map[string]any:
			child, ok := node[k].(map[string]any)
			if !ok {
				child = map[string]any{}
				node[k] = child
			}
			mergeInto(child, append(path, k), pv)
		default:
			node[k] = clone(pv)
		}
	}
}

// exclusive reports whether the object at path holds one choice of
// several, written as a key: an interface's link state is up or down
// (`nv set interface swp1 link state up|down`, NVUE command reference).
func exclusive(path []string) bool {
	n := len(path)
	return n == 4 && path[0] == "interface" && path[2] == "link" && path[3] == "state"
}

// subtree returns the value at path in t (nil, false when absent).
func subtree(t Tree, path []string) (any, bool) {
	var v any = t
	for _, seg := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[seg]; !ok {
			return nil, false
		}
	}
	return v, true
}

// splitPath splits an API path below /nvue_v1/ into its segments, each
// percent-decoded ("interface/swp1/link" → interface, swp1, link).
func splitPath(escaped string) ([]string, bool) {
	escaped = strings.Trim(escaped, "/")
	if escaped == "" {
		return nil, true
	}
	parts := strings.Split(escaped, "/")
	out := make([]string, len(parts))
	for i, p := range parts {
		s, err := unescape(p)
		if err != nil || s == "" {
			return nil, false
		}
		out[i] = s
	}
	return out, true
}

// sortedKeys returns m's keys in order.
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

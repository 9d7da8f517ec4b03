package dockernet

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// member is one key/value pair of the top-level object of a daemon.json, with
// byte offsets into the source so that Merge can splice values in place.
type member struct {
	key        string
	keyStart   int // offset of the opening quote of the key
	valueStart int
	valueEnd   int // exclusive
}

// object is a parsed top-level JSON object.
type object struct {
	src     []byte
	open    int // offset of '{'
	close   int // offset of '}'
	members []member
}

func (o *object) value(m member) []byte { return o.src[m.valueStart:m.valueEnd] }

func (o *object) find(key string) (member, bool) {
	for _, m := range o.members {
		if m.key == key {
			return m, true
		}
	}
	return member{}, false
}

// SyntaxError is a daemon.json that is not a JSON object dockerd would read
// unambiguously: not JSON, not an object, or a key given twice (dockerd keeps
// the last one silently, docs/rules.md#what-dockerd-accepts).
type SyntaxError struct {
	Line, Col int
	Msg       string
}

func (e *SyntaxError) Error() string {
	if e.Line == 0 {
		return e.Msg
	}
	return fmt.Sprintf("line %d col %d: %s", e.Line, e.Col, e.Msg)
}

// parseObject parses src as one JSON object. It rejects anything that is not
// strict JSON (encoding/json's grammar), a top level that is not an object, and
// duplicate keys at any depth. An empty or all-whitespace src is the empty object.
func parseObject(src []byte) (*object, error) {
	if len(bytes.TrimSpace(src)) == 0 {
		return &object{src: []byte("{}"), open: 0, close: 1}, nil
	}
	if !json.Valid(src) {
		var v any
		err := json.Unmarshal(src, &v)
		if se, ok := err.(*json.SyntaxError); ok {
			l, c := lineCol(src, max(int(se.Offset)-1, 0)) // Offset is just past the bad byte
			return nil, &SyntaxError{l, c, "not valid JSON: " + se.Error()}
		}
		return nil, &SyntaxError{0, 0, fmt.Sprintf("not valid JSON: %v", err)}
	}
	s := &scanner{src: src}
	s.ws()
	if s.i >= len(src) || src[s.i] != '{' {
		l, c := lineCol(src, s.i)
		return nil, &SyntaxError{l, c, "the top level is not a JSON object"}
	}
	o := &object{src: src, open: s.i}
	if err := s.object(func(key string, keyStart, vs, ve int) {
		o.members = append(o.members, member{key, keyStart, vs, ve})
	}); err != nil {
		return nil, err
	}
	o.close = s.i - 1
	return o, nil
}

// scanner walks JSON that json.Valid has accepted, recording the top-level
// members and checking keys for duplicates.
type scanner struct {
	src []byte
	i   int
}

func (s *scanner) ws() {
	for s.i < len(s.src) {
		switch s.src[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// object scans an object starting at '{'; top, when non-nil, receives each member.
func (s *scanner) object(top func(key string, keyStart, vs, ve int)) error {
	s.i++ // '{'
	s.ws()
	if s.src[s.i] == '}' {
		s.i++
		return nil
	}
	seen := map[string]int{}
	for {
		s.ws()
		keyStart := s.i
		var key string
		_ = json.Unmarshal(s.str(), &key) // cannot fail: json.Valid passed
		if prev, dup := seen[key]; dup {
			l, c := lineCol(s.src, keyStart)
			pl, pc := lineCol(s.src, prev)
			return &SyntaxError{l, c, fmt.Sprintf("key %q appears twice (first at line %d col %d); dockerd would silently use the last one", key, pl, pc)}
		}
		seen[key] = keyStart
		s.ws()
		s.i++ // ':'
		s.ws()
		vs := s.i
		if err := s.value(); err != nil {
			return err
		}
		if top != nil {
			top(key, keyStart, vs, s.i)
		}
		s.ws()
		if s.src[s.i] == ',' {
			s.i++
			continue
		}
		s.i++ // '}'
		return nil
	}
}

func (s *scanner) value() error {
	switch s.src[s.i] {
	case '{':
		return s.object(nil)
	case '[':
		s.i++
		s.ws()
		if s.src[s.i] == ']' {
			s.i++
			return nil
		}
		for {
			s.ws()
			if err := s.value(); err != nil {
				return err
			}
			s.ws()
			if s.src[s.i] == ',' {
				s.i++
				continue
			}
			s.i++ // ']'
			return nil
		}
	case '"':
		s.str()
		return nil
	default: // number, true, false, null
		for s.i < len(s.src) {
			switch s.src[s.i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return nil
			}
			s.i++
		}
		return nil
	}
}

// str scans a string starting at '"' and returns its raw bytes with quotes.
func (s *scanner) str() []byte {
	start := s.i
	s.i++
	for s.src[s.i] != '"' {
		if s.src[s.i] == '\\' {
			s.i++
		}
		s.i++
	}
	s.i++
	return s.src[start:s.i]
}

// lineCol converts a byte offset into a 1-based line and column.
func lineCol(src []byte, off int) (int, int) {
	if off > len(src) {
		off = len(src)
	}
	line, col := 1, 1
	for _, b := range src[:off] {
		if b == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return line, col
}

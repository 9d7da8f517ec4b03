package inventory

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// decoder turns a yaml.Node tree into the raw* structs strictly: every key must
// be a field (by its yaml tag), no key may repeat, and every scalar must have
// the field's type. It records the position of each value and key by path, and
// reports findings instead of stopping at the first one.
type decoder struct {
	file string
	pos  positions
	rep  *Report
}

func (d *decoder) fail(n *yaml.Node, path, format string, args ...any) {
	d.rep.Findings = append(d.rep.Findings, Finding{
		File: d.file, Pos: Pos{n.Line, n.Column}, Path: path, Rule: fmt.Sprintf(format, args...),
	})
}

var versionType = reflect.TypeOf(Version{})

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string) {
	for n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	d.pos[path] = Pos{n.Line, n.Column}
	if v.Kind() == reflect.Pointer {
		if isNull(n) {
			return
		}
		if k := v.Type().Elem().Kind(); k != reflect.Struct || v.Type().Elem() == versionType {
			// A scalar is set only when it decodes: a wrong type is one
			// finding, not also a second one about the zero value left behind.
			before := len(d.rep.Findings)
			tmp := reflect.New(v.Type().Elem())
			d.decode(n, tmp.Elem(), path)
			if len(d.rep.Findings) == before {
				v.Set(tmp)
			}
			return
		}
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		v = v.Elem()
	}
	switch {
	case v.Type() == versionType:
		d.decodeScalar(n, v, path)
	case v.Kind() == reflect.Struct:
		d.decodeStruct(n, v, path)
	case v.Kind() == reflect.Slice:
		if isNull(n) {
			return
		}
		if n.Kind != yaml.SequenceNode {
			d.fail(n, path, "must be a list")
			return
		}
		s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, c := range n.Content {
			d.decode(c, s.Index(i), fmt.Sprintf("%s[%d]", path, i))
		}
		v.Set(s)
	default:
		d.decodeScalar(n, v, path)
	}
}

// fieldsOf maps yaml key names to field index paths, following ",inline" fields.
func fieldsOf(t reflect.Type) (map[string][]int, []string) {
	m := map[string][]int{}
	var names []string
	var walk func(t reflect.Type, prefix []int)
	walk = func(t reflect.Type, prefix []int) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("yaml")
			if tag == "" || tag == "-" {
				continue
			}
			idx := append(append([]int(nil), prefix...), i)
			name, opts, _ := strings.Cut(tag, ",")
			if opts == "inline" {
				walk(f.Type, idx)
				continue
			}
			m[name] = idx
			names = append(names, name)
		}
	}
	walk(t, nil)
	sort.Strings(names)
	return m, names
}

func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.fail(n, path, "must be a mapping of keys to values")
		return
	}
	fields, names := fieldsOf(v.Type())
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		key := k.Value
		p := key
		if path != "" {
			p = path + "." + key
		}
		if prev, dup := seen[key]; dup {
			d.fail(k, p, "duplicate key (first at line %d)", prev.Line)
			continue
		}
		seen[key] = k
		idx, ok := fields[key]
		if !ok {
			d.fail(k, p, "unknown key %q (known keys here: %s)", key, strings.Join(names, ", "))
			continue
		}
		d.pos[p+"#key"] = Pos{k.Line, k.Column}
		d.decode(val, v.FieldByIndex(idx), p)
	}
}

func (d *decoder) decodeScalar(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.ScalarNode {
		d.fail(n, path, "must be a single value, not a %s", kindName(n.Kind))
		return
	}
	if v.Type() == versionType {
		ver, err := ParseVersion(n.Value)
		if err != nil {
			d.fail(n, path, "%v", err)
			return
		}
		v.Set(reflect.ValueOf(ver))
		return
	}
	switch v.Kind() {
	case reflect.String:
		if isNull(n) {
			return
		}
		v.SetString(n.Value)
	case reflect.Int:
		var i int
		if n.Tag != "!!int" || n.Decode(&i) != nil {
			d.fail(n, path, "must be a whole number, not %q", n.Value)
			return
		}
		v.SetInt(int64(i))
	case reflect.Float64:
		var f float64
		if (n.Tag != "!!int" && n.Tag != "!!float") || n.Decode(&f) != nil {
			d.fail(n, path, "must be a number, not %q", n.Value)
			return
		}
		v.SetFloat(f)
	default:
		panic("inventory: no decoder for " + v.Type().String())
	}
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	}
	return "value"
}

package inventory

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"

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
	// budget is how many more nodes the walk may visit, aliases expanded;
	// over stops the walk once it is spent (see nodeBudget).
	budget, limit int
	over          bool
	// merged holds the paths of the mappings that held a YAML merge key.
	merged map[string]bool
}

func (d *decoder) fail(n *yaml.Node, path, format string, args ...any) {
	d.rep.add(Finding{File: d.file, Pos: Pos{n.Line, n.Column}, Path: path, Rule: fmt.Sprintf(format, args...)})
}

// MinNodeBudget and NodeBudgetFactor bound the walk over the YAML tree: it
// visits at most max(MinNodeBudget, NodeBudgetFactor × the document's own
// node count) nodes, an alias counting its whole target each time it is
// used. yaml.v3 limits aliases only when it decodes into Go values itself;
// rdggen walks the node tree to keep positions, so it keeps its own count. A
// file written out in full never comes near the bound; a few kilobytes of
// nested aliases (a "billion laughs" file) stop at it within milliseconds.
const (
	MinNodeBudget    = 20_000
	NodeBudgetFactor = 4
)

// nodeBudget is the walk's bound for a document of n nodes (countNodes).
func nodeBudget(n int) int {
	return max(MinNodeBudget, NodeBudgetFactor*n)
}

// countNodes is the number of nodes of the document under root, an alias
// counting as one.
func countNodes(root *yaml.Node) int {
	n := 0
	var count func(*yaml.Node)
	count = func(x *yaml.Node) {
		n++
		if x.Kind != yaml.AliasNode {
			for _, c := range x.Content {
				count(c)
			}
		}
	}
	count(root)
	return n
}

// spend takes one node from the budget; it reports false, once, with a
// finding, when the budget is spent.
func (d *decoder) spend(n *yaml.Node) bool {
	if d.over {
		return false
	}
	d.budget--
	if d.budget >= 0 {
		return true
	}
	d.over = true
	d.fail(n, "", "the document expands to more than %d values (aliases used many times, or nested); write the values out or use fewer aliases", d.limit)
	return false
}

// yamlTags are the tags a value may carry: YAML's core schema. Any other
// (!!python/object:…, !custom) is refused rather than silently read as text.
var yamlTags = map[string]bool{"!!str": true, "!!int": true, "!!float": true, "!!bool": true, "!!null": true,
	"!!map": true, "!!seq": true, "!!timestamp": true}

var versionType = reflect.TypeOf(Version{})

// templateType is the one struct a scalar may stand for: `template: NAME`
// is `template: {name: NAME}`, the way Terraform's vsphere provider names
// the template a VM is cloned from (its `template_uuid` or the data
// source's `name`), so a user coming from it may write just the name.
var templateType = reflect.TypeOf(TemplateSpec{})

// dataType is the other struct with two forms: a host's `data` is a
// mapping (one rail) or a list of mappings, one per rail (DataSpec.Rails).
var dataType = reflect.TypeOf(DataSpec{})

// switchSpecType is decoded with the keys of the switch OSes beyond ONYX
// and Cumulus Linux (SwitchSpec.Other).
var switchSpecType = reflect.TypeOf(SwitchSpec{})

// otherOS reports whether key is the key of a switch OS whose version
// goes to SwitchSpec.Other: a known OS other than ONYX and Cumulus Linux.
func otherOS(key string) bool {
	os := SwitchOS(key)
	return os != OSONYX && os != OSCumulus && os.Known()
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string) {
	for n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if !d.spend(n) {
		return
	}
	if tag := n.ShortTag(); !yamlTags[tag] {
		d.fail(n, path, "YAML tag %s is not allowed (an inventory holds plain values, lists and mappings)", tag)
		return
	}
	d.pos[path] = Pos{n.Line, n.Column}
	if v.Kind() == reflect.Pointer {
		if isNull(n) {
			return
		}
		if k := v.Type().Elem().Kind(); k != reflect.Struct || v.Type().Elem() == versionType {
			// A scalar is set only when it decodes: a wrong type is one
			// finding, not also a second one about the zero value left behind.
			before := d.rep.Count()
			tmp := reflect.New(v.Type().Elem())
			d.decode(n, tmp.Elem(), path)
			if d.rep.Count() == before && !d.over {
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
	case v.Kind() == reflect.Map:
		d.decodeMap(n, v, path)
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
			d.decode(c, s.Index(i), path+"["+strconv.Itoa(i)+"]")
		}
		v.Set(s)
	default:
		d.decodeScalar(n, v, path)
	}
}

// structFields is fieldsOf's answer for one type.
type structFields struct {
	index map[string][]int
	names []string
}

// fieldCache holds fieldsOf's answer per struct type (reflect.Type →
// structFields): a file of n hosts decodes n host mappings of one type.
var fieldCache sync.Map

// fieldsOf maps yaml key names to field index paths, following ",inline"
// fields, and lists the names sorted. Callers must not modify either.
func fieldsOf(t reflect.Type) (map[string][]int, []string) {
	if f, ok := fieldCache.Load(t); ok {
		sf := f.(structFields)
		return sf.index, sf.names
	}
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
			if opts == "inline" && f.Type.Kind() == reflect.Map {
				continue // the keys of registered switch OSes (decodeStruct)
			}
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
	fieldCache.Store(t, structFields{m, names})
	return m, names
}

func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value, path string) {
	if v.Type() == templateType && n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str" {
		// The shorthand: the scalar is the name, at the scalar's position.
		d.pos[path+".name"] = Pos{n.Line, n.Column}
		d.pos[path+".name#key"] = Pos{n.Line, n.Column}
		v.FieldByName("Name").SetString(n.Value)
		return
	}
	if v.Type() == dataType && n.Kind == yaml.SequenceNode {
		// The list form: entry r's keys at path[r].key. An empty list
		// stays a non-nil Rails, which the checker refuses.
		rails := v.FieldByName("Rails")
		d.decode(n, rails, path)
		if rails.IsNil() {
			rails.Set(reflect.MakeSlice(rails.Type(), 0, 0))
		}
		return
	}
	if n.Kind != yaml.MappingNode {
		if v.Type() == dataType {
			d.fail(n, path, "must be a mapping of keys to values (address, switch, port) or a list of them, one per rail")
			return
		}
		if v.Type() == templateType {
			d.fail(n, path, "must be the template's name or a mapping of keys to values (name, datastore, …)")
			return
		}
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
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			// One finding, and the keys the merge would have brought are
			// not reported missing (checker.missing).
			d.fail(k, p, "YAML merge keys (<<) are not supported: write the keys out, put what every host shares under defaults: (each host inherits every key it does not set), or use an alias for a whole value (gpus: *gpus)")
			if d.merged == nil {
				d.merged = map[string]bool{}
			}
			d.merged[path] = true
			continue
		}
		if prev, dup := seen[key]; dup {
			d.fail(k, p, "duplicate key (first at line %d)", prev.Line)
			continue
		}
		seen[key] = k
		idx, ok := fields[key]
		if !ok && v.Type() == switchSpecType && otherOS(key) {
			// An OS beyond ONYX and Cumulus Linux: its version, by its key.
			d.pos[p+"#key"] = Pos{k.Line, k.Column}
			other := v.FieldByName("Other")
			if other.IsNil() {
				other.Set(reflect.MakeMap(other.Type()))
			}
			ver := reflect.New(reflect.PointerTo(versionType))
			d.decode(val, ver.Elem(), p)
			if !ver.Elem().IsNil() {
				other.SetMapIndex(reflect.ValueOf(key), ver.Elem())
			}
			continue
		}
		if !ok {
			d.fail(k, p, "unknown key %q (known keys here: %s)", key, strings.Join(names, ", "))
			continue
		}
		d.pos[p+"#key"] = Pos{k.Line, k.Column}
		d.decode(val, v.FieldByIndex(idx), p)
	}
}

// decodeMap decodes a mapping whose keys the inventory's user chooses (a
// switch's breakout: port → mode) into a map with string keys: every key
// a plain scalar, none repeated, each value at path.key (the key at
// path.key#key).
func (d *decoder) decodeMap(n *yaml.Node, v reflect.Value, path string) {
	if isNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		d.fail(n, path, "must be a mapping of keys to values")
		return
	}
	m := reflect.MakeMapWithSize(v.Type(), len(n.Content)/2)
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		p := path + "." + k.Value
		switch {
		case k.Kind != yaml.ScalarNode:
			d.fail(k, path, "a key must be a single value, not a %s", kindName(k.Kind))
			continue
		case k.ShortTag() == "!!merge":
			d.fail(k, p, "YAML merge keys (<<) are not supported: write the keys out")
			continue
		}
		if prev, dup := seen[k.Value]; dup {
			d.fail(k, p, "duplicate key (first at line %d)", prev.Line)
			continue
		}
		seen[k.Value] = k
		d.pos[p+"#key"] = Pos{k.Line, k.Column}
		e := reflect.New(v.Type().Elem()).Elem()
		before := d.rep.Count()
		d.decode(val, e, p)
		if d.rep.Count() == before && !d.over {
			m.SetMapIndex(reflect.ValueOf(k.Value), e)
		}
	}
	v.Set(m)
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
	case reflect.Bool:
		var b bool
		if n.Tag != "!!bool" || n.Decode(&b) != nil {
			d.fail(n, path, "must be true or false, not %q", n.Value)
			return
		}
		v.SetBool(b)
	case reflect.Float64:
		var f float64
		if (n.Tag != "!!int" && n.Tag != "!!float") || n.Decode(&f) != nil {
			d.fail(n, path, "must be a number, not %q", n.Value)
			return
		}
		// NaN and ±Inf decode: the checker refuses them, for a file and a
		// Spec made in Go alike.
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

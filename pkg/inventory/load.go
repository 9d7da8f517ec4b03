package inventory

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/rdggen/rdggen/pkg/quote"

	"gopkg.in/yaml.v3"
)

// MaxFileSize is the largest inventory LoadFile reads, in bytes (4 MiB). An
// inventory of 16,384 hosts written out in full is about 2 MiB.
const MaxFileSize = 4 << 20

// An Option changes what Load, LoadFile and Build accept. Without options
// every rule of docs/inventory.md#validation-rules holds.
type Option func(*options)

// options are the Options given to one load.
type options struct {
	allowHTTPVCenter bool
}

// AllowHTTPVCenter accepts an http:// vcenter URL. Without it the URL is a
// finding: vCenter's login sends the password with the request, so over
// plain http it crosses the network unencrypted. The CLI passes it when
// --vcenter-allow-http is given (validate, generate, apply, check).
func AllowHTTPVCenter() Option { return func(o *options) { o.allowHTTPVCenter = true } }

func newOptions(opts []Option) options {
	var o options
	for _, f := range opts {
		if f != nil {
			f(&o)
		}
	}
	return o
}

// LoadFile reads and loads the inventory at path; see Load and LoadReader.
// A file larger than MaxFileSize (or a stream such as /dev/zero) is a
// finding, read no further than the limit. An empty path is an error: it
// names no file.
func LoadFile(path string, opts ...Option) (*Inventory, error) {
	if path == "" {
		return nil, errors.New("no inventory file given (an empty path)")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return LoadReader(path, f, opts...)
}

// LoadReader reads r to its end, no further than MaxFileSize+1 bytes, and
// loads what it read as the inventory name (Load). More than MaxFileSize
// bytes is a finding. An error reading r is returned as it is: a caller
// that reads a stream (a pipe) bounded by a context gets the context's
// error.
func LoadReader(name string, r io.Reader, opts ...Option) (*Inventory, error) {
	src, err := io.ReadAll(io.LimitReader(r, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(src) > MaxFileSize {
		return nil, &Report{Findings: []Finding{{File: DisplayName(name),
			Rule: fmt.Sprintf("is larger than %d MiB, the limit for an inventory; is it the right file?", MaxFileSize>>20)}}}
	}
	return Load(name, src, opts...)
}

// DisplayName is name as findings and generated files show it: unchanged
// when it is printable text, else with every control character escaped
// (quote.Line), so that a path holding a newline or a terminal escape
// cannot add a line to a generated file or rewrite a terminal.
func DisplayName(name string) string { return quote.Line(name) }

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// Load decodes src (named name in findings) strictly, fills defaults, derives
// values and checks every rule of docs/inventory.md#validation-rules. It returns the inventory, or a
// *Report with every finding when anything is wrong; nothing else is returned
// as an error. A valid inventory may carry Warnings: things that work but
// are probably not what the user wants.
func Load(name string, src []byte, opts ...Option) (*Inventory, error) {
	name = DisplayName(name)
	rep := &Report{}
	if i := bytes.IndexByte(src, 0); i >= 0 {
		rep.add(Finding{File: name, Pos: offsetPos(src, i), Rule: "a NUL byte: an inventory is a text file; is it the right file?"})
		return nil, rep
	}
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(src))
	if err := dec.Decode(&root); err != nil && !errors.Is(err, io.EOF) {
		rep.add(yamlError(name, src, err))
		return nil, rep
	}
	// One document: any later one, valid or not, is refused.
	var second yaml.Node
	switch err := dec.Decode(&second); {
	case err == nil:
		rep.add(Finding{File: name, Pos: Pos{max(second.Line, 1), 1},
			Rule: "a second YAML document starts here; an inventory is one document (remove the '---' and what follows, or merge it)"})
	case !errors.Is(err, io.EOF):
		f := yamlError(name, src, err)
		f.Rule = "a second YAML document follows the first, and it is " + f.Rule + "; an inventory is one document"
		rep.add(f)
	}
	if len(bytes.TrimSpace(src)) == 0 || len(root.Content) == 0 {
		rep.add(Finding{File: name, Rule: "the file is empty; `rdggen example` prints a starting point"})
		return nil, rep
	}
	// A value's path and a key's path+"#key": about one entry per node
	// visited. Sized up front (16,384 hosts are about 2^18 nodes), the map
	// is not rebuilt as it grows; a larger file's grows from there.
	nodes := countNodes(root.Content[0])
	d := &decoder{file: name, pos: make(positions, min(nodes, 1<<18)), rep: rep}
	d.budget = nodeBudget(nodes)
	d.limit = d.budget
	var raw Spec
	d.decode(root.Content[0], reflect.ValueOf(&raw).Elem(), "")
	if d.over { // what was read is a fragment: checking it would only add noise
		rep.sort()
		return nil, rep
	}
	return build(name, &raw, d.pos, d.merged, rep, newOptions(opts))
}

// yamlError is a parser error as a finding, at its line when yaml.v3 names
// one; for control characters (which it reports without a line), at the
// first one in src.
func yamlError(name string, src []byte, err error) Finding {
	f := Finding{File: name, Rule: "not valid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		f.Pos, f.Rule = Pos{line, 1}, "not valid YAML: "+m[2]
		// A tab in the indentation is the usual cause of this one: say so,
		// at the tab.
		if strings.Contains(m[2], "cannot start any token") {
			if l := lineOf(src, line); strings.HasPrefix(strings.TrimLeft(l, " "), "\t") {
				f.Pos.Col = strings.IndexByte(l, '\t') + 1
				f.Rule += " (a tab: YAML indents with spaces only)"
			}
		}
	} else if i := bytes.IndexFunc(src, func(r rune) bool { return r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0x7f }); i >= 0 {
		f.Pos = offsetPos(src, i)
	}
	return f
}

// lineOf is line n (1-based) of src, without its newline; "" past the end.
func lineOf(src []byte, n int) string {
	for i := 1; i < n; i++ {
		j := bytes.IndexByte(src, '\n')
		if j < 0 {
			return ""
		}
		src = src[j+1:]
	}
	if j := bytes.IndexByte(src, '\n'); j >= 0 {
		src = src[:j]
	}
	return string(src)
}

// offsetPos is the line and column (1-based, in bytes) of offset i in src.
func offsetPos(src []byte, i int) Pos {
	line := 1 + bytes.Count(src[:i], []byte("\n"))
	return Pos{line, i - bytes.LastIndexByte(src[:i], '\n')}
}

// must is a helper for the embedded inventory.
func must(inv *Inventory, err error) *Inventory {
	if err != nil {
		panic(fmt.Sprintf("inventory: embedded reference does not load:\n%v", err))
	}
	return inv
}

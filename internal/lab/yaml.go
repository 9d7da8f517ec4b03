package lab

import (
	"bytes"
	"fmt"

	"gopkg.in/yaml.v3"

	"github.com/rdggen/rdggen/pkg/quote"
)

// Rewrite returns the inventory src with `vcenter` set to vcenter and each
// switch's `mgmt` set to mgmt[name] (switches not in mgmt keep theirs). It
// edits the YAML document's nodes, so the user's comments and key order
// stay; a header comment says where the file came from.
//
// mgmt holds switches' and hosts' names alike (the inventory keeps them
// distinct); a host not in it keeps its mgmt.
func Rewrite(src []byte, vcenter string, mgmt map[string]string, from string) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: not a YAML mapping", from)
	}
	root := doc.Content[0]
	setKey(root, "vcenter", vcenter, "rdggen lab: the simulated vCenter")
	for _, list := range []string{"switches", "hosts"} {
		sws := value(root, list)
		if sws == nil || sws.Kind != yaml.SequenceNode {
			continue
		}
		for _, sw := range sws.Content {
			if sw.Kind != yaml.MappingNode {
				continue
			}
			name := value(sw, "name")
			if name == nil {
				continue
			}
			if addr, ok := mgmt[name.Value]; ok {
				setKey(sw, "mgmt", addr, "")
			}
		}
	}
	head := "# rdggen lab: " + quote.Line(from) + " with every management address pointing at its stand-in\n" +
		"# (written by rdggen lab up; rdggen lab down deletes it)\n"
	if root.HeadComment != "" {
		root.HeadComment = head + root.HeadComment
	} else {
		root.HeadComment = head
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, err
	}
	_ = enc.Close()
	return b.Bytes(), nil
}

// value is the value node of key in mapping m, nil when absent.
func value(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// setKey sets key to the string v in mapping m, appending it when absent.
func setKey(m *yaml.Node, key, v, comment string) {
	n := value(m, key)
	if n == nil {
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, &yaml.Node{})
		n = m.Content[len(m.Content)-1]
	}
	*n = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v, LineComment: comment}
	if comment != "" {
		n.LineComment = "# " + comment
	}
}

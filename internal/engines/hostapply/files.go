package hostapply

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/rdggen/rdggen/internal/transport/remote"
	"github.com/rdggen/rdggen/pkg/dockernet"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// planFiles plans the files rdggen owns whole (files: the desired ones,
// less those planPeermem leaves out), their enabling links, and the removal
// of the other OS form.
func (p *plan) planFiles(inv *inventory.Inventory, st *hostState, files []fileSpec) error {
	h := p.d.Host
	d := p.d
	// Files rdggen owns whole, their enabling links, and the other OS form.
	// The netplan file depends on the host: its routes and MTU go under the
	// ID of the host's own definition of the data interface.
	if h.OS.UsesNetplan() {
		_, mac := parseLink(st.Link.Out)
		id, how, ok := netplanID(st.Netplan, h.DataInterface, mac)
		if !ok {
			id = h.DataInterface
			p.notes = append(p.notes, fmt.Sprintf("no netplan file configures %s: rdggen's %s defines it under its name (its address must come from there or elsewhere)", h.DataInterface, dockernet.NetplanPath))
		}
		files = slices.Clone(files)
		for i := range files {
			if files[i].Path == dockernet.NetplanPath {
				files[i].Data = dockernet.NetplanFor(inv, h, id, how)
				if ok {
					p.fileWhy[files[i].Path] = "routes and MTU under netplan ID " + id + ", " + how
				}
			}
		}
	}
	p.managed = len(files) + len(d.Links)
	for _, f := range files {
		s := st.Files[f.Path]
		switch {
		case s.Kind == "other" || s.Kind == "link":
			return hostErrorf("%s is not a regular file (%s); remove it and run apply again", f.Path, s.Kind)
		case s.Kind == "file" && bytes.Equal(s.Data, f.Data) && s.Mode == f.Mode:
			continue
		}
		p.files = append(p.files, f)
		p.newFiles[f.Path] = s.Kind == "absent"
		p.reload = p.reload || f.Unit
	}
	for _, l := range d.Links {
		if s := st.Files[l.Path]; s.Kind != "link" || string(s.Data) != l.Target {
			p.links = append(p.links, l)
			p.reload = true
		}
	}
	for _, f := range d.Foreign {
		s := st.Files[f.Path]
		if s.Kind == "absent" {
			continue
		}
		if s.Kind == "file" && bytes.Contains(s.Data, []byte(f.Mark)) {
			p.remove = append(p.remove, f)
		} else {
			p.notes = append(p.notes, fmt.Sprintf("%s exists but was not written by rdggen: left alone", f.Path))
		}
	}
	return nil
}

// applyFiles appends the steps of the files, the links, the removals and
// the unit reload (scripts/reload.sh).
func (p *plan) applyFiles(w *remote.Script) {
	for _, f := range p.files {
		w.Line("step ", remote.Quote("file:"+f.Path), " put_file ", remote.RootPath(f.Path), " ", fmt.Sprintf("%o", f.Mode.Perm()), " ", w.Data(f.Data))
	}
	for _, l := range p.links {
		w.Line("step ", remote.Quote("link:"+l.Path), " put_link ", remote.RootPath(l.Path), " ", remote.Quote(l.Target))
	}
	for _, f := range p.remove {
		w.Line("step ", remote.Quote("remove:"+f.Path), " rm -f ", remote.RootPath(f.Path))
	}
	if p.reload {
		w.Text(script("reload.sh"))
		w.Line("step reload systemd_reload")
	}
}

package render

import (
	"encoding/xml"
	"fmt"
	"math"
	"strings"

	"github.com/rdggen/rdggen/pkg/artifact"
	"github.com/rdggen/rdggen/pkg/dockernet"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// SVGPath is the cluster drawing in the output tree.
const SVGPath = "cluster.svg"

// Colours by role, one per kind of thing in the drawing and its legend.
const (
	colSwitch    = "#1f4e79" // switch
	colLink      = "#2e75b6" // a cabled port and its data link
	colPortFree  = "#d9d9d9" // a free port
	colESXi      = "#595959" // ESXi host
	colESXiFill  = "#f2f2f2"
	colVM        = "#262626" // VM, and plain text
	colGPU       = "#548235" // GPU passed through
	colNIC       = "#c55a11" // the ConnectX PF and its SR-IOV VFs
	colContainer = "#7030a0" // docker0, container subnet, routes
	colFabric    = "#bf9000" // an inter-switch link of a leaf-spine fabric
)

// Geometry, in pixels (SVG user units).
const (
	svgMargin    = 20
	svgLine      = 16 // text line height
	svgESXiW     = 350
	svgVMW       = 320 // VM box, inside the ESXi box
	svgVMH       = 5*svgLine + 10
	svgESXiHead  = 2*svgLine + 12
	svgVMGap     = 8
	svgPort      = 18 // port square
	svgPortStep  = 22
	svgPortsRow  = 32 // ports per row of a switch box
	svgLaneStep  = 4  // spacing of parallel links
	svgMaxCols   = 8  // ESXi hosts per row, at most
	svgRouteRows = 16 // route table rows per column
	svgRouteColW = 360
	svgCharW     = 7 // average width of a character at 12px, for sizing
)

// SVG draws the cluster for review in a browser: each switch with its
// ports; each ESXi host with its ConnectX PF, cabled to its switch port, and
// its VMs, each with its GPUs, its SR-IOV VF and data address, docker0 and
// container subnet; the routes between the container subnets; coloured by
// role, with a legend. It is a pure function of the inventory (golden
// tested). Every inventory string is XML-escaped, and one too long for its
// box is cut with "…" (the full text is in the element's tooltip).
func SVG(inv *inventory.Inventory) artifact.File {
	return artifact.File{Path: SVGPath, Mode: 0o644, Data: []byte(newDrawing(inv).render())}
}

// box is a placed rectangle.
type box struct{ x, y, w, h int }

// placedESXi is one ESXi host's box and its link to the switch.
type placedESXi struct {
	name string
	vms  []*inventory.Host
	box
	col, row int
	lane     int // its link's index among the links in its column's gap
	link     int // its link's index among all links (its horizontal lane)
}

type drawing struct {
	inv        *inventory.Inventory
	bySwitch   map[string][]*inventory.Host // hostsBySwitch
	b          strings.Builder
	width      int
	height     int
	cols, rows int
	gapW       int
	switches   map[string]box
	laneTop    int
	esxi       []placedESXi
	routesTop  int
}

// columns is how many ESXi hosts a row holds: about twice as many columns as
// rows, at least 4 (or all of them), at most svgMaxCols.
func columns(n int) int {
	c := int(math.Ceil(math.Sqrt(2 * float64(n))))
	return max(1, min(n, svgMaxCols, max(4, c)))
}

func newDrawing(inv *inventory.Inventory) *drawing {
	d := &drawing{inv: inv, switches: map[string]box{}, bySwitch: hostsBySwitch(inv)}
	var names []string
	var vmsOf [][]*inventory.Host
	for e, vms := range inv.ByESXi() {
		names, vmsOf = append(names, e), append(vmsOf, vms)
	}
	d.cols = columns(len(names))
	d.rows = (len(names) + d.cols - 1) / d.cols
	d.gapW = 16 + d.rows*svgLaneStep
	d.width = max(2*svgMargin+d.cols*(d.gapW+svgESXiW), 2*svgMargin+2*svgRouteColW, 960)
	if inv.IsFabric() {
		// The spines on one row, and up to 4 leaves on each row below, so
		// that the links run between the rows.
		row := func(sws []*inventory.Switch, most int) int {
			w := 2 * svgMargin
			for i, s := range sws {
				if i < most {
					w += switchBoxW(*s, inv) + 16
				}
			}
			return w
		}
		d.width = max(d.width, row(inv.Spines(), len(inv.Spines())), row(inv.Leaves(), 4))
	}

	// Switches side by side, wrapping; in a fabric the spines on top and
	// the leaves on a row of their own below them (fabricOrder).
	x, y, rowH := svgMargin, svgMargin+5*svgLine+6, 0
	prevRole := ""
	for _, sw := range fabricOrder(inv) {
		b := box{w: switchBoxW(sw, inv), h: switchBoxH(sw)}
		newRow := inv.IsFabric() && prevRole == inventory.RoleSpine && sw.IsLeaf()
		if inv.IsFabric() && newRow {
			rowH += 3 * svgLine // room for the links between the rows
		}
		prevRole = sw.Fabric.Role
		if x > svgMargin && (newRow || x+b.w > d.width-svgMargin) {
			x, y, rowH = svgMargin, y+rowH+10, 0
		}
		b.x, b.y = x, y
		d.switches[sw.Name] = b
		x += b.w + 16
		rowH = max(rowH, b.h)
	}
	d.laneTop = y + rowH + 14
	top := d.laneTop + len(names)*svgLaneStep + 16

	// ESXi hosts in rows, each row as tall as its tallest box.
	for r := 0; r < d.rows; r++ {
		tallest := 0
		for c := 0; c < d.cols && r*d.cols+c < len(names); c++ {
			i := r*d.cols + c
			vms := vmsOf[i]
			e := placedESXi{name: names[i], vms: vms, col: c, row: r, lane: r, link: i,
				box: box{x: svgMargin + c*(d.gapW+svgESXiW) + d.gapW, y: top, w: svgESXiW, h: svgESXiHead + len(vms)*(svgVMH+svgVMGap)}}
			d.esxi = append(d.esxi, e)
			tallest = max(tallest, e.h)
		}
		top += tallest + 24
	}
	d.routesTop = top
	d.height = d.routesTop + d.routesH() + 3*svgLine + svgMargin
	return d
}

func switchTitle(sw inventory.Switch, inv *inventory.Inventory) string {
	if sw.Fabric.Role != "" {
		return fmt.Sprintf("%s %s — %s, %d ports, %s, AS %d, lo %s, RoCE lossless on priority %d", sw.Fabric.Role, fit(sw.Name, 40), sw.Model, sw.Ports, sw.Release(), sw.Fabric.ASN, sw.Fabric.Loopback, inv.RoCE.Priority)
	}
	return fmt.Sprintf("switch %s — %s, %d ports, %s, trust L3, PFC on priority %d", fit(sw.Name, 40), sw.Model, sw.Ports, sw.Release(), inv.RoCE.Priority)
}

func switchBoxW(sw inventory.Switch, inv *inventory.Inventory) int {
	return max(20+min(max(sw.Ports, 1), svgPortsRow)*svgPortStep, svgCharW*len([]rune(switchTitle(sw, inv)))+16)
}

func switchBoxH(sw inventory.Switch) int {
	rows := max(1, (sw.Ports+svgPortsRow-1)/svgPortsRow)
	return 30 + rows*(svgPortStep+12) + 4
}

// routesH is the height of the route table.
func (d *drawing) routesH() int {
	return 2*svgLine + min(len(d.inv.Hosts), svgRouteRows)*svgLine
}

// esc escapes s for XML text and attributes.
func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// fit cuts s to n characters (runes), ending in "…" when cut.
func fit(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:max(n-1, 0)]) + "…"
}

// text writes one line of text that fits width pixels at size; a cut line
// keeps its whole text in a tooltip.
func (d *drawing) text(x, y, width, size int, fill, weight, s string) {
	w := ""
	if weight != "" {
		w = ` font-weight="` + weight + `"`
	}
	n := width * 12 / (svgCharW * size) // characters that fit
	shown := fit(s, n)
	tip := ""
	if shown != s {
		tip = "<title>" + esc(s) + "</title>"
	}
	fmt.Fprintf(&d.b, `<text x="%d" y="%d" font-size="%d" fill="%s"%s>%s%s</text>`+"\n", x, y, size, fill, w, tip, esc(shown))
}

func (d *drawing) rect(b box, stroke, fill string, rx int) {
	fmt.Fprintf(&d.b, `<rect x="%d" y="%d" width="%d" height="%d" rx="%d" fill="%s" stroke="%s" stroke-width="1.5"/>`+"\n", b.x, b.y, b.w, b.h, rx, fill, stroke)
}

func (d *drawing) render() string {
	inv := d.inv
	fmt.Fprintf(&d.b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="DejaVu Sans, Verdana, Arial, sans-serif">`+"\n",
		d.width, d.height, d.width, d.height)
	fmt.Fprintf(&d.b, "<title>%s</title>\n", esc("cluster "+inv.Name))
	d.rect(box{0, 0, d.width, d.height}, "none", "#ffffff", 0)

	full := d.width - 2*svgMargin
	y := svgMargin + 14
	d.text(svgMargin, y, full, 18, colVM, "bold", fmt.Sprintf("cluster %s: %d hosts on %d ESXi hosts, %d switch(es)", inv.Name, len(inv.Hosts), len(inv.ESXiHosts()), len(inv.Switches)))
	y += svgLine + 4
	d.text(svgMargin, y, full, 12, colVM, "", fmt.Sprintf("RoCE: DSCP %d → priority %d (lossless: PFC, ECN %d–%d KB); CNP DSCP %d → priority %d (strict)",
		inv.RoCE.DSCP, inv.RoCE.Priority, inv.RoCE.ECNMinKB, inv.RoCE.ECNMaxKB, inv.RoCE.CNPDSCP, inv.RoCE.CNPPriority))
	y += svgLine
	d.text(svgMargin, y, full, 12, colContainer, "", fmt.Sprintf("containers: pool %s, /%d per host, docker0 MTU %d; Horovod network %s, worker sshd port %d",
		inv.Docker.Pool, inv.Docker.Prefix, inv.Docker.MTU, inv.Horovod.Network, inv.Horovod.SSHPort))
	y += svgLine
	d.text(svgMargin, y, full, 12, colLink, "", fmt.Sprintf("MTU per hop (bytes): switch ports %s, ESXi vSwitch of the PF %d, VM data interface %d, docker0 %d",
		switchPortMTU(inv), inv.DataMTU(), inv.DataMTU(), inv.Docker.MTU))

	// The cables first, so that boxes and ports sit on their ends: from
	// the switch port down to the host's own lane, along it to the gap
	// left of the host's column, down the gap, and into the PF.
	d.b.WriteString(`<g fill="none" stroke="` + colLink + `" stroke-width="1.5">` + "\n")
	for _, e := range d.esxi {
		h := e.vms[0] // the VMs of an ESXi host share its uplink and port
		px, py, ok := d.portAnchor(h)
		if !ok {
			continue
		}
		laneY := d.laneTop + e.link*svgLaneStep
		gapX := svgMargin + e.col*(d.gapW+svgESXiW) + 8 + e.lane*svgLaneStep
		fmt.Fprintf(&d.b, `<path d="M%d %d V%d H%d V%d H%d"><title>%s</title></path>`+"\n",
			px, py, laneY, gapX, e.y+2*svgLine-4, e.x, esc(fmt.Sprintf("%s %s ↔ %s port %s", e.name, h.NIC.PF, h.Data.Switch, portName(inv, h))))
		// Rails 1 and up: each from its own leaf port, into the ESXi box
		// a little lower, dashed (docs/rails.md).
		for _, r := range h.Rails[min(1, len(h.Rails)):] {
			sb, found := d.switches[r.Switch]
			if !found || r.Port.Number < 1 {
				continue
			}
			pb := portBox(sb, r.Port.Number)
			rx, ry := pb.x+svgPort/2, pb.y+svgPort
			off := r.Index * 3
			fmt.Fprintf(&d.b, `<path d="M%d %d V%d H%d V%d H%d" stroke-dasharray="4 2"><title>%s</title></path>`+"\n",
				rx, ry, laneY+off, gapX+off, e.y+2*svgLine-4+off, e.x, esc(fmt.Sprintf("%s rail %d: %s ↔ %s port %s", e.name, r.Index, r.PF, r.Switch, railPortName(inv, r))))
		}
	}
	d.b.WriteString("</g>\n")
	d.drawFabricLinks()

	for _, sw := range inv.Switches {
		d.drawSwitch(sw)
	}
	for _, e := range d.esxi {
		d.drawESXi(e)
	}
	d.drawRoutes()
	d.drawLegend()
	d.b.WriteString("</svg>\n")
	return d.b.String()
}

// railPortName is rail r's port in its switch's spelling.
func railPortName(inv *inventory.Inventory, r inventory.Rail) string {
	if sw := inv.Switch(r.Switch); sw != nil {
		return sw.PortName(r.Port)
	}
	return r.Port.String()
}

// portBox is the square of port n on a switch box.
func portBox(sb box, n int) box {
	i := n - 1
	return box{sb.x + 10 + (i%svgPortsRow)*svgPortStep, sb.y + 30 + (i/svgPortsRow)*(svgPortStep+12), svgPort, svgPort}
}

// portAnchor is the bottom centre of host h's switch port.
func (d *drawing) portAnchor(h *inventory.Host) (x, y int, ok bool) {
	sb, found := d.switches[h.Data.Switch]
	if !found || h.Data.Port.Number < 1 {
		return 0, 0, false
	}
	p := portBox(sb, h.Data.Port.Number)
	return p.x + svgPort/2, p.y + svgPort, true
}

func (d *drawing) drawSwitch(sw inventory.Switch) {
	sb := d.switches[sw.Name]
	d.rect(sb, colSwitch, "#ffffff", 6)
	d.text(sb.x+8, sb.y+18, sb.w-16, 12, colSwitch, "bold", switchTitle(sw, d.inv))
	// What is cabled to each port, named as the switch names the port or
	// its lane: swp1s0 on Cumulus, ethernet 1/1/1 on ONYX.
	used := map[int][]string{}
	lane := func(p inventory.Port) string {
		if p.Lane == 0 {
			return ""
		}
		return sw.PortName(p) + " "
	}
	for _, h := range d.bySwitch[sw.Name] {
		used[h.Data.Port.Number] = append(used[h.Data.Port.Number], fmt.Sprintf("%s%s (%s)", lane(h.Data.Port), h.Name, h.Data.Address))
	}
	if d.inv.MultiRail() {
		for _, hr := range d.inv.RailsOnSwitch(sw.Name) {
			if hr.Rail.Index > 0 {
				used[hr.Rail.Port.Number] = append(used[hr.Rail.Port.Number], fmt.Sprintf("%s%s rail %d (%s)", lane(hr.Rail.Port), hr.Host.Name, hr.Rail.Index, hr.Rail.Address))
			}
		}
	}
	for _, u := range d.inv.Uplinks(sw.Name) {
		used[u.Port.Number] = append(used[u.Port.Number], lane(u.Port)+"uplink to "+uplinkPeer(u))
	}
	for n := 1; n <= sw.Ports; n++ {
		p := portBox(sb, n)
		fill, label := colPortFree, colVM
		name := svgPortName(sw, n)
		if mode := sw.Breakout(n); mode > 0 {
			name += fmt.Sprintf(" (split %dx, %d Gb/s a lane)", mode, sw.PortSpeedGbps(inventory.Port{Module: 1, Number: n, Lane: 1}))
		}
		title := name + ": free"
		if by := sw.DisabledBy(n); by > 0 {
			title = fmt.Sprintf("%s: disabled (%s's %dx split takes its logical ports)", name, svgPortName(sw, by), sw.Breakout(by))
		}
		if hs := used[n]; len(hs) > 0 {
			fill, label = colLink, "#ffffff"
			title = name + ": " + strings.Join(hs, ", ")
		}
		fmt.Fprintf(&d.b, `<rect x="%d" y="%d" width="%d" height="%d" rx="2" fill="%s"><title>%s</title></rect>`+"\n", p.x, p.y, p.w, p.h, fill, esc(title))
		fmt.Fprintf(&d.b, `<text x="%d" y="%d" font-size="9" text-anchor="middle" fill="%s">%d</text>`+"\n", p.x+svgPort/2, p.y+13, label, n)
	}
}

// drawESXi draws an ESXi host: its name, its PF (where the cable ends) and
// a line from the PF to each VM's VF, then the VMs.
func (d *drawing) drawESXi(e placedESXi) {
	d.rect(box{e.x, e.y, e.w, e.h - svgVMGap}, colESXi, colESXiFill, 6)
	inner := e.w - 16
	d.text(e.x+8, e.y+svgLine+1, inner, 12, colESXi, "bold", "ESXi "+e.name)
	n := e.vms[0].NIC
	pfLine := fmt.Sprintf("PF %s %s, %d VFs → %s %s", n.PF, n.Model, n.VFs, e.vms[0].Data.Switch, portName(d.inv, e.vms[0]))
	if rails := e.vms[0].Rails; len(rails) > 1 {
		parts := make([]string, len(rails))
		for i, r := range rails {
			parts[i] = fmt.Sprintf("%s → %s %s", r.PF, r.Switch, railPortName(d.inv, r))
		}
		pfLine = fmt.Sprintf("%d rails, %s, %d VFs each: %s", len(rails), n.Model, n.VFs, strings.Join(parts, ", "))
	}
	d.text(e.x+8, e.y+2*svgLine, inner, 11, colNIC, "", pfLine)
	// PF → VFs.
	vfY := func(j int) int { return e.y + svgESXiHead + j*(svgVMH+svgVMGap) + 2*svgLine + 10 }
	fmt.Fprintf(&d.b, `<path d="M%d %d V%d" fill="none" stroke="%s" stroke-width="1.5"/>`+"\n", e.x+5, e.y+2*svgLine+2, vfY(len(e.vms)-1), colNIC)
	for j, h := range e.vms {
		fmt.Fprintf(&d.b, `<path d="M%d %d H%d" fill="none" stroke="%s" stroke-width="1.5"/>`+"\n", e.x+5, vfY(j), e.x+15, colNIC)
		d.drawVM(h, box{e.x + 15, e.y + svgESXiHead + j*(svgVMH+svgVMGap), svgVMW, svgVMH})
	}
}

func (d *drawing) drawVM(h *inventory.Host, b box) {
	d.rect(b, colVM, "#ffffff", 4)
	x, y, w := b.x+8, b.y+svgLine, b.w-16
	name := "VM " + h.VM
	if h.VM != h.Name {
		name += " (host " + h.Name + ")"
	}
	d.text(x, y, w, 12, colVM, "bold", name)
	y += svgLine
	for i := range h.GPUs {
		fmt.Fprintf(&d.b, `<rect x="%d" y="%d" width="8" height="10" fill="%s"/>`+"\n", x+i*10, y-9, colGPU)
	}
	off := len(h.GPUs)*10 + 4
	d.text(x+off, y, w-off, 11, colGPU, "", gpuSummary(h.GPUs)+", passthrough")
	y += svgLine
	d.text(x, y, w, 11, colNIC, "", fmt.Sprintf("VF %s: %s", h.DataInterface, h.Data.Address))
	y += svgLine
	d.text(x, y, w, 11, colContainer, "", fmt.Sprintf("docker0 %s: container subnet", h.Bridge()))
	y += svgLine
	routes := fmt.Sprintf("%d route(s) to other containers", len(d.inv.Hosts)-1)
	if d.inv.IsFabric() {
		routes = fmt.Sprintf("%d route(s) via leaf %s", len(dockernet.Routes(d.inv, h)), h.Data.Switch)
	} else if d.inv.Docker.SwitchRouted() {
		routes = "1 route: the pool via the switch"
	}
	d.text(x, y, w, 11, colContainer, "", fmt.Sprintf("%s · %d slot(s)", routes, h.Slots()))
}

// drawRoutes is the route table every host holds (the switch, with
// docker.routing: switch): each host's container subnet via its data
// address (the next hop), on the data interface.
func (d *drawing) drawRoutes() {
	y := d.routesTop + svgLine
	full := d.width - 2*svgMargin
	title := "Routes: every host reaches each other host's containers via that host's data address (next hop)"
	if d.inv.IsFabric() {
		title = fmt.Sprintf("Routes: every host sends the pool %s and the other leaves' subnets to its leaf's gateway; each leaf reaches its hosts' containers via their data addresses and advertises them in BGP",
			d.inv.Docker.Pool)
	} else if d.inv.Docker.SwitchRouted() {
		title = fmt.Sprintf("Routes: every host sends the pool %s to the switch (%s), which reaches each host's containers via its data address",
			d.inv.Docker.Pool, d.inv.Docker.Gateway)
	}
	d.text(svgMargin, y, full, 12, colContainer, "bold", title)
	if len(d.inv.Hosts) < 2 {
		d.text(svgMargin, y+svgLine+4, full, 11, colContainer, "", "one host: no routes")
		return
	}
	rows := min(len(d.inv.Hosts), svgRouteRows)
	cols := max(1, full/svgRouteColW)
	for i := range d.inv.Hosts {
		h := &d.inv.Hosts[i]
		c, r := i/rows, i%rows
		if c >= cols {
			d.text(svgMargin+(cols-1)*svgRouteColW, y+svgLine*(rows+1)+4, svgRouteColW, 11, colContainer, "", fmt.Sprintf("… and %d more", len(d.inv.Hosts)-i))
			break
		}
		dst, via := dockernet.RouteTo(h)
		d.text(svgMargin+c*svgRouteColW, y+svgLine*(r+1)+4, svgRouteColW-10, 11, colContainer, "", fmt.Sprintf("%s via %s (%s)", dst, via, h.Name))
	}
}

func (d *drawing) drawLegend() {
	y := d.height - svgMargin - 4
	x := svgMargin
	for _, l := range []struct{ col, text string }{
		{colSwitch, "switch"}, {colLink, "cabled port, data link"}, {colPortFree, "free port"}, {colESXi, "ESXi host"},
		{colVM, "VM"}, {colGPU, "GPU (passthrough)"}, {colNIC, "ConnectX PF and SR-IOV VFs"}, {colContainer, "docker0, containers, routes"},
	} {
		fmt.Fprintf(&d.b, `<rect x="%d" y="%d" width="12" height="12" fill="%s"/>`+"\n", x, y-10, l.col)
		fmt.Fprintf(&d.b, `<text x="%d" y="%d" font-size="11" fill="%s">%s</text>`+"\n", x+16, y, colVM, esc(l.text))
		x += 30 + 6*len(l.text)
	}
	if d.inv.IsFabric() {
		fmt.Fprintf(&d.b, `<rect x="%d" y="%d" width="12" height="12" fill="%s"/>`+"\n", x, y-10, colFabric)
		fmt.Fprintf(&d.b, `<text x="%d" y="%d" font-size="11" fill="%s">%s</text>`+"\n", x+16, y, colVM, esc("leaf-spine link (eBGP)"))
	}
}

// svgPortName is front-panel port n as its switch's OS names it in a
// port's tooltip (its registration's Picture.PortName: "ethernet 1/1" on
// ONYX), else as the model does ("swp1" on Cumulus Linux).
func svgPortName(sw inventory.Switch, n int) string {
	p := inventory.Port{Module: 1, Number: n}
	if f := picture(sw.OS()).PortName; f != nil {
		return f(sw, p)
	}
	return sw.PortName(p)
}

// portName is host h's data port as its switch names it (1/1 on ONYX,
// swp1 on Cumulus).
func portName(inv *inventory.Inventory, h *inventory.Host) string {
	if sw := inv.Switch(h.Data.Switch); sw != nil {
		return sw.PortName(h.Data.Port)
	}
	return h.Data.Port.String()
}

// fabricOrder is the switches in drawing order: file order, or in a
// fabric the spines first, then the leaves (each in file order).
func fabricOrder(inv *inventory.Inventory) []inventory.Switch {
	if !inv.IsFabric() {
		return inv.Switches
	}
	var out []inventory.Switch
	for _, s := range inv.Spines() {
		out = append(out, *s)
	}
	for _, s := range inv.Leaves() {
		out = append(out, *s)
	}
	return out
}

// uplinkPeer names an uplink's far end, "spine1 swp1".
func uplinkPeer(u inventory.Uplink) string {
	if u.Peer == nil {
		return "?"
	}
	return u.Peer.Name + " " + u.Peer.PortName(u.PeerPort)
}

// svgFabricLane is the spacing of the fabric links' horizontal runs, room
// for a line of 9px text above each.
const svgFabricLane = 12

// drawFabricLinks draws each inter-switch link from the leaf's port up
// to the spine's port, with both ends and the addressing in its tooltip,
// and labels it with its ports' names and, for a numbered link (an ONYX
// end), its /31.
func (d *drawing) drawFabricLinks() {
	if len(d.inv.Fabric.Links) == 0 {
		return
	}
	var labels strings.Builder
	d.b.WriteString(`<g fill="none" stroke="` + colFabric + `" stroke-width="1.5">` + "\n")
	for _, l := range d.inv.Fabric.Links {
		a, b := d.inv.Switch(l.A.Switch), d.inv.Switch(l.B.Switch)
		if a == nil || b == nil {
			continue
		}
		if a.IsSpine() { // draw from the leaf (below) up to the spine
			a, b = b, a
			l.A, l.B = l.B, l.A
		}
		pa := portBox(d.switches[a.Name], l.A.Port.Number)
		pb := portBox(d.switches[b.Name], l.B.Port.Number)
		how := "unnumbered eBGP"
		if l.Numbered {
			how = "numbered eBGP on " + l.Net.String()
		}
		midY := d.switches[a.Name].y - 6 - (l.Index%3)*svgFabricLane
		fmt.Fprintf(&d.b, `<path d="M%d %d V%d H%d V%d"><title>%s</title></path>`+"\n",
			pa.x+svgPort/2, pa.y, midY, pb.x+svgPort/2, pb.y+svgPort,
			esc(fmt.Sprintf("%s %s ↔ %s %s: %s, MTU 9216", a.Name, a.PortName(l.A.Port), b.Name, b.PortName(l.B.Port), how)))
		label := fmt.Sprintf("%s ↔ %s %s", a.PortName(l.A.Port), b.Name, b.PortName(l.B.Port))
		if l.Numbered {
			label += " " + l.Net.String()
		}
		fmt.Fprintf(&labels, `<text x="%d" y="%d" font-size="9" fill="%s">%s</text>`+"\n", pa.x+svgPort/2+3, midY-2, colFabric, esc(label))
	}
	d.b.WriteString("</g>\n")
	d.b.WriteString(labels.String())
}

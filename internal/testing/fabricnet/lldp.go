package fabricnet

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// startLLDPD starts n's lldpd in the foreground (-d, so its monitor is
// our child and its pid is known; the pid of the monitor goes into
// lldpd.pid), on n's ports only, with its own control socket, the system
// hostname set to the switch's name, port ids as interface names and a
// transmit interval of 1 s.
func (f *Fabric) startLLDPD(n *node) error {
	sock := filepath.Join(n.dir, "lldpd.socket")
	log, err := os.Create(filepath.Join(n.dir, "lldpd.log"))
	if err != nil {
		return err
	}
	defer log.Close()
	pattern := "swp*"
	if n.sw.OS == ONYX {
		pattern = "eth*"
	}
	// The settings go in a file lldpd's own lldpcli reads before it lets
	// lldpd send its first LLDPDU, so no neighbor ever hears the machine's
	// hostname or a MAC as port id.
	conf := filepath.Join(n.dir, "lldpd.conf")
	settings := "configure system hostname " + n.sw.Name + "\nconfigure lldp portidsubtype ifname\nconfigure lldp tx-interval 1\n"
	if err := writeFile(conf, []byte(settings)); err != nil {
		return err
	}
	cmd := daemonCmd("netns", "exec", n.ns, LLDPD, "-d", "-u", sock, "-I", pattern, "-O", conf)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("fabricnet: %s: lldpd: %v", n.sw.Name, err)
	}
	n.lldpd = cmd
	if err := os.WriteFile(filepath.Join(n.dir, "lldpd.pid"), []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644); err != nil {
		return err
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(filepath.Join(n.dir, "lldpd.log"))
			return fmt.Errorf("fabricnet: %s: lldpd made no socket\n%s", n.sw.Name, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Wait until lldpd runs with the settings (it is paused until its
	// lldpcli has read them).
	for {
		out, err := n.lldpcli("-f", "keyvalue", "show", "chassis")
		if err == nil && strings.Contains(string(out), "chassis.name="+n.sw.Name+"\n") {
			return nil
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(filepath.Join(n.dir, "lldpd.log"))
			return fmt.Errorf("fabricnet: %s: lldpd does not take its settings: %v: %s\n%s", n.sw.Name, err, out, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// lldpcli runs n's lldpcli, bounded as vtysh is (toolTimeout).
func (n *node) lldpcli(args ...string) ([]byte, error) {
	a := append([]string{"netns", "exec", n.ns, LLDPCLI, "-u", filepath.Join(n.dir, "lldpd.socket")}, args...)
	ctx, cancel := context.WithTimeout(context.Background(), toolTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ip", a...)
	cmd.WaitDelay = time.Second
	return cmd.CombinedOutput()
}

// toolTimeout bounds one vtysh or lldpcli run that reads a switch's state.
const toolTimeout = 15 * time.Second

// stopLLDPD ends lldpd's monitor (the pid in lldpd.pid) and its
// unprivileged child (the monitor's child process), each by pid.
func (f *Fabric) stopLLDPD(n *node) {
	pidFile := filepath.Join(n.dir, "lldpd.pid")
	p := readPid(pidFile)
	if p <= 1 {
		return
	}
	// ip netns exec execs lldpd, so the pid is lldpd's monitor.
	// The child first: the monitor reaps it (and then exits too).
	for _, c := range childPids(p) {
		stopPid(c)
	}
	stopPid(p)
	if n.lldpd != nil {
		_ = n.lldpd.Wait()
		n.lldpd = nil
	}
	_ = os.Remove(pidFile)
}

// childPids lists the children of process p (/proc/<p>/task/*/children).
func childPids(p int) []int {
	var out []int
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(p) + "/task/*/children")
	for _, t := range tasks {
		b, _ := os.ReadFile(t)
		for _, s := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(s); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

// LLDPNeighbor is one neighbor lldpd heard on a port.
type LLDPNeighbor struct {
	// Port is the local port, as the switch names it ("swp31", "1/31").
	Port string
	// SysName is the neighbor's system name (its hostname).
	SysName string
	// PortID is the neighbor's port id: its interface name (portidsubtype
	// ifname), translated back to its switch's port name when the system
	// name is a switch of the fabric ("1/1" for an ONYX neighbor).
	PortID string
}

// LLDPNeighbors reads switch sw's LLDP neighbors (`lldpcli -f json show
// neighbors`), sorted by port.
func (f *Fabric) LLDPNeighbors(sw string) ([]LLDPNeighbor, error) {
	n := f.node(sw)
	out, err := n.lldpcli("-f", "json", "show", "neighbors")
	if err != nil {
		return nil, fmt.Errorf("fabricnet: %s: lldpcli show neighbors: %v: %s", sw, err, out)
	}
	list, err := ParseLLDPNeighbors(out)
	if err != nil {
		return nil, fmt.Errorf("fabricnet: %s: %v", sw, err)
	}
	for i := range list {
		list[i].Port = PortName(n.sw.OS, list[i].Port)
		if peer := f.switches[list[i].SysName]; peer != nil {
			list[i].PortID = PortName(peer.sw.OS, list[i].PortID)
		}
	}
	return list, nil
}

// ParseLLDPNeighbors reads lldpcli's JSON (lldpd 1.0.x: {"lldp":
// {"interface": …}}, where "interface" is one object per port, or a list of
// them when there are several, and each port's "chassis" is an object keyed
// by the system name). Ports are Linux interface names.
func ParseLLDPNeighbors(b []byte) ([]LLDPNeighbor, error) {
	var doc struct {
		LLDP map[string]json.RawMessage `json:"lldp"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("lldpcli json: %v", err)
	}
	raw := doc.LLDP["interface"]
	var ifaces []map[string]json.RawMessage
	if len(raw) > 0 && raw[0] == '[' {
		if err := json.Unmarshal(raw, &ifaces); err != nil {
			return nil, err
		}
	} else if len(raw) > 0 {
		var one map[string]json.RawMessage
		if err := json.Unmarshal(raw, &one); err != nil {
			return nil, err
		}
		ifaces = append(ifaces, one)
	}
	var list []LLDPNeighbor
	for _, m := range ifaces {
		for port, v := range m {
			var nb struct {
				Chassis map[string]json.RawMessage `json:"chassis"`
				Port    struct {
					ID struct {
						Type  string `json:"type"`
						Value string `json:"value"`
					} `json:"id"`
				} `json:"port"`
			}
			if err := json.Unmarshal(v, &nb); err != nil {
				return nil, err
			}
			e := LLDPNeighbor{Port: port, PortID: nb.Port.ID.Value}
			for name := range nb.Chassis {
				if name != "id" {
					e.SysName = name
				}
			}
			list = append(list, e)
		}
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Port < list[j].Port })
	return list, nil
}

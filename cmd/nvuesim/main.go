// Command nvuesim runs the NVUE REST API simulator (pkg/sim/nvuesim)
// on loopback until interrupted, for trying `rdggen apply --target switch`
// and `rdggen check --target switch` on a Cumulus Linux switch without one:
//
//	go run ./cmd/nvuesim -listen 127.0.0.1:8765 -ca nvuesim-ca.pem \
//	    [-inventory cluster.yaml [-switch NAME]] [-version 5.9.1] [-ports 32] [-lossy]
//
// With -inventory the simulated switch is the inventory's Cumulus switch
// (-switch names it when there are several): its model's port count
// (SN2700 32, SN4600C 64, …) and its `cumulus:` release. -ports and
// -version, when given, override them; without an inventory they default
// to 32 ports and 5.9.1.
//
// It writes its self-signed certificate to the -ca file (for rdggen's
// --nvue-ca), prints the certificate's SHA-256 (for --nvue-fingerprint),
// and logs in user cumulus with the password of RDGGEN_NVUE_PASSWORD
// (default "cumulus"). With -lossy the switch starts with `qos roce mode
// lossy`. Each request is printed.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"time"

	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/sim/nvuesim"
)

// options reads the command line into the simulator's options.
func options(args []string, stderr io.Writer) (o nvuesim.Options, ca string, err error) {
	fs := flag.NewFlagSet("nvuesim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:8765", "loopback `ADDR:PORT` to listen on")
	caFile := fs.String("ca", "nvuesim-ca.pem", "`FILE` to write the certificate to (PEM)")
	version := fs.String("version", "", "Cumulus Linux `RELEASE` to simulate (default: the inventory switch's cumulus:, else 5.9.1)")
	ports := fs.Int("ports", 0, "front-panel ports swp1-swp`N` (default: the inventory switch model's, else 32)")
	invFile := fs.String("inventory", "", "rdggen inventory `FILE` whose Cumulus switch to simulate")
	swName := fs.String("switch", "", "the inventory switch `NAME` to simulate (default: its only Cumulus switch)")
	lossy := fs.Bool("lossy", false, "start with qos roce mode lossy")
	if err := fs.Parse(args); err != nil {
		return o, "", err
	}
	o = nvuesim.Options{Listen: *listen, Version: *version, Ports: *ports, Password: os.Getenv("RDGGEN_NVUE_PASSWORD")}
	if *invFile != "" {
		src, err := os.ReadFile(*invFile)
		if err != nil {
			return o, "", err
		}
		inv, err := inventory.Load(*invFile, src)
		if err != nil {
			return o, "", err
		}
		var found []inventory.Switch
		for _, sw := range inv.SwitchesOf(inventory.OSCumulus) {
			if *swName == "" || sw.Name == *swName {
				found = append(found, sw)
			}
		}
		switch {
		case len(found) == 0 && *swName != "":
			return o, "", fmt.Errorf("%s has no Cumulus switch named %q", *invFile, *swName)
		case len(found) == 0:
			return o, "", fmt.Errorf("%s has no Cumulus switch", *invFile)
		case len(found) > 1:
			return o, "", fmt.Errorf("%s has %d Cumulus switches: name one with -switch", *invFile, len(found))
		}
		sw := found[0]
		if o.Ports == 0 {
			o.Ports = sw.Ports
		}
		if o.Version == "" {
			o.Version = sw.Cumulus.String()
		}
		o.Hostname = sw.Name
		o.Model = sw.Model
	}
	if *lossy {
		o.Applied = nvuesim.Tree{"qos": nvuesim.Tree{"roce": nvuesim.Tree{"enable": "on", "mode": "lossy"}}}
	}
	return o, *caFile, nil
}

func main() {
	o, ca, err := options(os.Args[1:], os.Stderr)
	if err == flag.ErrHelp {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "nvuesim:", err)
		os.Exit(2)
	}
	s := nvuesim.New(o)
	defer s.Close()
	dir, name := filepath.Split(ca)
	if dir == "" {
		dir = "."
	}
	path, err := s.WriteCA(dir, name)
	if err != nil {
		fmt.Fprintln(os.Stderr, "nvuesim:", err)
		os.Exit(1)
	}
	fmt.Printf("NVUE API of a Cumulus Linux %s switch with ports swp1-swp%d at %s\ncertificate: %s (SHA-256 %s)\n",
		s.Version(), s.Ports(), s.URL, path, s.Fingerprint())
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt)
	seen := 0
	for {
		select {
		case <-stop:
			return
		case <-time.After(200 * time.Millisecond):
		}
		reqs := s.Requests()
		for _, r := range reqs[seen:] {
			rev := ""
			if r.Rev != "" {
				rev = " rev=" + r.Rev
			}
			fmt.Printf("%s /nvue_v1%s%s\n", r.Method, r.Path, rev)
		}
		seen = len(reqs)
	}
}

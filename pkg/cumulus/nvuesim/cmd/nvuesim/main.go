// Command nvuesim runs the NVUE REST API simulator (pkg/cumulus/nvuesim)
// on loopback until interrupted, for trying `rdggen apply --target switch`
// and `rdggen check --target switch` on a Cumulus Linux switch without one:
//
//	go run ./pkg/cumulus/nvuesim/cmd/nvuesim -listen 127.0.0.1:8765 -ca nvuesim-ca.pem [-version 5.9.1] [-lossy]
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
	"os"
	"os/signal"
	"path/filepath"
	"time"

	"github.com/rdggen/rdggen/pkg/cumulus/nvuesim"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:8765", "loopback `ADDR:PORT` to listen on")
	ca := flag.String("ca", "nvuesim-ca.pem", "`FILE` to write the certificate to (PEM)")
	version := flag.String("version", "5.9.1", "Cumulus Linux `RELEASE` to simulate")
	lossy := flag.Bool("lossy", false, "start with qos roce mode lossy")
	flag.Parse()
	o := nvuesim.Options{Listen: *listen, Version: *version, Password: os.Getenv("RDGGEN_NVUE_PASSWORD")}
	if *lossy {
		o.Applied = nvuesim.Tree{"qos": nvuesim.Tree{"roce": nvuesim.Tree{"enable": "on", "mode": "lossy"}}}
	}
	s := nvuesim.New(o)
	defer s.Close()
	dir, name := filepath.Split(*ca)
	if dir == "" {
		dir = "."
	}
	path, err := s.WriteCA(dir, name)
	if err != nil {
		fmt.Fprintln(os.Stderr, "nvuesim:", err)
		os.Exit(1)
	}
	fmt.Printf("NVUE API of a Cumulus Linux %s switch at %s\ncertificate: %s (SHA-256 %s)\n", *version, s.URL, path, s.Fingerprint())
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

package netnstest

import (
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
)

//go:embed testdata/ddp.py
var ddpScript []byte

// DDPScript is where TorchWorkerImage puts testdata/ddp.py: a few steps of
// a tiny model under PyTorch DDP with the gloo backend, whose ranks check
// that they agree on the averaged gradients and print the peers they
// reached (see the script's comment for its arguments).
const DDPScript = "/usr/local/bin/ddp.py"

// torchPaths are what PyTorch's torchrun and a DDP job need from Debian's
// python3-torch (PyTorch 1.13, CPU): the interpreter and its standard
// library, torch and the modules it imports, and setsid (util-linux), with
// which `rdggen run --torchrun` makes each launcher a process group.
var torchPaths = []string{"/usr/bin/python3", "/usr/bin/torchrun", "/usr/bin/setsid", "/usr/bin/timeout",
	"/usr/lib/python3.11", "/usr/lib/python3/dist-packages/torch", "/usr/lib/python3/dist-packages/numpy",
	"/usr/lib/python3/dist-packages/astunparse", "/usr/lib/python3/dist-packages/typing_extensions.py",
	"/usr/lib/python3/dist-packages/six.py",
	// torchrun finds its entry point through the package's metadata.
	"/usr/lib/python3/dist-packages/torch-1.13.0a0+gitunknown.egg-info"}

// torchImagePaths are the files of torchPaths that TorchWorkerImage copies
// into the image (with the libraries ldd finds for them): the programs. The
// rest is in torchHostMounts.
var torchImagePaths = []string{"/usr/bin/python3", "/usr/bin/torchrun", "/usr/bin/setsid", "/usr/bin/timeout"}

// torchHostMounts are the directories of this machine that a container of
// TorchWorkerImage's image gets bound read-only (HostMountsFile): /usr/lib,
// with Python's standard library (python3.11), Debian's Python packages
// (python3/dist-packages: torch, numpy and what they import, torch's
// egg-info) and the shared libraries torch loads, some with dlopen
// (libtorch1.13's libtorch_cpu.so in x86_64-linux-gnu, libgloo0's
// libgloo.so.0 in /usr/lib itself); Python's site configuration; and the
// links of update-alternatives, through which some libraries are found
// (libblas.so.3 is OpenBLAS's).
var torchHostMounts = []string{"/usr/lib", "/etc/python3.11", "/etc/alternatives"}

// RequireTorch is Unavailable unless Debian's python3-torch is installed
// (torchrun and the torch module of /usr/bin/python3).
func RequireTorch(t TB) {
	t.Helper()
	for _, p := range torchPaths {
		if _, err := os.Stat(p); err != nil {
			Unavailable(t, "netnstest: %s not found (install python3-torch)", p)
		}
	}
	torchImport.Do(func() {
		out, err := exec.Command("/usr/bin/python3", "-c", "import torch.distributed.run").CombinedOutput()
		if err != nil {
			torchImport.err = fmt.Sprintf("%v %s", err, out)
		}
	})
	if torchImport.err != "" {
		Unavailable(t, "netnstest: python3 cannot import torch (install python3-torch): %s", torchImport.err)
	}
}

// torchImport is RequireTorch's import of torch, tried once per process
// (a second of CPU).
var torchImport struct {
	sync.Once
	err string
}

// TorchWorkerImage is WorkerImage (sshd, Open MPI, prog) with PyTorch: the
// programs python3, torchrun, setsid and timeout, the DDP job at DDPScript,
// and at HostMountsFile the directories of torchHostMounts, which the hosts'
// runtime binds read-only into each container of the image: torch is not
// copied (about 600 MB with its libraries), the container sees this
// machine's own, as nvidia-container-toolkit shows a container the host's
// driver libraries. The image is a few MB more than WorkerImage's, built
// once per process (callers must not modify it). Needs RequireMPI and
// RequireTorch, and the image runs only on a Cluster with Options.Docker.
func TorchWorkerImage(t TB, prog string) []byte {
	t.Helper()
	RequireTorch(t)
	return cachedImage(t, prog, torchImagePaths,
		ImageFile{Path: DDPScript, Mode: 0o755, Data: ddpScript},
		ImageFile{Path: HostMountsFile, Mode: 0o644, Data: []byte(strings.Join(torchHostMounts, "\n") + "\n")})
}

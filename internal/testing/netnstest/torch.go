package netnstest

import (
	_ "embed"
	"os"
	"os/exec"
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

// RequireTorch is Unavailable unless Debian's python3-torch is installed
// (torchrun and the torch module of /usr/bin/python3).
func RequireTorch(t TB) {
	t.Helper()
	for _, p := range torchPaths {
		if _, err := os.Stat(p); err != nil {
			Unavailable(t, "netnstest: %s not found (install python3-torch)", p)
		}
	}
	if out, err := exec.Command("/usr/bin/python3", "-c", "import torch.distributed.run").CombinedOutput(); err != nil {
		Unavailable(t, "netnstest: python3 cannot import torch (install python3-torch): %v %s", err, out)
	}
}

// TorchWorkerImage is WorkerImage (sshd, Open MPI, prog) with PyTorch:
// python3, torchrun, torch with every library it loads, setsid, and the DDP
// job at DDPScript. It is large (about 600 MB: torch's libraries alone are
// most of it). Needs RequireMPI and RequireTorch.
func TorchWorkerImage(t TB, prog string) []byte {
	t.Helper()
	RequireTorch(t)
	return buildImage(t, prog, torchPaths, ImageFile{Path: DDPScript, Mode: 0o755, Data: ddpScript})
}

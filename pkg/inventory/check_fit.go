package inventory

// Defaults that cannot fit the hardware: the guide's values (Docker 18.09,
// a CUDA 9.0 Horovod image, the management NIC eno0) stay the defaults of
// its reference cluster, but an inventory whose GPUs or guests they cannot
// serve gets a warning naming the key and the value that fits
// (docs/rules.md#defaults-that-do-not-fit-the-hardware).

import (
	"fmt"
	"regexp"
	"slices"
)

// fit warns about docker.version and horovod.image where the inventory's
// GPUs need newer ones. It runs once the hosts are resolved.
func (c *checker) fit() {
	c.dockerFit()
	c.imageFit()
}

// gpuAt is one GPU of the inventory with the host that has it.
type gpuAt struct {
	host   *Host
	model  string
	family GPUFamily
}

// where names the GPU and its host for a warning: "A100-PCIE-40GB
// (hosts[0] trn1, compute capability 8.0)".
func (g gpuAt) where() string {
	return fmt.Sprintf("%s (hosts[%d] %s, compute capability %s)", g.model, g.host.Index, g.host.Name, g.family.CC)
}

// knownGPUs yields the inventory's GPUs of known families, in file order.
func (c *checker) knownGPUs(yield func(gpuAt) bool) {
	for i := range c.inv.Hosts {
		h := &c.inv.Hosts[i]
		for _, g := range h.GPUs {
			if f, ok := LookupGPUFamily(g.Model); ok {
				if !yield(gpuAt{h, g.Model, f}) {
					return
				}
			}
		}
	}
}

// unset is " (the default, the guide's)" when the inventory leaves the key
// out, so that a warning about a value nobody wrote says where it came from.
func unset(written bool) string {
	if written {
		return ""
	}
	return " (the default, the guide's)"
}

// dockerFit warns when docker.version is before 19.03, so the workers get
// their GPUs through the nvidia runtime of nvidia-docker2
// (horovod.WorkerRunArgs), while a GPU is of compute capability ModernGPUCC or
// later: the NVIDIA driver those GPUs need (R450 and later for the A100,
// 2020) came after NVIDIA deprecated nvidia-docker2 with Docker 19.03
// (NVIDIA/nvidia-docker README, 2019); nvidia-docker2's last release came
// with the NVIDIA Container Toolkit 1.14.0 and 1.15.0 removed the package
// (the toolkit's release notes); and Docker before 19.03 has no packages
// for Ubuntu 20.04 or later (the first, 19.03.9: docker/roadmap#83) and
// none after 18.09.9 (docker/for-linux#898). The value that fits is 19.03
// or later, where the workers start with --gpus all through the toolkit.
func (c *checker) dockerFit() {
	d := c.inv.Docker
	if d.Version.IsZero() || d.Version.AtLeast(19, 3) {
		return
	}
	for g := range c.knownGPUs {
		if g.family.CC.less(ModernGPUCC) {
			continue
		}
		written := c.raw != nil && c.raw.Docker != nil && c.raw.Docker.Version != nil
		c.warnf("docker.version", "%s%s predates --gpus (Docker 19.03), so the workers use --runtime=nvidia of nvidia-docker2, deprecated by NVIDIA since 19.03 and last shipped with Container Toolkit 1.14.0, while %s came later (drivers from R450, 2020). Set docker.version to the VMs' engine, 19.03 or later (e.g. \"24.0\"), for --gpus all",
			d.Version, unset(written), g.where())
		return
	}
}

// imageFit warns when horovod.image is a known image (ImageCUDA) built on a
// CUDA older than a GPU's MinCUDA: the image's libraries carry no native
// code for that GPU, which then runs them only through the driver's
// just-in-time compilation of PTX, where they carry PTX at all. The GPU
// that needs the newest CUDA is named. An image rdggen does not know is not
// judged.
func (c *checker) imageFit() {
	image := c.inv.Horovod.Image
	have, ok := ImageCUDA(image)
	if !ok {
		return
	}
	var worst gpuAt
	var need Version
	for g := range c.knownGPUs {
		if v, ok := g.family.CC.MinCUDA(); ok && (need.IsZero() || need.Before(v)) {
			worst, need = g, v
		}
	}
	if need.IsZero() || !have.Before(need) {
		return
	}
	fits := fmt.Sprintf("; no Horovod image is (the last, %s, has CUDA %s)", NewestHorovodImage, imageCUDA[NewestHorovodImage])
	if v := imageCUDA[NewestHorovodImage]; !v.Before(need) {
		fits = fmt.Sprintf(", e.g. %s (CUDA %s)", NewestHorovodImage, v)
	}
	written := c.raw != nil && c.raw.Horovod != nil && c.raw.Horovod.Image != nil
	c.warnf("horovod.image", "%s%s is built on CUDA %s, which has no native code for %s; native from CUDA %s: only PTX compiled just in time could run there. Set horovod.image to an image built on CUDA %s or later%s",
		image, unset(written), have, worst.where(), need, need, fits)
}

// reOnboardName is a network interface name of systemd's onboard scheme,
// en + o + the firmware's onboard index (systemd.net-naming-scheme(7),
// ID_NET_NAME_ONBOARD).
var reOnboardName = regexp.MustCompile(`^eno[0-9]+$`)

// mgmtNameFit warns, once per template (at tp), when a template that runs
// cloud-init names the management adapter by systemd's onboard scheme
// (eno<index>, the guide's bare-metal eno0 by default): a vSphere guest's
// adapter (vmxnet3, e1000e) has no usable onboard index, so Ubuntu 18.04
// and later name it by its PCI hot-plug slot, ens<slot> (ens160, ens192,
// ens224 after the VMX's ethernetN.pciSlotNumber). apply's network config
// matches the adapter by its MAC and renames it (set-name), so the clone
// comes up, as eno0; the tree's vms/<vm>/network-config matches by name and
// configures no interface of such a guest.
func (c *checker) mgmtNameFit(h *Host, tp string) {
	t := h.Template
	if t == nil || !t.CloudInit || !reOnboardName.MatchString(t.MgmtInterface) {
		return
	}
	path := tp + ".mgmt_interface"
	if slices.ContainsFunc(c.inv.Warnings, func(f Finding) bool { return f.Path == path }) {
		return
	}
	c.warnf(path, "%s%s is an onboard name (systemd.net-naming-scheme(7)) that a vSphere guest's adapter does not get: Ubuntu 18.04+ names it by PCI slot (ens160, ens192). apply renames the clone's adapter to %s by its MAC, but vms/<vm>/network-config matches %s by name and configures nothing. Set mgmt_interface to the template's own name (ip -br link; ens192 in most vSphere templates)",
		t.MgmtInterface, unset(c.mgmtSet[tp]), t.MgmtInterface, t.MgmtInterface)
}

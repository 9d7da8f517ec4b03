package inventory

// switchPorts is the front-panel port count of each Spectrum model, ports
// 1/1 … 1/N (docs/rules.md#models-and-ports, from the mlxsw product table).
var switchPorts = map[string]int{
	"SN2010":  22,
	"SN2100":  16,
	"SN2410":  56,
	"SN2700":  32,
	"SN2740":  32,
	"SN3420":  60,
	"SN3700":  32,
	"SN3700C": 32,
	"SN3800":  64,
	"SN4600C": 64,
	"SN4600":  64,
	"SN4700":  32,
	"SN5400":  64,
	"SN5600":  64,
}

// switchMaxSpeedGbps is the fastest Ethernet speed, Gb/s, a front-panel port
// of each Spectrum model runs at (docs/rules.md#models-and-ports): Spectrum
// (SN2000) ports run at most 100 GbE (NVIDIA Spectrum SN2000 1U Switch Systems
// Hardware User Manual, https://docs.nvidia.com/networking/display/sn2000pub);
// of Spectrum-2 (SN3000) the SN3700 runs 200 GbE, the SN3700C, SN3800 and
// SN3420 100 GbE (NVIDIA Spectrum-2 SN3000 1U and 2U Switch Systems Hardware
// User Manual, https://docs.nvidia.com/networking/display/sn3000um); of
// Spectrum-3 (SN4000) the SN4600C runs 100 GbE, the SN4600 200 GbE and the
// SN4700 400 GbE (NVIDIA Spectrum-3 SN4000 1U and 2U Switch Systems Hardware
// User Manual, https://docs.nvidia.com/networking/display/SN4000). The mlxsw
// wiki's product table (github.com/Mellanox/mlxsw/wiki) says the same of the
// SN2000 and SN3000 models. Of Spectrum-4 (SN5000) the SN5400 has 64 ports
// of 400 GbE and the SN5600 64 OSFP ports of 800 GbE (NVIDIA Spectrum-4
// SN5000 Switch Systems Hardware User Manual, "Introduction",
// https://docs.nvidia.com/networking/display/sn5000, and the SN5600 data
// sheet); their ports break out into 2 or 4 lanes (Port.Lane) at half or a
// quarter of the speed (Switch.PortSpeedGbps).
var switchMaxSpeedGbps = map[string]int{
	"SN2010":  100,
	"SN2100":  100,
	"SN2410":  100,
	"SN2700":  100,
	"SN2740":  100,
	"SN3420":  100,
	"SN3700":  200,
	"SN3700C": 100,
	"SN3800":  100,
	"SN4600C": 100,
	"SN4600":  200,
	"SN4700":  400,
	"SN5400":  400,
	"SN5600":  800,
}

// nicMaxSpeedGbps is the fastest Ethernet speed, Gb/s, a port of each
// ConnectX model runs at (docs/rules.md#models-and-ports; NVIDIA's adapter
// card user manuals, "Introduction" and "Specifications"): ConnectX-4 EN up
// to 100 GbE (https://docs.nvidia.com/networking/display/ConnectX4EN),
// ConnectX-4 Lx EN up to 50 GbE (1/10/25/40/50,
// https://docs.nvidia.com/networking/display/CX4LxEN/Introduction),
// ConnectX-5 and ConnectX-5 Ex up to 100 GbE
// (https://docs.nvidia.com/networking/display/connectx5enocp2/introduction),
// ConnectX-6 EN up to 200 GbE
// (https://docs.nvidia.com/networking/display/ConnectX6EN/Introduction) and
// ConnectX-6 Dx up to 200 GbE (a single port of 200 or two of 100,
// https://docs.nvidia.com/networking/display/ConnectX6DxENOCP3/Interfaces),
// ConnectX-7 up to 400 GbE
// (https://docs.nvidia.com/networking/display/connectx7vpi/introduction),
// BlueField-3 up to 400 GbE, used here in NIC mode only, its Arm cores
// not in the data path (NVIDIA BlueField-3 DPU/SuperNIC user guide,
// "Introduction" and "Modes of Operation",
// https://docs.nvidia.com/networking/display/bf3dpu), and ConnectX-8 up to
// 800 GbE (https://docs.nvidia.com/networking/display/connectx8supernic).
var nicMaxSpeedGbps = map[string]int{
	"ConnectX-4":    100,
	"ConnectX-4 Lx": 50,
	"ConnectX-5":    100,
	"ConnectX-5 Ex": 100,
	"ConnectX-6":    200,
	"ConnectX-6 Dx": 200,
	"ConnectX-7":    400,
	"BlueField-3":   400,
	"ConnectX-8":    800,
}

// nicMaxVFs is the largest SR-IOV VF count per port that the ESXi nmlx5_core
// driver accepts for each ConnectX model (max_vfs; NVIDIA's native ESXi driver
// manual, "Module Parameters"; the firmware's NUM_OF_VFS must be at least as large).
// The range is the driver parameter's, not a model's: ConnectX-7,
// BlueField-3 (NIC mode) and ConnectX-8 get the same 127, which NVIDIA's
// SR-IOV page states for ConnectX ports ("up to 127 virtual instances …
// for each port"); docs/rules.md#models-and-ports says which rows rest on it.
var nicMaxVFs = map[string]int{
	"ConnectX-4":    127,
	"ConnectX-4 Lx": 127,
	"ConnectX-5":    127,
	"ConnectX-5 Ex": 127,
	"ConnectX-6":    127,
	"ConnectX-6 Dx": 127,
	"ConnectX-7":    127,
	"BlueField-3":   127,
	"ConnectX-8":    127,
}

// Defaults for keys the inventory may leave out (docs/inventory.md#reference-cluster and §4).
const (
	DefaultDSCP          = 26
	DefaultPriority      = 3
	DefaultCNPDSCP       = 48
	DefaultCNPPriority   = 6
	DefaultECNMinKB      = 150
	DefaultECNMaxKB      = 1500
	DefaultBufferPercent = 50
	DefaultDockerVersion = "18.09"
	DefaultPool          = "172.16.0.0/16"
	DefaultPrefix        = 24
	DefaultDataMTU       = 1500 // the guide's; docker.mtu follows it when unset
	DefaultSSHPort       = 12345
	DefaultImage         = "horovod/horovod:0.16.0-tf1.12.0-torch1.0.0-mxnet1.4.0-py3.5"
	DefaultPortGroup     = "VM Network"
	DefaultHCA           = "mlx5_0"
	DefaultRdzvPort      = 29400 // torchrun's c10d rendezvous port (PyTorch's torchrun docs)
	MaxNprocPerNode      = 256   // processes per worker torchrun starts; a bound, no vendor's
	DefaultNICSpeedGbps  = 100   // the guide's 100 GbE ConnectX-5 and SN2700; a slower NIC model's maximum when lower
)

// ethernetSpeeds are the Ethernet data rates a ConnectX port and a Spectrum
// switch port run at, Gb/s (IEEE 802.3: 1, 10, 25, 40, 50, 100, 200, 400 and
// 800 GbE).
var ethernetSpeeds = []int{1, 10, 25, 40, 50, 100, 200, 400, 800}

// Bounds on GPUs: vSphere attaches at most 128 PCI passthrough devices to a
// VM (ESXi 8.0 U2 with hardware version 21; fewer on older hosts, which
// apply checks against the host it reads: Broadcom KB 309986,
// https://knowledge.broadcom.com/external/article/309986); no GPU has more
// than 1 TB of memory or BAR1, and the bound keeps the 64-bit MMIO
// arithmetic far from overflow.
const (
	// MinDataMTU and MaxDataMTU bound data_mtu: IPv6's minimum link MTU, and
	// vSphere's largest for a standard or distributed switch (9000 bytes).
	MinDataMTU = 1280
	MaxDataMTU = 9000

	MaxGPUsPerVM   = 128
	MaxGPUMemoryGB = 1024
)

// DefaultDNS are the containers' DNS servers when docker.dns is unset (the guide's).
var DefaultDNS = []string{"8.8.8.8", "8.8.4.4"}

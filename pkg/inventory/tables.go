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
}

// nicMaxVFs is the largest SR-IOV VF count per port that the ESXi nmlx5_core
// driver accepts for each ConnectX model (max_vfs; NVIDIA's native ESXi driver
// manual, "Module Parameters"; the firmware's NUM_OF_VFS must be at least as large).
var nicMaxVFs = map[string]int{
	"ConnectX-4":    127,
	"ConnectX-4 Lx": 127,
	"ConnectX-5":    127,
	"ConnectX-5 Ex": 127,
	"ConnectX-6":    127,
	"ConnectX-6 Dx": 127,
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
	DefaultNICSpeedGbps  = 100 // the guide's 100 GbE ConnectX-5 and SN2700
)

// ethernetSpeeds are the Ethernet data rates a ConnectX port and a Spectrum
// switch port run at, Gb/s (IEEE 802.3: 1, 10, 25, 40, 50, 100, 200, 400 and
// 800 GbE).
var ethernetSpeeds = []int{1, 10, 25, 40, 50, 100, 200, 400, 800}

// Bounds on GPUs: vSphere attaches at most 16 PCI passthrough devices to a
// VM (vSphere 7.0 docs, "PCI devices"); no GPU has more than 1 TB of memory or
// BAR1, and the bound keeps the 64-bit MMIO arithmetic far from overflow.
const (
	// MinDataMTU and MaxDataMTU bound data_mtu: IPv6's minimum link MTU, and
	// vSphere's largest for a standard or distributed switch (9000 bytes).
	MinDataMTU = 1280
	MaxDataMTU = 9000

	MaxGPUsPerVM   = 16
	MaxGPUMemoryGB = 1024
)

// DefaultDNS are the containers' DNS servers when docker.dns is unset (the guide's).
var DefaultDNS = []string{"8.8.8.8", "8.8.4.4"}

package inventory

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// The guide's defaults on today's GPUs (the reproducer, kept in
// testdata/fit): docker.version 18.09, the CUDA 9.0 Horovod image and the
// template's eno0 each get a warning naming the key, where it stands, and
// the value that fits; the inventory stays valid.
func TestFitWarningsReproducer(t *testing.T) {
	src, err := os.ReadFile("testdata/fit/a100-guide-defaults.yaml")
	if err != nil {
		t.Fatal(err)
	}
	inv, err := Load("a100.yaml", src)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"a100.yaml:15:5: defaults.template.mgmt_interface: eno0 (the default, the guide's) is an onboard name (systemd.net-naming-scheme(7)) that a vSphere guest's adapter does not get: Ubuntu 18.04+ names it by PCI slot (ens160, ens192). apply renames the clone's adapter to eno0 by its MAC, but vms/<vm>/network-config matches eno0 by name and configures nothing. Set mgmt_interface to the template's own name (ip -br link; ens192 in most vSphere templates)",
		`a100.yaml:4:1: docker.version: 18.09 (the default, the guide's) predates --gpus (Docker 19.03), so the workers use --runtime=nvidia of nvidia-docker2, deprecated by NVIDIA since 19.03 and last shipped with Container Toolkit 1.14.0, while A100-PCIE-40GB (hosts[0] gpu1, compute capability 8.0) came later (drivers from R450, 2020). Set docker.version to the VMs' engine, 19.03 or later (e.g. "24.0"), for --gpus all`,
		"a100.yaml:4:1: horovod.image: horovod/horovod:0.16.0-tf1.12.0-torch1.0.0-mxnet1.4.0-py3.5 (the default, the guide's) is built on CUDA 9.0, which has no native code for A100-PCIE-40GB (hosts[0] gpu1, compute capability 8.0); native from CUDA 11.0: only PTX compiled just in time could run there. Set horovod.image to an image built on CUDA 11.0 or later, e.g. horovod/horovod:0.28.1 (CUDA 11.3)",
	}
	if len(inv.Warnings) != len(want) {
		t.Fatalf("%d warnings, want %d:\n%v", len(inv.Warnings), len(want), inv.Warnings)
	}
	for i, w := range inv.Warnings {
		if len(w.Rule) > maxRule {
			t.Errorf("warning %d is %d bytes, more than a finding prints (%d)", i, len(w.Rule), maxRule)
		}
		if w.String() != want[i] {
			t.Errorf("warning %d:\n%s\nwant\n%s", i, w, want[i])
		}
	}
	// The values the warnings propose silence them.
	fixed := strings.Replace(string(src), "defaults:\n", "docker: {version: \"24.0\"}\nhorovod: {image: horovod/horovod:0.28.1}\ndefaults:\n", 1)
	fixed = strings.Replace(fixed, "    name: ubuntu-2204-gpu\n", "    name: ubuntu-2204-gpu\n    mgmt_interface: ens192\n", 1)
	if inv, err := Load("a100.yaml", []byte(fixed)); err != nil || len(inv.Warnings) != 0 {
		t.Errorf("with the proposed values: %v, warnings %v", err, inv.Warnings)
	}
}

// Each rule on its own: which GPUs, images, versions and names warn, and
// which do not; Build warns alike (TestWarnings' check).
func TestFitWarnings(t *testing.T) {
	gpu := func(model string, mem int) func(string) string {
		return func(s string) string {
			return strings.Replace(s, "{model: V100-PCIE-16GB, memory_gb: 16}", "{model: "+model+", memory_gb: "+strconv.Itoa(mem)+"}", 1)
		}
	}
	docker := func(v string) func(string) string {
		return func(s string) string {
			return strings.Replace(s, "  mtu: 1500\n", "  mtu: 1500\n  version: \""+v+"\"\n", 1)
		}
	}
	image := func(i string) func(string) string {
		return func(s string) string { return strings.Replace(s, "docker:\n", "horovod: {image: "+i+"}\ndocker:\n", 1) }
	}
	tmpl := func(extra string) func(string) string {
		return func(s string) string {
			return strings.Replace(s, "  nic: {model: ConnectX-5, pf: vmnic4, vfs: 8}\n", "  nic: {model: ConnectX-5, pf: vmnic4, vfs: 8}\n  template: {name: t1"+extra+"}\n", 1)
		}
	}
	const newDocker, newImage = "24.0", "horovod/horovod:0.28.1"
	for _, tc := range []struct {
		name  string
		edits []func(string) string
		want  []string // path: rule prefix
	}{
		{"V100 with the guide's defaults", nil, nil},
		{"T4: CUDA 9.0's sm_70 code runs on 7.5", []func(string) string{gpu("T4", 16)}, nil},
		{"A10 with Docker 18.09", []func(string) string{gpu("A10", 24), image(newImage)},
			[]string{"docker.version: 18.09 (the default, the guide's) predates --gpus (Docker 19.03)"}},
		{"A100 with Docker 18.09 written", []func(string) string{gpu("A100-PCIE-40GB", 40), docker("18.09"), image(newImage)},
			[]string{"docker.version: 18.09 predates --gpus (Docker 19.03), so the workers use --runtime=nvidia of nvidia-docker2"}},
		{"A100 with Docker 19.03 and the newest image", []func(string) string{gpu("A100-PCIE-40GB", 40), docker("19.03"), image(newImage)}, nil},
		{"A100 with the default image", []func(string) string{gpu("A100-PCIE-40GB", 40), docker(newDocker)},
			[]string{"horovod.image: horovod/horovod:0.16.0-tf1.12.0-torch1.0.0-mxnet1.4.0-py3.5 (the default, the guide's) is built on CUDA 9.0, which has no native code for A100-PCIE-40GB (hosts[0] a, compute capability 8.0); native from CUDA 11.0"}},
		{"the default image written with docker.io/", []func(string) string{gpu("NVIDIA A100-SXM4-80GB", 80), docker(newDocker), image("docker.io/" + DefaultImage)},
			[]string{"horovod.image: docker.io/horovod/horovod:0.16.0-tf1.12.0-torch1.0.0-mxnet1.4.0-py3.5 is built on CUDA 9.0"}},
		{"L40S runs 8.0 code: CUDA 11.3 fits", []func(string) string{gpu("L40S", 48), docker(newDocker), image(newImage)}, nil},
		{"L40S with CUDA 9.0", []func(string) string{gpu("L40S", 48), docker(newDocker)},
			[]string{"horovod.image: horovod/horovod:0.16.0-tf1.12.0-torch1.0.0-mxnet1.4.0-py3.5 (the default, the guide's) is built on CUDA 9.0, which has no native code for L40S (hosts[0] a, compute capability 8.9); native from CUDA 11.0"}},
		{"H100 with the newest Horovod image", []func(string) string{gpu("H100-PCIE-80GB", 80), docker(newDocker), image(newImage)},
			[]string{"horovod.image: horovod/horovod:0.28.1 is built on CUDA 11.3, which has no native code for H100-PCIE-80GB (hosts[0] a, compute capability 9.0); native from CUDA 11.8: only PTX compiled just in time could run there. Set horovod.image to an image built on CUDA 11.8 or later; no Horovod image is (the last, horovod/horovod:0.28.1, has CUDA 11.3)"}},
		{"H100 with an image rdggen does not know", []func(string) string{gpu("H100-PCIE-80GB", 80), docker(newDocker), image("nvcr.io/nvidia/pytorch:24.01-py3")}, nil},
		{"a GPU rdggen does not know", []func(string) string{gpu("B200", 192)}, nil},
		{"template with eno0 by default", []func(string) string{tmpl("")},
			[]string{"defaults.template.mgmt_interface: eno0 (the default, the guide's) is an onboard name"}},
		{"template with eno1 written", []func(string) string{tmpl(", mgmt_interface: eno1")},
			[]string{"defaults.template.mgmt_interface: eno1 is an onboard name (systemd.net-naming-scheme(7)) that a vSphere guest's adapter does not get: Ubuntu 18.04+ names it by PCI slot (ens160, ens192). apply renames the clone's adapter to eno1 by its MAC, but vms/<vm>/network-config matches eno1 by name"}},
		{"template with ens192", []func(string) string{tmpl(", mgmt_interface: ens192")}, nil},
		{"template without cloud-init", []func(string) string{tmpl(", cloud_init: false")}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := baseYAML
			for _, e := range tc.edits {
				src = e(src)
			}
			inv, err := Load("mini.yaml", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			if len(inv.Warnings) != len(tc.want) {
				t.Fatalf("%d warnings, want %d:\n%v", len(inv.Warnings), len(tc.want), inv.Warnings)
			}
			for i, w := range inv.Warnings {
				if got := w.Path + ": " + w.Rule; !strings.HasPrefix(got, tc.want[i]) {
					t.Errorf("warning %d:\n%s\nwant prefix\n%s", i, got, tc.want[i])
				}
				if len(w.Rule) > maxRule {
					t.Errorf("warning %d is %d bytes, more than a finding prints (%d)", i, len(w.Rule), maxRule)
				}
			}
			var s Spec
			if err := yaml.Unmarshal([]byte(src), &s); err != nil {
				t.Fatal(err)
			}
			built, err := Build("mini.yaml", &s)
			if err != nil {
				t.Fatal(err)
			}
			if len(built.Warnings) != len(inv.Warnings) {
				t.Fatalf("Build: %d warnings, Load %d", len(built.Warnings), len(inv.Warnings))
			}
			for i, w := range built.Warnings {
				if l := inv.Warnings[i]; w.Path != l.Path || w.Rule != l.Rule {
					t.Errorf("Build's warning %v, Load's %v", w, l)
				}
			}
		})
	}
}

// The embedded reference cluster (the guide's V100s, Docker 18.09, the
// TensorFlow 1.12 image, no template) stays warning-free.
func TestReferenceHasNoWarnings(t *testing.T) {
	if w := Reference().Warnings; len(w) != 0 {
		t.Errorf("the reference cluster warns: %v", w)
	}
}

// The tables behind the warnings: compute capabilities, the first CUDA of
// each and the oldest whose code runs there, the images' CUDA.
func TestGPUGenerations(t *testing.T) {
	for _, tc := range []struct {
		model        string
		arch, cc, sm string
		first, min   string
	}{
		{"Tesla P100-PCIE-16GB", ArchPascal, "6.0", "sm_60", "8.0", "8.0"},
		{"Tesla P40", ArchPascal, "6.1", "sm_61", "8.0", "8.0"},
		{"Tesla V100-PCIE-16GB", ArchVolta, "7.0", "sm_70", "9.0", "9.0"},
		{"Tesla T4", ArchTuring, "7.5", "sm_75", "10.0", "9.0"},
		{"NVIDIA A100-SXM4-80GB", ArchAmpere, "8.0", "sm_80", "11.0", "11.0"},
		{"A30", ArchAmpere, "8.0", "sm_80", "11.0", "11.0"},
		{"A10", ArchAmpere, "8.6", "sm_86", "11.1", "11.0"},
		{"A40", ArchAmpere, "8.6", "sm_86", "11.1", "11.0"},
		{"L40S", ArchAda, "8.9", "sm_89", "11.8", "11.0"},
		{"L4", ArchAda, "8.9", "sm_89", "11.8", "11.0"},
		{"H100-SXM5-80GB", ArchHopper, "9.0", "sm_90", "11.8", "11.8"},
		{"NVIDIA H100 NVL", ArchHopper, "9.0", "sm_90", "11.8", "11.8"},
		{"H200", ArchHopper, "9.0", "sm_90", "11.8", "11.8"},
	} {
		f, ok := LookupGPUFamily(tc.model)
		if !ok {
			t.Errorf("%s: not known", tc.model)
			continue
		}
		first, ok1 := f.CC.FirstCUDA()
		min, ok2 := f.CC.MinCUDA()
		if f.Arch != tc.arch || f.CC.String() != tc.cc || f.CC.SM() != tc.sm || !ok1 || first.String() != tc.first || !ok2 || min.String() != tc.min {
			t.Errorf("%s: %s %s %s, CUDA %s (%v) native from %s (%v); want %s %s %s, %s, %s", tc.model, f.Arch, f.CC, f.CC.SM(), first, ok1, min, ok2, tc.arch, tc.cc, tc.sm, tc.first, tc.min)
		}
	}
	if _, ok := LookupGPUFamily("B200"); ok {
		t.Error("B200 is not in the table")
	}
	if _, ok := (ComputeCapability{10, 0}).MinCUDA(); ok {
		t.Error("10.0 has no CUDA in the table")
	}
	for image, want := range map[string]string{DefaultImage: "9.0", "horovod/horovod:0.22.1": "11.2", "horovod/horovod:0.25.0": "11.2", "horovod/horovod:0.26.0": "11.3", NewestHorovodImage: "11.3", "docker.io/horovod/horovod:0.28.1": "11.3"} {
		if v, ok := ImageCUDA(image); !ok || v.String() != want {
			t.Errorf("%s: CUDA %s (%v), want %s", image, v, ok, want)
		}
	}
	for _, image := range []string{"horovod/horovod:latest", "horovod/horovod:0.22.0", "nvcr.io/nvidia/pytorch:24.01-py3", "horovod/horovod:0.28.1@sha256:" + strings.Repeat("0", 64)} {
		if v, ok := ImageCUDA(image); ok {
			t.Errorf("%s: CUDA %s, but rdggen does not know the image", image, v)
		}
	}
}

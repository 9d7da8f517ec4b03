package horovod

import (
	"strings"

	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/nccltopo"
)

// imageNCCL is the NCCL each known Horovod image carries, from the
// Dockerfile of the Horovod release that pushed it (github.com/horovod/
// horovod), the same images inventory.ImageCUDA knows:
//
//   - the reference image, 0.16.0 with TensorFlow 1.12: Dockerfile at tag
//     v0.16.0 (commit 34529a8b), ENV NCCL_VERSION=2.4.2-1+cuda9.0;
//   - horovod/horovod:0.22.1 … 0.25.0, built by the CI from
//     docker/horovod/Dockerfile with its defaults: ARG
//     NCCL_VERSION=2.8.4-1+cuda11.2 (tags v0.22.1 … v0.25.0);
//   - horovod/horovod:0.26.0 … 0.28.1: ARG NCCL_VERSION=2.9.9-1+cuda11.3
//     (tags v0.26.0 … v0.28.1, the last release).
//
// NVIDIA's NGC images (nvcr.io/nvidia/pytorch:YY.MM-py3 …) are not here:
// their NCCL is listed in NVIDIA's per-release notes, which rdggen does not
// carry; an image not here gets no rail labels (RailEnv).
var imageNCCL = map[string]nccltopo.Version{
	inventory.DefaultImage:   {Major: 2, Minor: 4, Patch: 2},
	"horovod/horovod:0.22.1": {Major: 2, Minor: 8, Patch: 4},
	"horovod/horovod:0.23.0": {Major: 2, Minor: 8, Patch: 4},
	"horovod/horovod:0.24.0": {Major: 2, Minor: 8, Patch: 4},
	"horovod/horovod:0.24.1": {Major: 2, Minor: 8, Patch: 4},
	"horovod/horovod:0.24.2": {Major: 2, Minor: 8, Patch: 4},
	"horovod/horovod:0.24.3": {Major: 2, Minor: 8, Patch: 4},
	"horovod/horovod:0.25.0": {Major: 2, Minor: 8, Patch: 4},
	"horovod/horovod:0.26.0": {Major: 2, Minor: 9, Patch: 9},
	"horovod/horovod:0.26.1": {Major: 2, Minor: 9, Patch: 9},
	"horovod/horovod:0.27.0": {Major: 2, Minor: 9, Patch: 9},
	"horovod/horovod:0.28.0": {Major: 2, Minor: 9, Patch: 9},
	"horovod/horovod:0.28.1": {Major: 2, Minor: 9, Patch: 9},
}

// ImageNCCL is the NCCL release a known Horovod image carries (imageNCCL;
// "docker.io/" before the name is the same image), false for an image
// rdggen does not know. RailEnv labels NCCL_IB_HCA's entries with their
// rails only when this says NCCL 2.30.7 or later (nccltopo.RailLabels).
func ImageNCCL(image string) (nccltopo.Version, bool) {
	v, ok := imageNCCL[strings.TrimPrefix(image, "docker.io/")]
	return v, ok
}

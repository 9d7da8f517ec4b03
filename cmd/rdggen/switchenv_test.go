package main

// The switch OSes' variables, as the tests set them (internal/switchos
// declares them: onyx.go, cumulus.go; docs/credentials.md lists them).
const (
	envSwitchUser     = "RDGGEN_SWITCH_USER"
	envSwitchPassword = "RDGGEN_SWITCH_PASSWORD"
	envNVUEPassword   = "RDGGEN_NVUE_PASSWORD"
	envNVUECA         = "RDGGEN_NVUE_CA"
)

# validate_daemon CANDIDATE (internal/engines/hostapply, --docker-validate): check a
# new daemon.json before it is installed. Set by Go before it:
#   validate_mode  "none" (skip, and say so), "auto" (dockerd itself) or a
#                  command line, run as sh -c "$validate_mode" rdggen-validate CANDIDATE
# auto: dockerd >= 23 has --validate; older ones load the file before their
# root check, so running them as nobody reports file errors without starting
# anything. nobody may not open the candidate (a hardened daemon.json is
# 0600, and so is its staged copy): it reads it from a pipe that nobody's own
# shell makes, fed from a descriptor root opened (a pipe root made would be
# root's, and /dev/stdin would not open).
validate_daemon() {
	case $validate_mode in
	none) echo "dockerd check skipped (--docker-validate none); checked by rdggen only"; return 0;;
	auto) ;;
	*) sh -c "$validate_mode" rdggen-validate "$1"; return;;
	esac
	command -v dockerd >/dev/null 2>&1 || { echo "dockerd is not installed: checked by rdggen only"; return 0; }
	out=$(dockerd --validate --config-file "$1" 2>&1) && { echo "$out"; return 0; }
	case $out in
	*"unknown flag: --validate"*)
		command -v setpriv >/dev/null 2>&1 || { echo "dockerd has no --validate and setpriv is missing: checked by rdggen only"; return 0; }
		out=$(timeout 30 setpriv --reuid=65534 --regid=65534 --clear-groups sh -c 'cat <&3 | dockerd --config-file /dev/stdin' 3<"$1" 2>&1)
		case $out in *"unable to configure the Docker daemon"*) echo "$out"; return 1;; esac
		echo "dockerd (no --validate) loads the file as nobody without complaint"; return 0;;
	esac
	echo "$out"; return 1
}

# The workers' changes (internal/engines/workerapply, applyScript), after probe.sh's
# variables (worker). make_dir DIR: the SSH directory, 0700 before any
# private key is written into it. recreate CMD...: remove the worker, then
# run CMD (docker run ...).
make_dir() { mkdir -p "$1" && chmod 700 "$1"; }
recreate() { docker rm -f "$worker" >/dev/null && "$@"; }
# wait_worker ADDR PORT SECONDS KEY: until the worker's sshd presents KEY at
# ADDR:PORT, or the container stops or restarts, or SECONDS pass; then its log.
wait_worker() {
	i=0
	while [ "$i" -lt "$3" ]; do
		st=$(docker inspect --type container -f '{{.State.Status}} {{.RestartCount}}' "$worker") || return 1
		case $st in
		"running 0") ;;
		*) echo "$worker is not running (state, restarts: $st): its sshd did not start. Its log:"; docker logs --tail 15 "$worker" 2>&1; return 1;;
		esac
		if ssh-keyscan -T 2 -t ed25519 -p "$2" "$1" 2>/dev/null | grep -qF "$4"; then return 0; fi
		sleep 1; i=$((i + 1))
	done
	echo "the sshd of $worker does not answer on $1 port $2 with the cluster's host key after $3 s. Its log:"
	docker logs --tail 15 "$worker" 2>&1
	return 1
}

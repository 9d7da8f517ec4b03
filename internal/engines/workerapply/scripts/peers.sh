# The checks between the workers (internal/engines/workerapply, peers.go). Set by Go
# before it:
#   WS          worker.sh, the script run inside the worker
#   fw_chain    rdggen's filter chain; user_chain the chain that jumps to it
#   nat_chain   rdggen's nat chain
# and probe.sh's worker.

# worker_probe MARK PORT WAIT MOST ADDR...: worker.sh in the worker, when it
# runs (result "worker").
worker_probe() {
	if [ "$(docker inspect --type container -f '{{.State.Running}}' "$worker" 2>/dev/null)" = true ]; then
		fr worker docker exec "$worker" sh -c "$WS" rdggen "$@"
	fi
}
# rules_probe ADDR...: nat POSTROUTING and rdggen's nat chain, the chain
# that jumps to rdggen's filter chain and that chain, and `ip route get` of
# each peer's worker address ADDR (one `ip -batch`; none without peers).
rules_probe() {
	fr postrouting iptables -w -t nat -S POSTROUTING
	fr natchain iptables -w -t nat -S "$nat_chain"
	fr dockeruser iptables -w -S "$user_chain"
	fr fwchain iptables -w -S "$fw_chain"
	[ $# -gt 0 ] || return 0
	fr routes routes_get "$@"
}
routes_get() { printf 'route get %s\n' "$@" | ip -o -force -batch - 2>&1; }

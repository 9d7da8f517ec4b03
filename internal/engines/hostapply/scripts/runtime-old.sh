# runtime, before Docker 19.03 (internal/engines/hostapply, guestProbe): the runtimes
# of `docker info` (without a root prefix; else daemon.json's, which the
# probe reads anyway).
if [ -z "$R" ] && command -v docker >/dev/null 2>&1; then fr runtime docker info --format '{{json .Runtimes}}'; fi

# restart_docker (internal/engines/hostapply, --docker-restart): restart Docker after
# a new daemon.json. Set by Go before it:
#   restart_mode  "none" (skip, and say so), "auto" (its service) or a
#                 command line, run as sh -c "$restart_mode"
restart_docker() {
	case $restart_mode in
	none) echo "docker restart skipped (--docker-restart none): restart Docker for the new daemon.json to take effect"; return 0;;
	auto) ;;
	*) sh -c "$restart_mode"; return;;
	esac
	if [ -d /run/systemd/system ] && systemctl cat docker.service >/dev/null 2>&1; then systemctl restart docker.service
	elif [ -x /etc/init.d/docker ]; then /etc/init.d/docker restart
	else echo "docker is not installed as a service: nothing to restart"; fi
}

# systemd_reload (internal/engines/hostapply): systemd reads the changed units.
systemd_reload() {
	if [ -n "$R" ]; then echo "root prefix set: no daemon-reload"
	elif [ -d /run/systemd/system ]; then systemctl daemon-reload
	else echo "systemd is not running: nothing to reload"; fi
}

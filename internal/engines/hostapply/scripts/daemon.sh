# daemon_install MODE OLDSUM BACKUP NEWDATA (internal/engines/hostapply): refuse a
# file changed since the probe (OLDSUM its SHA-256, "-" when it did not
# exist), stage the new file beside the old one, validate it
# (validate_daemon), back the old one up, rename the new one into place,
# restart Docker (restart_docker); when the restart fails, put the old file
# back and restart again. Set by Go before it:
#   daemon_path  Docker's daemon.json
daemon_install() {
	f="$R$daemon_path"
	if [ "$2" = - ]; then
		[ ! -e "$f" ] || { echo "$f appeared since the plan was made: not touched; run apply again"; return 3; }
	else
		s=$(sha256sum 2>/dev/null <"$f" | cut -d' ' -f1)
		[ "$s" = "$2" ] || { echo "$f changed since the plan was made: not touched; run apply again"; return 3; }
	fi
	mkdir -p "${f%/*}" || return 1
	new="${f%/*}/.daemon.json.rdggen-new"
	{ cp "$4" "$new" && chmod "$1" "$new"; } || { rm -f "$new"; return 1; }
	[ ! -e "$f" ] || chown --reference="$f" "$new" 2>/dev/null || true # the owner, like the mode, stays
	if ! validate_daemon "$new"; then rm -f "$new"; echo "the new file was rejected: $f not changed"; return 4; fi
	b=$3; i=1
	while [ -e "$b" ]; do b="$3.$i"; i=$((i + 1)); done
	if [ -e "$f" ]; then cp -p "$f" "$b" || { rm -f "$new"; echo "cannot write the backup $b: $f not changed"; return 1; }; fi
	sync "$new" 2>/dev/null
	mv -f "$new" "$f" || return 1
	[ "$2" = - ] || echo "backup: $b"
	if ! restart_docker; then
		if [ -e "$b" ] && [ "$2" != - ]; then
			cp -p "$b" "$f" && echo "docker restart failed with the new file: the previous one is back in place"
		else
			rm -f "$f" && echo "docker restart failed with the new file: it was removed again"
		fi
		restart_docker
		return 5
	fi
}

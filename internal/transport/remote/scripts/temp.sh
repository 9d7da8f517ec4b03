# A private temp directory $T, removed on exit, and the file helpers; the
# scripts that change files add it after the prelude, probes do not.
T=$(mktemp -d) || { echo "rdggen: mktemp failed" >&2; exit 97; }
trap 'rm -rf "$T"' EXIT
# put_file PATH MODE SRC: install SRC as PATH atomically (temp file beside it, then rename).
put_file() {
	d=${1%/*}; mkdir -p "$d" || return 1
	t="$d/.${1##*/}.rdggen-tmp"
	{ cp "$3" "$t" && chmod "$2" "$t"; } || { rm -f "$t"; return 1; }
	sync "$t" 2>/dev/null
	mv -f "$t" "$1"
}
# put_link PATH TARGET: make PATH a symbolic link to TARGET.
put_link() { mkdir -p "${1%/*}" && ln -sfn "$2" "$1"; }

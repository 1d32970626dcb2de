# stopped.sh ID [term]: the processes on this host that storbench's
# commands of one connection left, found by the variable every wrapper of
# that connection carries (STORBENCH_SSH_CONN=ID, inherited by everything
# below it), one "PID COMM CWD" a line. With "term", the wrappers among them
# (sh -c WRAPPER ...) get TERM first: each stops its command
# as it would when its lifeline breaks. POSIX sh, grep, /proc.
id=$1 what=$2
[ -d /proc/self ] || { echo "storbench-ssh: no /proc on this host" >&2; exit 3; }
for f in $(grep -l -a -F -e "STORBENCH_SSH_CONN=$id" /proc/[0-9]*/environ 2>/dev/null); do
	p=${f#/proc/}
	p=${p%/environ}
	c=$(cat "/proc/$p/comm" 2>/dev/null) || continue
	if [ "$what" = term ]; then
		# The wrapper's command line begins with its script's first line.
		case $(head -c 40 "/proc/$p/cmdline" 2>/dev/null | tr '\0' ' ') in
		"sh -c # storbench's remote command"*) kill -s TERM "$p" 2>/dev/null ;;
		esac
	fi
	printf '%s %s %s\n' "$p" "$c" "$(readlink "/proc/$p/cwd" 2>/dev/null)"
done
exit 0

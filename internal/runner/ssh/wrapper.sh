# storbench's remote command wrapper (POSIX sh; run as sh -c SCRIPT).
# Arguments: SSHD DIR GRACE MODE NENV [NAME=VALUE]... COMMAND [ARG]...
#   SSHD   the pid of the sshd process of this session
#   DIR    working directory ("" for the login directory)
#   GRACE  seconds between TERM and KILL when the command is stopped
#   MODE   "line": stdin is storbench's lifeline and the command reads
#          /dev/null; "pipe": stdin is the command's, and the lifeline is
#          the sshd process SSHD
#   NENV   how many NAME=VALUE arguments follow
# In pipe mode the first line on stderr is "storbench-ssh: pid PID": to
# stop the command storbench sends this shell TERM from another session
# (sshd refuses SSH "signal" requests for root logins).
#
# Without a pty sshd sends no SIGHUP when the connection goes, so the
# command would go on writing. This wrapper starts the command in a process
# group of its own and stops it (TERM to the group, KILL to the group and
# every process below it after GRACE) when the lifeline breaks, or when
# this shell gets TERM.
sshd=$1 dir=$2 grace=$3 mode=$4 n=$5
shift 5
if [ "$mode" = pipe ]; then
	printf 'storbench-ssh: pid %s\n' "$$" >&2
fi
while [ "$n" -gt 0 ]; do
	export "$1" || exit 126
	n=$((n - 1))
	shift
done
if [ -n "$dir" ]; then
	cd "$dir" || exit 126
fi
if ! command -v "$1" >/dev/null 2>&1; then
	printf 'storbench-ssh: %s: not found\n' "$1" >&2
	exit 127
fi

# descendants PID prints every process below PID, from /proc.
descendants() {
	[ -d /proc/self ] || return 0
	cat /proc/[0-9]*/stat 2>/dev/null | awk -v root="$1" '
		{ n = split($0, a, ") "); split(a[n], f, " "); ppid[$1] = f[2] }
		END {
			found[root] = 1
			do {
				more = 0
				for (p in ppid) if (!(p in found) && (ppid[p] in found)) { found[p] = 1; more = 1 }
			} while (more)
			for (p in found) if (p != root) print p
		}'
}

# stop ends the command: TERM to its group (fio stops its jobs and closes
# its files), then KILL to the group and to every process that was below
# the command (fio's jobs run in sessions of their own).
# The tree is held still (STOP) while it is listed, and TERM goes out only
# then: a stopped process can neither fork nor exit, so no process can be
# forked after the listing and orphaned (reparented to init, below nothing)
# before the KILL. fio's main process forks its jobs as it starts, and at
# TERM, its stdout gone with the connection, it dies of SIGPIPE writing
# "terminating on signal": a job forked after an unfrozen listing outlived
# it, waiting for ever for the main process to let it run.
stop() {
	trap '' TERM HUP INT
	kill -s STOP -- "-$pid" 2>/dev/null || kill -s STOP -- "$pid" 2>/dev/null
	below= prev=x j=0
	while [ "$below" != "$prev" ] && [ "$j" -lt 20 ]; do
		prev=$below
		below=$(descendants "$pid" | sort -n)
		# shellcheck disable=SC2086
		[ -z "$below" ] || kill -s STOP $below 2>/dev/null
		j=$((j + 1))
	done
	kill -s TERM -- "-$pid" 2>/dev/null || kill -s TERM -- "$pid" 2>/dev/null
	# shellcheck disable=SC2086
	kill -s CONT -- "-$pid" $below 2>/dev/null
	kill -s CONT -- "$pid" 2>/dev/null
	i=0
	while [ "$i" -lt "$grace" ] && kill -0 "$pid" 2>/dev/null; do
		sleep 1
		i=$((i + 1))
	done
	# shellcheck disable=SC2046,SC2086
	kill -s KILL -- "-$pid" $below $(descendants "$pid") 2>/dev/null
	return 0
}

sid=
if command -v setsid >/dev/null 2>&1; then
	sid=setsid # not a group leader here, so setsid execs in place: $! is the group
fi
exec 3<&0
if [ "$mode" = line ]; then
	$sid "$@" </dev/null 3<&- &
	pid=$!
	# The lifeline: storbench never writes to it; EOF means storbench
	# closed it (cancel) or the session or connection is gone.
	(
		while read -r _ <&3; do :; done
		stop
	) >/dev/null 2>&1 &
else
	$sid "$@" <&3 3<&- &
	pid=$!
	exec 3<&-
	(
		[ -d /proc/self ] || exit 0
		while [ -d "/proc/$sshd" ]; do sleep 1 </dev/null; done
		stop
	) >/dev/null 2>&1 &
fi
watcher=$!
stopping=
trap 'stopping=1; stop >/dev/null 2>&1 &' TERM HUP INT
wait "$pid"
rc=$?
if [ -n "$stopping" ]; then
	wait "$pid"
	rc=$?
fi
kill "$watcher" 2>/dev/null
exit "$rc"

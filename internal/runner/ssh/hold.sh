# hold.sh DEVICE: opens DEVICE with O_EXCL, as storbench holds a device on
# its own host, prints "held" and keeps it open until stopped (the wrapper
# stops it when storbench ends the session or the connection goes). While
# it is held the kernel refuses to mount the device or use it for swap,
# RAID, LVM or device-mapper; if any of these hold it already, the open
# fails with EBUSY and this exits 16. POSIX sh has no O_EXCL: perl
# (perl-base is essential on Debian) or python3 opens it; without either
# this exits 3.
dev=$1
if command -v perl >/dev/null 2>&1; then
	exec perl -e 'use Fcntl; use POSIX ();
		sysopen(my $fh, $ARGV[0], O_RDONLY | O_EXCL) or do { print STDERR "storbench-hold: $ARGV[0]: $!\n"; exit($! == POSIX::EBUSY ? 16 : 1) };
		$| = 1; print "held\n"; sleep 3600 while 1' "$dev"
fi
if command -v python3 >/dev/null 2>&1; then
	exec python3 -c 'import errno, os, sys, time
try:
    fd = os.open(sys.argv[1], os.O_RDONLY | os.O_EXCL)
except OSError as e:
    print("storbench-hold: %s: %s" % (sys.argv[1], e.strerror), file=sys.stderr)
    sys.exit(16 if e.errno == errno.EBUSY else 1)
print("held", flush=True)
while True:
    time.sleep(3600)' "$dev"
fi
echo "storbench-hold: neither perl nor python3 on the host to open $dev exclusively" >&2
exit 3

# removeleftover.sh PARENT NAME FILE...: removes the files listed (names in
# PARENT/NAME, never paths) and then the directory, which fails if anything
# else appeared in it. A NAME that is now a symbolic link is left alone.
parent=$1 name=$2
shift 2
cd -P -- "$parent" || exit 1
if [ -L "$name" ] || [ ! -d "$name" ]; then
	echo "$parent/$name is no longer a directory" >&2
	exit 1
fi
cd -P -- "./$name" || exit 1
for f in "$@"; do
	case "$f" in */* | . | .. | "") echo "refusing to remove $f" >&2; exit 1 ;; esac
	rm -f -- "$f" || exit 1
done
cd .. && rmdir -- "$name"

# serve-lib.sh is sourced by serve-bench.sh and growth.sh (set -eu), which set $work
# (a scratch folder) first.
#
# serve_start BIN ARGS... starts `BIN serve --addr 127.0.0.1:0 ARGS...` in the
# background (standard output to $work/out, errors appended to $work/log) and waits
# until it listens; it sets pid, url (http://host:port) and ready (seconds from start
# to listening). It exits with the log when the server dies first.
serve_start() {
	bin=$1
	shift
	rm -f "$work/out"
	t0=$(date +%s.%N)
	"$bin" serve --addr 127.0.0.1:0 "$@" >"$work/out" 2>>"$work/log" &
	pid=$!
	until grep -q listening "$work/out" 2>/dev/null; do
		kill -0 $pid 2>/dev/null || { cat "$work/log"; exit 1; }
		sleep 0.02
	done
	ready=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
	url=$(sed -n 's/listening on //p' "$work/out")
}

# serve_peak_mb prints the running server's peak RSS (VmHWM) in MB.
serve_peak_mb() {
	awk '/VmHWM/ { printf "%d", $2 / 1024 }' /proc/$pid/status
}

# serve_stop stops the server (SIGTERM), waits for it and returns its exit status.
serve_stop() {
	kill -TERM $pid
	st=0
	wait $pid || st=$?
	pid=
	return $st
}

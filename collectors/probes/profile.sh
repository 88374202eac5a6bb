# Perfcase CPU profile, fed on stdin (after stoppable.sh) to:
#   sh -s -- STEP MODE TARGET SECONDS FREQUENCY CALLGRAPH PIDFILE
#
# STEP "check" finds perf, the process and the permission to profile it, and prints what it
# found as key=value lines; STEP "record" records for SECONDS and prints `perf script` of the
# recording (the raw output Perfcase keeps and folds). MODE is "process" (TARGET a command
# name, matched as `pgrep -x` matches it: the whole of /proc/PID/comm), "pid" (TARGET a PID)
# or "host" (every CPU; TARGET unused). CALLGRAPH is "fp" (frame pointers, perf -g) or
# "dwarf". A cancel ends the recording through PIDFILE (stoppable.sh): nothing is printed
# then. Every value was checked against a strict grammar before it got here and is only
# used quoted.
#
# Exit statuses: 127 perf is missing, 3 no such process, 4 not allowed to profile it, 6 perf
# failed (its message on stderr).
STEP=$1 MODE=$2 TARGET=$3 SECONDS_=$4 FREQUENCY=$5 CALLGRAPH=$6 PIDFILE=${7:-}
export LC_ALL=C
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"

command -v perf >/dev/null 2>&1 || { echo "perf: not found" >&2; exit 127; }

case $MODE in
    process)
        PIDS=$(grep -Flx -- "$TARGET" /proc/[0-9]*/comm 2>/dev/null | cut -d/ -f3 | sort -n | paste -sd, -)
        [ -n "$PIDS" ] || { echo "no process named $TARGET" >&2; exit 3; } ;;
    pid)
        [ -d "/proc/$TARGET" ] || { echo "no process $TARGET" >&2; exit 3; }
        PIDS=$TARGET ;;
    *) PIDS="" ;;
esac

# Unprivileged perf may record only the user's own processes, and only while
# kernel.perf_event_paranoid allows (2: user space only, 1: with the kernel, 0 or less: every
# CPU); above that, sudo -n where the host allows it without a password.
UID_=$(id -u)
PARANOID=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 2)
NEED_ROOT=""  # why root is needed: paranoid, host (every CPU), owner (another user's process)
if [ "$UID_" != 0 ]; then
    if [ "$PARANOID" -ge 3 ]; then NEED_ROOT=paranoid; fi
    if [ -z "$NEED_ROOT" ] && [ "$MODE" = host ] && [ "$PARANOID" -ge 1 ]; then NEED_ROOT=host; fi
    if [ -z "$NEED_ROOT" ] && [ -n "$PIDS" ]; then
        for pid in $(echo "$PIDS" | tr , ' '); do
            owner=$(sed -n 's/^Uid:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$pid/status" 2>/dev/null)
            [ -n "$owner" ] && [ "$owner" != "$UID_" ] && NEED_ROOT=owner
        done
    fi
fi
SUDO=""
if [ -n "$NEED_ROOT" ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true >/dev/null 2>&1; then
        SUDO="sudo -n"
    else
        echo "paranoid=$PARANOID"
        echo "refused=$NEED_ROOT"
        echo "not allowed to profile ($NEED_ROOT), and sudo needs a password" >&2
        exit 4
    fi
fi
if [ "$UID_" = 0 ] || [ -n "$SUDO" ] || [ "$PARANOID" -le 1 ]; then KERNEL=yes; else KERNEL=no; fi

if [ "$STEP" = check ]; then
    echo "pids=$PIDS"
    echo "paranoid=$PARANOID"
    echo "via=${SUDO:+sudo}"
    echo "kernel=$KERNEL"
    exit 0
fi

# The recording's directory is named after the PID file, when there is one: what a run
# leaves behind is found by its name.
if [ -n "$PIDFILE" ]; then base=${PIDFILE%.pid}; else base="${TMPDIR:-/tmp}/perfcase-profile"; fi
dir=$(mktemp -d "$base.XXXXXX") || exit 6
[ -n "$PIDFILE" ] || PIDFILE="$dir/perf.pid"
trap 'rm -rf "$dir"' EXIT
trap 'exit 143' HUP INT TERM
set -- -F "$FREQUENCY" -o "$dir/perf.data"
if [ "$CALLGRAPH" = dwarf ]; then set -- "$@" --call-graph dwarf; else set -- "$@" -g; fi
if [ "$MODE" = host ]; then set -- "$@" -a; else set -- "$@" -p "$PIDS"; fi
# timeout(1) ends perf whatever happens to this session; perf stops at the end of sleep.
stoppable "$PIDFILE" "${SUDO:+sudo}" $SUDO timeout -k 5 $((SECONDS_ + 60)) \
    perf record "$@" -- sleep "$SECONDS_" >/dev/null 2>"$dir/err"
rc=$?
[ "$rc" = 143 ] && exit 143  # stopped (a cancel): no perf script of a part
if [ "$rc" != 0 ] || [ ! -s "$dir/perf.data" ]; then
    said=$(grep -v '^\[ perf record' "$dir/err" | head -n 5)
    # perf does not always say why: then what is known (a bare "exit status 6" is not).
    if [ -n "$said" ]; then
        echo "$said" >&2
    elif [ "$rc" = 124 ]; then
        echo "perf record did not end within $((SECONDS_ + 60)) s and was stopped" >&2
    elif [ "$rc" != 0 ]; then
        echo "perf record ended with exit status $rc and said nothing" >&2
    else
        echo "perf record ended without an error but wrote no data" >&2
    fi
    exit 6
fi
$SUDO perf script -F +pid -i "$dir/perf.data" 2>/dev/null

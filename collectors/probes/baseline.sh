# The baseline pack's remote side, read from standard input: sh -s -- STEP ARGS...
# Only fixed words and values Perfcase checked (numbers, its own file names, a directory
# of plain path words) arrive here, each as an argument of its own.
set -u
step=$1
shift
case "$step" in
check)
    # check DIRECTORY TOOL...: the CPUs, the tools present, and whether the scratch
    # directory takes a file (with direct I/O or not) and how much room it has.
    dir=$1
    shift
    echo "cpus=$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN)"
    for tool in "$@"; do
        command -v "$tool" >/dev/null 2>&1 && echo "tool=$tool"
    done
    if [ -d "$dir" ] && [ -w "$dir" ]; then
        probe="$dir/perfcase-baseline-check.$$"
        if dd if=/dev/zero of="$probe" bs=4096 count=1 oflag=direct 2>/dev/null; then
            echo "direct=yes"
        else
            echo "direct=no"
        fi
        rm -f "$probe"
        echo "free_mb=$(df -Pm "$dir" | awk 'NR == 2 {print $4}')"
    else
        echo "scratch=unwritable"
    fi
    ;;
run)
    # run PIDFILE LIMIT SCRATCH COMMAND...: the command under timeout(1), stoppable through
    # its PID file (stoppable.sh); at its end, whatever ends it, the scratch file ("-" for
    # none) is removed.
    file=$1 limit=$2 scratch=$3
    shift 3
    stoppable "$file" "" timeout -k 5 "$limit" "$@"
    status=$?
    [ "$scratch" = - ] || rm -f "$scratch"
    exit "$status"
    ;;
serve)
    # serve TOOL PIDFILE LIMIT: a server of TOOL (iperf3 or qperf) on a free port of its
    # own picking, left running (at most LIMIT seconds) when this ends; prints port=N.
    tool=$1 file=$2 limit=$3
    for try in 1 2 3 4 5 6 7 8; do
        port=$((20000 + $(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % 40000))
        case "$tool" in
        iperf3) setsid timeout -k 5 "$limit" iperf3 -s -p "$port" </dev/null >/dev/null 2>&1 & ;;
        qperf) setsid timeout -k 5 "$limit" qperf -lp "$port" </dev/null >/dev/null 2>&1 & ;;
        *) echo "no server for $tool" >&2; exit 2 ;;
        esac
        pid=$!
        sleep 0.5
        if kill -0 "$pid" 2>/dev/null; then
            echo "$pid" >"$file"
            echo "port=$port"
            exit 0
        fi
    done
    echo "$tool found no free port" >&2
    exit 3
    ;;
*)
    echo "unknown step $step" >&2
    exit 2
    ;;
esac

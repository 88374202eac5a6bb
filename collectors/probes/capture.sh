# Perfcase packet capture, fed on stdin (after stoppable.sh) to:
#   sh -s -- STEP INTERFACE SECONDS SNAPLEN FILTER PIDFILE
#
# STEP "check" finds tcpdump, the interface and the permission to capture on it, and prints
# what it found as key=value lines; STEP "capture" captures for SECONDS and writes the pcap
# to standard output as it comes (Perfcase streams it into a file of its own and stops
# reading at its size cap), stoppable through PIDFILE (a cancel). FILTER is one argument
# (possibly empty), checked against a
# strict grammar and compiled with tcpdump -d before it got here; every value is only used
# quoted.
#
# Exit statuses: 127 tcpdump is missing, 3 no such interface, 4 not allowed to capture,
# 6 tcpdump failed (its message on stderr).
STEP=$1 IFACE=$2 SECONDS_=$3 SNAPLEN=$4 FILTER=$5 PIDFILE=${6:-}
export LC_ALL=C
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"

command -v tcpdump >/dev/null 2>&1 || { echo "tcpdump: not found" >&2; exit 127; }
if [ "$IFACE" != any ] && [ ! -e "/sys/class/net/$IFACE" ]; then
    echo "no interface $IFACE" >&2
    exit 3
fi

# tcpdump needs root, or CAP_NET_RAW and CAP_NET_ADMIN on its binary; else sudo -n where the
# host allows it without a password. A quick try tells what a listing of capabilities
# would not: whether this user may open this interface.
SUDO=""
if [ "$(id -u)" != 0 ]; then
    err=$(timeout 2 tcpdump -i "$IFACE" -c 1 -w /dev/null 2>&1 >/dev/null)
    case $err in
        *ermission*|*"not permitted"*)
            if command -v sudo >/dev/null 2>&1 && sudo -n true >/dev/null 2>&1; then
                SUDO="sudo -n"
            else
                echo "not allowed to capture: $err" >&2
                exit 4
            fi ;;
    esac
fi

if [ "$STEP" = check ]; then
    echo "via=${SUDO:+sudo}"
    exit 0
fi

# Leave out the SSH connection this stream goes back on: captured, every chunk sent would
# make more packets to capture and send. SSH_CONNECTION is "client port server port".
set -- $SSH_CONNECTION
case "$1$2$3$4" in
    *[!0-9A-Fa-f.:]*|"") OWN="" ;;
    *) OWN="not (tcp and host $1 and port $2 and host $3 and port $4)" ;;
esac
if [ -n "$OWN" ]; then
    if [ -n "$FILTER" ]; then FILTER="($FILTER) and $OWN"; else FILTER=$OWN; fi
fi

# SIGINT at the end, so that tcpdump flushes and says how many packets it saw (status 124
# is timeout's own: the capture ran its time); the second timeout is the backstop. A cancel
# ends it through PIDFILE (stoppable.sh).
set -- -i "$IFACE" -s "$SNAPLEN" -U -w -
if [ -n "$FILTER" ]; then set -- "$@" -- "$FILTER"; fi
if [ -z "$PIDFILE" ]; then
    exec $SUDO timeout -k 5 -s INT "$SECONDS_" tcpdump "$@"
fi
stoppable "$PIDFILE" "${SUDO:+sudo}" $SUDO timeout -k 5 -s INT "$SECONDS_" tcpdump "$@"

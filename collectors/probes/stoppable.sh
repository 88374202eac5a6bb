# Perfcase's stoppable tools: shell functions put before the probe scripts that start a
# long-running tool (capture, profile, baseline), and the body of the kill command of every
# run (collectors/loadrun.kill_command). A cancel reaches a tool through its PID file, by a
# second command over the same connection: the command that started the tool is busy
# streaming its output.
#
# stoppable FILE VIA COMMAND...: COMMAND in the background, "PID VIA" in FILE while it runs
# (VIA is "sudo" when COMMAND runs through sudo -n, whose process only root may signal, else
# empty); waits for it and returns its status. stop_tools removes the file before it ends
# the tool, so a tool whose file is gone was stopped: stoppable then returns 143 and the
# script must not go on (no perf script of a cancelled recording). A HUP, TERM or INT to the
# script (sshd closing the session) ends the tool too, and afterwards the script (exit 143,
# its EXIT trap run). FILE is one of Perfcase's names
# (numbers and fixed words); one that exists already is not ours and is left alone.
stoppable() {
    pc_file=$1 pc_via=$2
    shift 2
    "$@" </dev/null &
    pc_pid=$!
    trap 'stop_tools "$pc_file"; kill -TERM "$pc_pid" 2>/dev/null; wait "$pc_pid"; exit 143' HUP TERM INT
    if ! (set -C; echo "$pc_pid $pc_via" >"$pc_file") 2>/dev/null; then
        pc_file=""
    fi
    wait "$pc_pid"
    pc_status=$?
    trap 'exit 143' HUP TERM INT
    if [ -n "$pc_file" ] && [ ! -e "$pc_file" ]; then
        return 143
    fi
    [ -z "$pc_file" ] || rm -f "$pc_file"
    return "$pc_status"
}

# stop_tools FILE...: end the tool each PID file names and remove the file. Only files of
# this user are read: another user's file of the same name in /tmp names no tool of ours.
stop_tools() {
    for pc_stop in "$@"; do
        [ -f "$pc_stop" ] && [ -O "$pc_stop" ] || continue
        pc_words=$(cat "$pc_stop" 2>/dev/null)
        rm -f "$pc_stop"
        set -- $pc_words
        case ${1:-} in "" | *[!0-9]*) continue ;; esac
        if [ "${2:-}" = sudo ]; then
            sudo -n kill -TERM "$1" 2>/dev/null
        else
            kill -TERM "$1" 2>/dev/null
        fi
    done
    return 0
}

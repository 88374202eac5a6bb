# Perfcase host-facts probe, fed on stdin to: sh -s -- TOKEN SERVICE [PATH...]
#
# Each probe prints its output between two marker lines with its exit status, so one that
# fails, hangs or lacks a tool never stops the others. Programs run under timeout(1) with
# the probe's own limit; kernel files are read with builtins, cat and grep, which do not
# block on procfs and sysfs. The script starts few processes on purpose: on a busy host
# every exec costs more than the reading itself.
#
# SERVICE and PATH values are checked against strict grammars before they get here, and
# are only ever used quoted or as fixed strings.
T=$1
PC_SERVICE=${2:-}
shift 2 2>/dev/null || shift $#
export LC_ALL=C
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"
if command -v timeout >/dev/null 2>&1; then HAVE_TIMEOUT=1; else HAVE_TIMEOUT=0; fi
if command -v sudo >/dev/null 2>&1 && sudo -n true >/dev/null 2>&1; then PC_SUDO=1; else PC_SUDO=0; fi

# lines FILE...: small text files, without starting a process.
lines() {
    for f in "$@"; do
        while IFS= read -r line || [ -n "$line" ]; do printf '%s\n' "$line"; done < "$f"
    done
}

# limited SECONDS COMMAND...: run a program under the probe's own time limit. A probe in
# which any program ran out of time ends with timeout's status (124, or 137 when killed).
# Without timeout(1) the overall SSH deadline still holds.
limited() {
    if [ "$HAVE_TIMEOUT" = 0 ]; then shift; "$@"; return; fi
    timeout -k 1 "$@"
    status=$?
    if [ "$status" = 124 ] || [ "$status" = 137 ]; then
        echo "$2: no answer within $1 s" >&2
        PC_TIMED_OUT=$status
    fi
    return "$status"
}

# show FILE...: one-line sysfs and cgroup attributes as `path:value`, without a process.
show() {
    for f in "$@"; do
        if [ -r "$f" ]; then
            IFS= read -r v < "$f" && printf '%s:%s\n' "$f" "$v"
        elif [ -e "$f" ]; then
            printf '%s: Permission denied\n' "$f"
        fi
    done
    return 0
}

# readall FILE...: files that must be read whole, through one grep: a /proc/sys value
# answers dash's byte-by-byte `read` with end-of-file after the first byte, and a binary
# attribute (node cpulist) with nothing.
readall() {
    n=$#
    for f in "$@"; do [ -e "$f" ] && set -- "$@" "$f"; done
    shift "$n"
    if [ $# -gt 0 ]; then grep -H . "$@"; fi
    return 0
}

# The /proc/sys values three probes want, read through one grep before the probes run
# (each probe then prints its own lines): two processes fewer per host.
VM_SYSCTLS="/proc/sys/vm/swappiness /proc/sys/vm/overcommit_memory /proc/sys/vm/zone_reclaim_mode
    /proc/sys/vm/dirty_ratio /proc/sys/vm/dirty_background_ratio /proc/sys/kernel/numa_balancing
    /proc/sys/kernel/sched_autogroup_enabled"
NET_SYSCTLS="/proc/sys/net/core/somaxconn /proc/sys/net/core/netdev_max_backlog /proc/sys/net/core/rmem_max /proc/sys/net/core/wmem_max /proc/sys/net/ipv4/tcp_congestion_control /proc/sys/net/ipv4/tcp_tw_reuse /proc/sys/net/ipv4/tcp_rmem /proc/sys/net/ipv4/tcp_wmem /proc/sys/net/ipv4/ip_local_port_range /proc/sys/net/ipv4/tcp_max_syn_backlog /proc/sys/net/ipv4/tcp_fin_timeout /proc/sys/net/ipv4/tcp_slow_start_after_idle /proc/sys/net/netfilter/nf_conntrack_max"
LIMIT_SYSCTLS="/proc/sys/kernel/pid_max /proc/sys/fs/file-max /proc/sys/kernel/threads-max"

# proc_sys FILE...: the lines of that one read about these files, values and errors alike.
proc_sys() {
    set -f; saved_ifs=$IFS; IFS='
'
    for line in $PC_PROC_SYS; do
        for f in "$@"; do
            case $line in "$f:"*|"grep: $f:"*) printf '%s\n' "$line"; break;; esac
        done
    done
    IFS=$saved_ifs; set +f
    return 0
}

# Exit statuses a probe may use: 127 a tool is missing, 4 the data does not exist on this
# host, 5 not needed on this host (the last line says why), 3 the service is not running.
probe() { # NAME
    printf '@@%s begin %s\n' "$T" "$1"
    PC_TIMED_OUT=""; PC_VIA=""
    p_$1 2>&1
    rc=$?
    printf '\n@@%s end %s %s%s\n' "$T" "$1" "${PC_TIMED_OUT:-$rc}" "$PC_VIA"
    cd /
}

p_uname() {
    show /proc/sys/kernel/osrelease /proc/sys/kernel/version /proc/sys/kernel/hostname
    if [ -r /proc/sys/kernel/arch ]; then show /proc/sys/kernel/arch; else printf 'arch:%s\n' "$(uname -m)"; fi
}
p_os_release() { if [ -r /etc/os-release ]; then lines /etc/os-release; else lines /usr/lib/os-release; fi; }
p_cmdline() { lines /proc/cmdline; }
p_uptime() { lines /proc/uptime /proc/loadavg /proc/sys/kernel/random/boot_id; }
p_access() {
    # sshd sets USER and LOGNAME; the uid comes from the kernel, without running id(1).
    while IFS= read -r line; do
        case $line in Uid:*) set -- $line; echo "uid=$2(${USER:-${LOGNAME:-$(id -un)}})"; break;; esac
    done < /proc/self/status
    echo "sudo=$PC_SUDO"
}
p_virt() {
    if command -v systemd-detect-virt >/dev/null 2>&1; then
        vm=$(limited 5 systemd-detect-virt --vm)
        status=$?
        echo "vm=$vm"
        if [ "$status" = 124 ] || [ "$status" = 137 ]; then PC_TIMED_OUT=$status; fi
    fi
    [ -r /run/systemd/container ] && { IFS= read -r c < /run/systemd/container; echo "container=$c"; }
    for f in sys_vendor product_name; do
        [ -r /sys/class/dmi/id/$f ] && IFS= read -r v < /sys/class/dmi/id/$f && echo "dmi_$f=$v"
    done
    [ -e /.dockerenv ] && echo "dockerenv=1"
    [ -e /run/.containerenv ] && echo "containerenv=1"
    n=0
    while [ $n -lt 3 ] && IFS= read -r line; do echo "pid1_cgroup=$line"; n=$((n + 1)); done < /proc/1/cgroup
    return 0
}
p_lscpu() {
    # /proc/cpuinfo and sysfs give everything lscpu would on x86, for far less work (lscpu
    # reads every cache of every CPU); lscpu is needed where cpuinfo has no model name (ARM).
    n=0
    while [ $n -lt 12 ] && IFS= read -r line; do
        case $line in "model name"*) echo "not needed: /proc/cpuinfo names the model"; return 5;; esac
        n=$((n + 1))
    done < /proc/cpuinfo
    limited 5 lscpu
}
p_cpuinfo() { cat /proc/cpuinfo; }
p_cpu_topology() {
    cd /sys/devices/system/cpu || return 1
    show online present possible smt/control smt/active
    grep -H . cpu[0-9]*/topology/physical_package_id cpu[0-9]*/topology/core_id 2>/dev/null
    return 0
}
p_cpufreq() {
    cd /sys/devices/system/cpu || return 1
    show cpufreq/boost intel_pstate/status intel_pstate/no_turbo
    set -- cpu[0-9]*/cpufreq
    [ -e "$1" ] || return 0
    grep -H . cpu[0-9]*/cpufreq/scaling_governor cpu[0-9]*/cpufreq/scaling_driver \
        cpu[0-9]*/cpufreq/scaling_cur_freq cpu[0-9]*/cpufreq/scaling_min_freq \
        cpu[0-9]*/cpufreq/scaling_max_freq cpu[0-9]*/cpufreq/cpuinfo_min_freq \
        cpu[0-9]*/cpufreq/cpuinfo_max_freq 2>/dev/null
    return 0
}
p_cpuidle() {
    show /sys/devices/system/cpu/cpuidle/current_driver /sys/devices/system/cpu/cpuidle/current_governor \
        /sys/devices/system/cpu/cpuidle/current_governor_ro /sys/module/intel_idle/parameters/max_cstate
}
p_vulnerabilities() {
    [ -d /sys/devices/system/cpu/vulnerabilities ] || { echo "this kernel does not report CPU vulnerabilities"; return 4; }
    show /sys/devices/system/cpu/vulnerabilities/*
}
p_meminfo() { cat /proc/meminfo; }
p_thp() { show /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag; }
p_vm_sysctls() { proc_sys $VM_SYSCTLS; }
p_numa() {
    cd /sys/devices/system/node 2>/dev/null || { echo "no NUMA information in sysfs"; return 4; }
    set -- node[0-9]*/cpulist
    if [ -e "$1" ]; then readall node[0-9]*/cpulist; else readall node[0-9]*/cpumap; fi
    for m in node[0-9]*/meminfo; do
        [ -r "$m" ] || continue
        while IFS= read -r line; do
            case $line in *MemTotal*) echo "$m:$line"; break;; esac
        done < "$m"
    done
    return 0
}
p_clocksource() {
    show /sys/devices/system/clocksource/clocksource0/current_clocksource \
        /sys/devices/system/clocksource/clocksource0/available_clocksource
}
p_net_sysctls() { proc_sys $NET_SYSCTLS; }
p_net_interfaces() {
    for i in /sys/class/net/*; do
        [ -e "$i" ] || continue
        echo "if=${i##*/}"
        show "$i/mtu" "$i/speed" "$i/operstate" "$i/duplex" 2>/dev/null
        rx=0; tx=0
        for q in "$i"/queues/rx-*; do [ -e "$q" ] && rx=$((rx + 1)); done
        for q in "$i"/queues/tx-*; do [ -e "$q" ] && tx=$((tx + 1)); done
        echo "queues=$rx $tx"
        if [ -r "$i/device/uevent" ]; then
            while IFS= read -r line; do
                case $line in DRIVER=*) echo "driver=${line#DRIVER=}";; esac
            done < "$i/device/uevent"
        fi
    done
    return 0
}
p_ethtool() {
    command -v ethtool >/dev/null 2>&1 || { echo "ethtool: not found"; return 127; }
    for i in /sys/class/net/*; do
        [ -e "$i/device" ] || continue
        echo "if=${i##*/}"
        limited 5 ethtool -k "${i##*/}" 2>/dev/null
    done
    return 0
}
p_block() {
    for b in /sys/block/*; do
        case ${b##*/} in loop*|ram*|zram*) continue;; esac
        [ -e "$b" ] || continue
        echo "dev=${b##*/}"
        show "$b/queue/rotational" "$b/queue/scheduler" "$b/queue/write_cache" "$b/queue/nr_requests" \
            "$b/queue/read_ahead_kb" "$b/size"
    done
    return 0
}
p_mounts() { cat /proc/self/mounts; }
p_limits() {
    while IFS= read -r line; do
        case $line in "Max open files"*|"Max processes"*) echo "$line";; esac
    done < /proc/self/limits
    proc_sys $LIMIT_SYSCTLS
}
p_tuned() {
    if [ -r /etc/tuned/active_profile ]; then cat /etc/tuned/active_profile
    elif command -v tuned-adm >/dev/null 2>&1; then limited 5 tuned-adm active
    else echo "tuned: not found"; return 127; fi
}
p_irqbalance() { if grep -qx irqbalance /proc/[0-9]*/comm 2>/dev/null; then echo running; else echo stopped; fi; }
p_tools() {
    for t in perf tcpdump tshark wrk ab hey k6 vmstat mpstat iostat pidstat sar ethtool lscpu numactl \
        cpupower tuned-adm strace ss nstat bpftrace timeout sudo; do
        if command -v "$t" >/dev/null 2>&1; then echo "$t=1"; else echo "$t="; fi
    done
}
# The service probe is kept as text: where /proc hides other users' processes (hidepid) and
# the host allows `sudo -n`, it runs a second time under sudo.
SERVICE_PROBE='
show() {
    for f in "$@"; do
        [ -r "$f" ] && IFS= read -r v < "$f" && printf "%s:%s\n" "$f" "$v"
    done
    return 0
}
PC_SERVICE=$1
    case $PC_SERVICE in
        *[!0-9]*) pids=$(grep -Flx -- "$PC_SERVICE" /proc/[0-9]*/comm 2>/dev/null | cut -d/ -f3 | sort -n) ;;
        *) [ -d "/proc/$PC_SERVICE" ] && pids=$PC_SERVICE ;;
    esac
    [ -n "$pids" ] || { echo "no process: $PC_SERVICE"; exit 3; }
    set -- $pids
    echo "count=$#"
    pid=$1
    echo "pid=$pid"
    grep -E "^(Name|Threads|Cpus_allowed_list|voluntary_ctxt_switches|nonvoluntary_ctxt_switches):" "/proc/$pid/status"
    printf "cmdline="; tr "\000" " " < "/proc/$pid/cmdline" | head -c 16384; echo
    fs=""
    while IFS=" " read -r dev point type rest; do
        [ "$point" = /sys/fs/cgroup ] && fs=$type
    done < /proc/self/mounts
    if [ "$fs" = cgroup2 ]; then
        v2=$(sed -n "s/^0:://p" "/proc/$pid/cgroup")
        d="/sys/fs/cgroup$v2"
        echo "cgroup=v2 $v2"
        show "$d/cpu.max" "$d/cpu.weight" "$d/cpuset.cpus.effective" "$d/memory.max"
        grep -E "^(nr_periods|nr_throttled|throttled_usec) " "$d/cpu.stat" 2>/dev/null | sed "s/^/cpu.stat:/"
    else
        cpu=$(sed -n "s/^[0-9]*:[^:]*\\bcpu\\b[^:]*://p" "/proc/$pid/cgroup" | head -n 1)
        cpuset=$(sed -n "s/^[0-9]*:cpuset://p" "/proc/$pid/cgroup" | head -n 1)
        mem=$(sed -n "s/^[0-9]*:memory://p" "/proc/$pid/cgroup" | head -n 1)
        echo "cgroup=v1 $cpu"
        for d in "/sys/fs/cgroup/cpu,cpuacct$cpu" "/sys/fs/cgroup/cpu$cpu"; do
            [ -d "$d" ] || continue
            show "$d/cpu.cfs_quota_us" "$d/cpu.cfs_period_us" "$d/cpu.shares"
            grep -E "^(nr_periods|nr_throttled|throttled_time) " "$d/cpu.stat" 2>/dev/null | sed "s/^/cpu.stat:/"
            break
        done
        show "/sys/fs/cgroup/cpuset$cpuset/cpuset.cpus" "/sys/fs/cgroup/memory$mem/memory.limit_in_bytes"
    fi
    exit 0
'
p_service() {
    [ -n "$PC_SERVICE" ] || { echo "none requested"; return 0; }
    out=$(sh -c "$SERVICE_PROBE" service "$PC_SERVICE" 2>&1)
    rc=$?
    if [ "$PC_SUDO" = 1 ] && { [ "$rc" = 3 ] || case $out in *"Permission denied"*) true;; *) false;; esac; }; then
        out=$(limited 10 sudo -n sh -c "$SERVICE_PROBE" service "$PC_SERVICE" 2>&1)
        rc=$?
        echo "via=sudo"
        PC_VIA=" sudo"
    fi
    printf '%s\n' "$out"
    return "$rc"
}

PC_PROC_SYS=$(readall $VM_SYSCTLS $NET_SYSCTLS $LIMIT_SYSCTLS 2>&1)
for name in uname os_release cmdline uptime access virt lscpu cpuinfo cpu_topology cpufreq cpuidle \
    vulnerabilities meminfo thp vm_sysctls numa clocksource net_sysctls net_interfaces ethtool \
    block mounts limits tuned irqbalance tools service; do
    probe "$name"
done

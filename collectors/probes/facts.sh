# Perfcase host-facts probe, fed on stdin to: sh -s -- TOKEN SERVICE [PATH...]
# Each probe prints its output between two marker lines with its exit code and has its own
# time limit; one that fails, hangs or lacks a tool never stops the others.
# SERVICE and PATH values are checked against strict grammars before they get here, and
# are only ever used quoted or as fixed strings.
T=$1
PC_SERVICE=${2:-}
shift 2 2>/dev/null || shift $#
PC_PATHS="$*"
export LC_ALL=C PC_SERVICE PC_PATHS
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"
if command -v timeout >/dev/null 2>&1; then HAVE_TIMEOUT=1; else HAVE_TIMEOUT=0; fi
if command -v sudo >/dev/null 2>&1 && sudo -n true >/dev/null 2>&1; then PC_SUDO=1; else PC_SUDO=0; fi
export PC_SUDO

limited() { # SECONDS COMMAND... (without `timeout` the overall SSH deadline still holds)
    if [ "$HAVE_TIMEOUT" = 1 ]; then timeout -k 1 "$@"; else shift; "$@"; fi
}

# Exit statuses a probe may use: 127 a tool is missing, 4 the data does not exist on this
# host (the last line says why).
probe() { # NAME SECONDS CODE
    via=""
    out=$(limited "$2" sh -c "$3" 2>&1)
    rc=$?
    # Only where the host allows it without a password, and only after a refusal.
    if [ "$rc" -ne 0 ] && [ "$PC_SUDO" = 1 ] && printf '%s' "$out" | grep -q 'Permission denied'; then
        out=$(limited "$2" sudo -n env PC_SERVICE="$PC_SERVICE" PC_PATHS="$PC_PATHS" sh -c "$3" 2>&1)
        rc=$?
        via=" sudo"
    fi
    printf '@@%s begin %s\n%s\n@@%s end %s %s%s\n' "$T" "$1" "$out" "$T" "$1" "$rc" "$via"
}

probe uname 5 'uname -r; uname -v; uname -m; uname -n'
probe os_release 5 'cat /etc/os-release 2>/dev/null || cat /usr/lib/os-release'
probe cmdline 5 'cat /proc/cmdline'
probe uptime 5 'cat /proc/uptime /proc/loadavg /proc/sys/kernel/random/boot_id'
probe access 5 'echo "user=$(id -un)"; echo "uid=$(id -u)"; echo "sudo=$PC_SUDO"'
probe virt 5 '
if command -v systemd-detect-virt >/dev/null 2>&1; then
    echo "vm=$(systemd-detect-virt --vm 2>/dev/null)"
    echo "container=$(systemd-detect-virt --container 2>/dev/null)"
fi
for f in sys_vendor product_name; do
    [ -r /sys/class/dmi/id/$f ] && echo "dmi_$f=$(cat /sys/class/dmi/id/$f)"
done
[ -e /.dockerenv ] && echo "dockerenv=1"
[ -e /run/.containerenv ] && echo "containerenv=1"
echo "cgroupfs=$(stat -fc %T /sys/fs/cgroup 2>/dev/null)"
grep -qw hypervisor /proc/cpuinfo && echo "hypervisor_flag=1"
sed -n "1,3s/^/pid1_cgroup=/p" /proc/1/cgroup 2>/dev/null
true'
probe lscpu 10 'lscpu'
probe cpuinfo 5 'cat /proc/cpuinfo'
probe cpu_topology 5 'cd /sys/devices/system/cpu && grep -H . online present possible smt/control smt/active 2>/dev/null; true'
probe cpufreq 5 '
cd /sys/devices/system/cpu || exit 1
grep -H . cpufreq/boost intel_pstate/status intel_pstate/no_turbo 2>/dev/null
for f in scaling_governor scaling_driver scaling_cur_freq scaling_min_freq scaling_max_freq cpuinfo_min_freq cpuinfo_max_freq; do
    grep -H . cpu[0-9]*/cpufreq/$f 2>/dev/null
done
true'
probe cpuidle 5 'grep -H . /sys/devices/system/cpu/cpuidle/current_driver /sys/devices/system/cpu/cpuidle/current_governor /sys/devices/system/cpu/cpuidle/current_governor_ro /sys/module/intel_idle/parameters/max_cstate 2>/dev/null; true'
probe vulnerabilities 5 '[ -d /sys/devices/system/cpu/vulnerabilities ] || { echo "this kernel does not report CPU vulnerabilities"; exit 4; }; grep -H . /sys/devices/system/cpu/vulnerabilities/*'
probe meminfo 5 'cat /proc/meminfo'
probe thp 5 'grep -H . /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag'
probe vm_sysctls 5 'grep -H . /proc/sys/vm/swappiness /proc/sys/vm/overcommit_memory /proc/sys/vm/zone_reclaim_mode /proc/sys/vm/dirty_ratio /proc/sys/vm/dirty_background_ratio /proc/sys/kernel/numa_balancing /proc/sys/kernel/sched_autogroup_enabled 2>/dev/null; true'
probe numa 5 'cd /sys/devices/system/node 2>/dev/null || { echo "no NUMA information in sysfs"; exit 4; }; grep -H . node[0-9]*/cpulist 2>/dev/null || grep -H . node[0-9]*/cpumap; grep -H MemTotal node[0-9]*/meminfo 2>/dev/null; true'
probe clocksource 5 'grep -H . /sys/devices/system/clocksource/clocksource0/current_clocksource /sys/devices/system/clocksource/clocksource0/available_clocksource'
probe net_sysctls 5 'grep -H . /proc/sys/net/core/somaxconn /proc/sys/net/core/netdev_max_backlog /proc/sys/net/core/rmem_max /proc/sys/net/core/wmem_max /proc/sys/net/ipv4/tcp_congestion_control /proc/sys/net/ipv4/tcp_tw_reuse /proc/sys/net/ipv4/tcp_rmem /proc/sys/net/ipv4/tcp_wmem /proc/sys/net/ipv4/ip_local_port_range /proc/sys/net/ipv4/tcp_max_syn_backlog /proc/sys/net/ipv4/tcp_fin_timeout /proc/sys/net/ipv4/tcp_slow_start_after_idle /proc/sys/net/netfilter/nf_conntrack_max 2>/dev/null; true'
probe net_interfaces 5 '
for i in /sys/class/net/*; do
    [ -e "$i" ] || continue
    echo "if=${i##*/}"
    grep -H . "$i/mtu" "$i/speed" "$i/operstate" "$i/duplex" 2>/dev/null
    echo "queues=$(ls -d "$i"/queues/rx-* 2>/dev/null | wc -l) $(ls -d "$i"/queues/tx-* 2>/dev/null | wc -l)"
    [ -e "$i/device/driver" ] && echo "driver=$(basename "$(readlink "$i/device/driver")")"
done
true'
probe ethtool 10 '
command -v ethtool >/dev/null 2>&1 || { echo "ethtool: not found"; exit 127; }
for i in /sys/class/net/*; do
    n=${i##*/}
    [ "$n" = lo ] && continue
    echo "if=$n"
    ethtool -k "$n" 2>/dev/null | grep -E "^(tcp-segmentation-offload|generic-segmentation-offload|generic-receive-offload|large-receive-offload|rx-checksumming|tx-checksumming|scatter-gather):"
    ethtool -l "$n" 2>/dev/null | sed -n "/^Current hardware settings/,\$p" | grep -E "^(RX|TX|Combined):"
done
true'
probe block 5 '
for b in /sys/block/*; do
    n=${b##*/}
    case $n in loop*|ram*|zram*) continue;; esac
    echo "dev=$n"
    grep -H . "$b/queue/rotational" "$b/queue/scheduler" "$b/queue/write_cache" "$b/queue/nr_requests" "$b/queue/read_ahead_kb" "$b/size" 2>/dev/null
done
true'
probe mounts 5 'cat /proc/self/mounts'
probe limits 5 'grep -E "^Max (open files|processes) " /proc/self/limits; grep -H . /proc/sys/kernel/pid_max /proc/sys/fs/file-max /proc/sys/kernel/threads-max'
probe tuned 5 '
if [ -r /etc/tuned/active_profile ]; then cat /etc/tuned/active_profile
elif command -v tuned-adm >/dev/null 2>&1; then tuned-adm active
else echo "tuned: not found"; exit 127; fi'
probe irqbalance 5 'if grep -qx irqbalance /proc/[0-9]*/comm 2>/dev/null; then echo running; else echo stopped; fi'
probe tools 5 '
for t in perf tcpdump tshark wrk ab hey k6 vmstat mpstat iostat pidstat sar ethtool lscpu numactl cpupower tuned-adm strace ss nstat bpftrace timeout sudo; do
    echo "$t=$(command -v "$t" 2>/dev/null)"
done'
probe service 5 '
[ -n "$PC_SERVICE" ] || { echo "none requested"; exit 0; }
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
v2=$(sed -n "s/^0:://p" "/proc/$pid/cgroup")
if [ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ] && [ -d "/sys/fs/cgroup$v2" ]; then
    d="/sys/fs/cgroup$v2"
    echo "cgroup=v2 $v2"
    grep -H . "$d/cpu.max" "$d/cpu.weight" "$d/cpuset.cpus.effective" "$d/memory.max" 2>/dev/null
    grep -E "^(nr_periods|nr_throttled|throttled_usec) " "$d/cpu.stat" 2>/dev/null | sed "s/^/cpu.stat:/"
else
    cpu=$(sed -n "s/^[0-9]*:[^:]*\\bcpu\\b[^:]*://p" "/proc/$pid/cgroup" | head -n 1)
    cpuset=$(sed -n "s/^[0-9]*:cpuset://p" "/proc/$pid/cgroup" | head -n 1)
    mem=$(sed -n "s/^[0-9]*:memory://p" "/proc/$pid/cgroup" | head -n 1)
    echo "cgroup=v1 $cpu"
    for d in "/sys/fs/cgroup/cpu,cpuacct$cpu" "/sys/fs/cgroup/cpu$cpu"; do
        [ -d "$d" ] || continue
        grep -H . "$d/cpu.cfs_quota_us" "$d/cpu.cfs_period_us" "$d/cpu.shares" 2>/dev/null
        grep -E "^(nr_periods|nr_throttled|throttled_time) " "$d/cpu.stat" 2>/dev/null | sed "s/^/cpu.stat:/"
        break
    done
    grep -H . "/sys/fs/cgroup/cpuset$cpuset/cpuset.cpus" "/sys/fs/cgroup/memory$mem/memory.limit_in_bytes" 2>/dev/null
fi
true'

"""System, virtualisation, clock, limits, tuning and tools."""

import re

from collectors.parsers.common import basename, key_values, number, path_values

# Kernel command-line switches that turn CPU vulnerability mitigations off or change them.
MITIGATION_SWITCHES = (
    "mitigations",
    "nopti",
    "pti",
    "nospectre_v1",
    "nospectre_v2",
    "spectre_v2",
    "spectre_v2_user",
    "spectre_bhi",
    "spec_store_bypass_disable",
    "nospec_store_bypass_disable",
    "ssbd",
    "l1tf",
    "mds",
    "tsx",
    "tsx_async_abort",
    "mmio_stale_data",
    "retbleed",
    "srbds",
    "gather_data_sampling",
    "spec_rstack_overflow",
    "reg_file_data_sampling",
    "nosmt",
    "noibrs",
    "noibpb",
    "kpti",
)

# DMI product or vendor text that names a hypervisor, for hosts without systemd-detect-virt.
_DMI_HYPERVISORS = {
    "vmware": "vmware",
    "virtualbox": "oracle",
    "kvm": "kvm",
    "qemu": "qemu",
    "hvm domu": "xen",
    "xen": "xen",
    "amazon ec2": "amazon",
    "google compute engine": "google",
    "virtual machine": "microsoft",
    "openstack": "kvm",
}


def parse_uname(text: str, **_) -> dict:
    values = {basename(path): value for path, value in path_values(text).items()}
    if not values.get("osrelease"):
        raise ValueError("no kernel release")
    facts = {
        "kernel.release": values["osrelease"],
        "kernel.version": values.get("version", ""),
        "system.hostname": values.get("hostname", ""),
    }
    if values.get("arch"):
        facts["system.arch"] = values["arch"]
    return facts


def parse_os_release(text: str, **_) -> dict:
    values = {k: v.strip('"') for k, v in key_values(text).items()}
    if "ID" not in values and "NAME" not in values:
        raise ValueError("no NAME or ID in os-release")
    facts = {"os.name": values.get("NAME", values.get("ID", ""))}
    if "VERSION_ID" in values:
        facts["os.version"] = values["VERSION_ID"]
    if "PRETTY_NAME" in values:
        facts["os.pretty_name"] = values["PRETTY_NAME"]
    return facts


def kernel_part(cmdline: str) -> str:
    """The command line up to ' -- ': what follows is for init, not the kernel."""
    return cmdline.split(" -- ", 1)[0]


def mitigation_switches(cmdline: str) -> str:
    found = []
    for word in kernel_part(cmdline).split():
        name = word.split("=", 1)[0]
        if name in MITIGATION_SWITCHES:
            found.append(word)
    return " ".join(sorted(found))


# Words that name this machine's disks and images rather than set the kernel's behaviour.
_IDENTITY_PARAMS = ("BOOT_IMAGE", "root", "initrd", "resume", "rd.", "crashkernel", "cryptdevice")


def cmdline_settings(cmdline: str) -> str:
    """The kernel's command line without the words that always differ between two machines,
    and without the mitigation switches (kernel.mitigation_switches holds those)."""
    kept = [
        word
        for word in kernel_part(cmdline).split()
        if not word.split("=", 1)[0].startswith(_IDENTITY_PARAMS)
        and word.split("=", 1)[0] not in MITIGATION_SWITCHES
    ]
    return " ".join(sorted(kept))


def parse_cmdline(text: str, **_) -> dict:
    cmdline = text.strip()
    if not cmdline:
        raise ValueError("empty kernel command line")
    facts = {
        "kernel.cmdline": cmdline,
        "kernel.cmdline_settings": cmdline_settings(cmdline),
        "kernel.mitigation_switches": mitigation_switches(cmdline),
    }
    for word in kernel_part(cmdline).split():
        if word.startswith("transparent_hugepage="):
            facts["kernel.cmdline_thp"] = word.split("=", 1)[1]
    return facts


def parse_uptime(text: str, **_) -> dict:
    lines = text.split("\n")
    uptime = float(lines[0].split()[0])
    load = lines[1].split()
    return {
        "system.uptime_seconds": uptime,
        "system.load1": float(load[0]),
        "system.load5": float(load[1]),
        "system.load15": float(load[2]),
        "system.boot_id": lines[2].strip(),
    }


_ID = re.compile(r"^uid=(\d+)\(([^)]*)\)")


def parse_access(text: str, **_) -> dict:
    """`id` output (uid=1000(perf) gid=...) and whether sudo -n works."""
    found = _ID.match(text.strip())
    if found is None:
        raise ValueError("no uid in the output of id")
    return {
        "access.user": found.group(2),
        "access.uid": int(found.group(1)),
        "access.sudo": key_values(text).get("sudo") == "1",
    }


def _virt_from_dmi(vendor: str, product: str) -> str | None:
    text = f"{vendor} {product}".lower()
    for marker, name in _DMI_HYPERVISORS.items():
        if marker in text:
            return name
    return None


def parse_virt(text: str, **_) -> dict:
    values = key_values(text)
    cgroups = [line for line in text.splitlines() if line.startswith("pid1_cgroup=")]
    if not cgroups and not any(key in values for key in ("vm", "dmi_sys_vendor", "container")):
        # The probe always prints PID 1's cgroups: without them this is not its output.
        raise ValueError("no virtualisation output")
    vendor, product = values.get("dmi_sys_vendor", ""), values.get("dmi_product_name", "")
    facts = {}
    if vendor:
        facts["dmi.vendor"] = vendor
    if product:
        facts["dmi.product"] = product
    if values.get("vm"):
        facts["virt.type"] = values["vm"]
    elif guess := _virt_from_dmi(vendor, product):
        facts["virt.type"] = guess
    container = values.get("container", "")
    if not container or container == "none":
        if values.get("dockerenv") == "1":
            container = "docker"
        elif values.get("containerenv") == "1":
            container = "podman"
        elif any(marker in line for line in cgroups for marker in ("kubepods", "docker", "lxc")):
            container = "container"
        else:
            container = "none"
    facts["virt.container"] = container
    return facts


def parse_clocksource(text: str, **_) -> dict:
    values = {basename(path): value for path, value in path_values(text).items()}
    if "current_clocksource" not in values:
        raise ValueError("no current clocksource")
    return {
        "clocksource.current": values["current_clocksource"],
        "clocksource.available": " ".join(values.get("available_clocksource", "").split()),
    }


def _limit(value: str) -> int | str:
    return "unlimited" if value == "unlimited" else int(value)


def parse_limits(text: str, **_) -> dict:
    facts = {}
    for line in text.splitlines():
        if line.startswith("Max open files"):
            facts["limits.open_files"] = _limit(line.split()[3])
        elif line.startswith("Max processes"):
            facts["limits.max_user_processes"] = _limit(line.split()[2])
    names = {
        "pid_max": "limits.pid_max",
        "file-max": "limits.file_max",
        "threads-max": "limits.threads_max",
    }
    for path, value in path_values(text).items():
        if basename(path) in names:
            facts[names[basename(path)]] = number(value)
    if not facts:
        raise ValueError("no limits found")
    return facts


def parse_tuned(text: str, **_) -> dict:
    """/etc/tuned/active_profile (one line; merged profiles are space-separated) or the
    output of `tuned-adm active`."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    active = [line for line in lines if line.startswith("Current active profile:")]
    if active:
        profile = active[0].split(":", 1)[1].strip()
    elif len(lines) == 1 and ":" not in lines[0]:
        profile = lines[0]
    else:
        raise ValueError(f"not a tuned profile: {text[:80]!r}")
    if not profile:
        raise ValueError("empty tuned profile")
    return {"tuned.profile": profile}


def parse_irqbalance(text: str, **_) -> dict:
    state = text.strip()
    if state not in ("running", "stopped"):
        raise ValueError(f"unexpected irqbalance state {state[:40]!r}")
    return {"irqbalance.running": state == "running"}


def parse_tools(text: str, **_) -> dict:
    values = key_values(text)
    if not values:
        raise ValueError("no tools listed")
    return {f"tools.{name}": bool(path) for name, path in values.items()}

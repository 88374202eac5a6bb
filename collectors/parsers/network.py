"""Network sysctls, interfaces (MTU, speed, queues, driver) and offloads."""

from collectors.parsers.common import basename, key_values, number, path_values

# Interfaces without a device driver are virtual (bridges, veth, tunnels): left out, as
# every host has its own set of them.
_OFFLOADS = {
    "tcp-segmentation-offload": "tso",
    "generic-segmentation-offload": "gso",
    "generic-receive-offload": "gro",
    "large-receive-offload": "lro",
    "rx-checksumming": "rx_checksum",
    "tx-checksumming": "tx_checksum",
    "scatter-gather": "sg",
}


def parse_net_sysctls(text: str, **_) -> dict:
    facts = {}
    for path, value in path_values(text).items():
        if path.startswith("/proc/sys/"):
            name = path.removeprefix("/proc/sys/").replace("/", ".")
            facts[name] = number(" ".join(value.split()))
    if not facts:
        raise ValueError("no network sysctls")
    return facts


def _interfaces(text: str) -> dict[str, dict[str, str]]:
    interfaces: dict[str, dict[str, str]] = {}
    current = None
    for line in text.splitlines():
        if line.startswith("if="):
            current = interfaces.setdefault(line[3:].strip(), {})
        elif current is not None:
            if line.startswith("/"):
                path, _, value = line.partition(":")
                current[basename(path)] = value.strip()
            else:
                current.update(key_values(line))
    return interfaces


def parse_net_interfaces(text: str, **_) -> dict:
    facts = {}
    interfaces = _interfaces(text)
    if not interfaces:
        raise ValueError("no interfaces")
    for name, values in interfaces.items():
        if not values.get("driver"):
            continue
        prefix = f"net.if.{name}"
        facts[f"{prefix}.driver"] = values["driver"]
        if values.get("mtu", "").isdigit():
            facts[f"{prefix}.mtu"] = int(values["mtu"])
        speed = values.get("speed", "")
        if speed.isdigit():
            facts[f"{prefix}.speed_mbps"] = int(speed)
        if values.get("operstate"):
            facts[f"{prefix}.state"] = values["operstate"]
        queues = values.get("queues", "").split()
        if len(queues) == 2:
            facts[f"{prefix}.rx_queues"], facts[f"{prefix}.tx_queues"] = map(int, queues)
    facts["net.interfaces"] = " ".join(
        sorted(name for name, values in interfaces.items() if values.get("driver"))
    )
    return facts


def parse_ethtool(text: str, **_) -> dict:
    """`ethtool -k` (offloads) per interface, after `if=NAME`. Queue counts come from sysfs
    (net_interfaces), so `ethtool -l` is not needed."""
    facts = {}
    current = None
    for line in text.splitlines():
        if line.startswith("if="):
            current = line[3:].strip()
            continue
        # Indented sub-features (tx-checksum-ipv4 under tx-checksumming) are not the feature.
        key, sep, value = line.partition(":")
        if not sep or current is None or key not in _OFFLOADS or not value.strip():
            continue
        facts[f"net.if.{current}.offload.{_OFFLOADS[key]}"] = value.split()[0]
    return facts

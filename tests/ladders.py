"""Ladder test helpers: hosts placed for a ladder, and what is installed or left running.

A pytest plugin (tests/conftest.py loads it): the `ladder_hosts` and `place_ladder_hosts`
fixtures.
"""

import os
import subprocess
from pathlib import Path

import pytest

from investigations.choices import HostRole
from investigations.services.inventory import credential_create, host_create, member_add
from tests.conftest import TEST_QUEUE, ApiClient, require_real_tool, trust_host_key
from tests.sshd import live_namespaces


def installed(tool: str) -> bool:
    return (
        subprocess.run(["sh", "-c", 'command -v "$1"', "sh", tool], capture_output=True).returncode
        == 0
    )


def require(tool: str) -> None:
    """Skip without the tool (fail under PERFCASE_REQUIRE_REAL_TOOLS=1)."""
    if not installed(tool):
        require_real_tool(f"{tool} is not installed")


def none_left(tool: str) -> bool:
    """No process of this name runs for this test run: in one of its test hosts, or started
    by its worker (the local transport), whose environment names this run's queue. Another
    run beside this one may have its own."""
    found = subprocess.run(["pgrep", "-x", tool], capture_output=True, text=True).stdout.split()
    return not any(_of_this_run(int(pid)) for pid in found)


def _of_this_run(pid: int) -> bool:
    try:
        if os.readlink(f"/proc/{pid}/ns/mnt") in live_namespaces():
            return True
        environment = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return False  # it ended meanwhile
    return f"PERFCASE_QUEUE={TEST_QUEUE}".encode() in environment


@pytest.fixture
def ladder_hosts(personas):
    """A load generator and a service host on each side, on paper: addresses in 10.0.0.0/8
    that no test ever contacts. Host rows by (side, role)."""
    hosts = {}
    for number, side in enumerate(("a", "b"), start=1):
        for role in (HostRole.LOAD_GENERATOR, HostRole.SERVICE):
            host = host_create(
                team=personas.team,
                name=f"{role.replace('_', '-')}-{side}",
                address=f"10.0.{number}.{1 if role == HostRole.LOAD_GENERATOR else 10}",
                port=22,
                username="perf",
            )
            member_add(
                investigation=personas.investigation,
                user=personas.lead,
                host=host,
                side_key=side,
                role=role,
            )
            hosts[(side, role)] = host
    return hosts


@pytest.fixture
def place_ladder_hosts(personas, test_hosts, start_host):
    """place(options=None): a load generator and a service host on each side of the
    personas' investigation, as real sshd test hosts with their keys trusted; options per
    host (e.g. hide_tools) by (side, role). Returns the Host rows by (side, role)."""
    credential = credential_create(
        team=personas.team, user=personas.member, name="probe", private_key=test_hosts.client_key
    )
    api = ApiClient(personas.member)

    def place(options=None):
        options = options or {}
        hosts = {}
        for side in ("a", "b"):
            for role in ("load_generator", "service"):
                test_host = start_host(
                    f"{role[:4]}-{side}", dump=None, **options.get((side, role), {})
                )
                host = host_create(
                    team=personas.team,
                    name=test_host.name,
                    address=test_host.address,
                    port=test_host.port,
                    username=test_host.username,
                    credential=credential,
                )
                member_add(
                    investigation=personas.investigation,
                    user=personas.member,
                    host=host,
                    side_key=side,
                    role=role,
                )
                trust_host_key(api, host)
                hosts[(side, role)] = host
        return hosts

    return place

"""Ladder test helpers: hosts placed for a ladder, and what is installed or left running.

A pytest plugin (tests/conftest.py loads it): the `place_ladder_hosts` fixture.
"""

import subprocess

import pytest

from investigations.services.inventory import credential_create, host_create, member_add
from tests.conftest import ApiClient, require_real_tool


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
    """No process of this name runs on this machine (where every test host runs)."""
    return subprocess.run(["pgrep", "-x", tool], capture_output=True).returncode == 1


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
                scanned = api.post(f"/api/hosts/{host.pk}/host-key/scan").body
                api.post(
                    f"/api/hosts/{host.pk}/host-key/trust",
                    {"fingerprint": scanned["fingerprint"]},
                )
                hosts[(side, role)] = host
        return hosts

    return place

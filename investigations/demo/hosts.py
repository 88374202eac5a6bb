"""The demo case's hosts: one service host per side, never contacted."""

from investigations.choices import HostRole, HostTransport
from investigations.models import Host, Team
from investigations.services.inventory import host_create, member_add

# One service host per side: (name, address, its probe output in files/). The addresses are
# in 192.0.2.0/24 (RFC 5737, documentation only). SSH without a credential or a trusted host
# key: a collection from them fails before it connects.
DEMO_HOSTS = {
    "a": ("order-api-container-host", "192.0.2.10", "facts-a-container-host.txt"),
    "b": ("order-api-vm", "192.0.2.20", "facts-b-vm.txt"),
}


def hosts_load(*, team: Team, investigation, user) -> dict[str, Host]:
    """The service host of each side, placed on it: the environments pair up."""
    hosts = {}
    for side, (name, address, _) in DEMO_HOSTS.items():
        # Kept from an earlier demo whose investigation was deleted: host names are unique.
        host = Host.objects.filter(team=team, name=name).first() or host_create(
            team=team,
            name=name,
            address=address,
            port=22,
            username="deploy",
            transport=HostTransport.SSH,
        )
        member_add(
            investigation=investigation,
            user=user,
            host=host,
            side_key=side,
            role=HostRole.SERVICE,
        )
        hosts[side] = host
    return hosts

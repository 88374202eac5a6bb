"""Rules about the network interfaces."""

from django.utils.translation import gettext_noop as _

from collectors.phrase import Phrase
from investigations.analysis.rules.base import Verdict, rule
from investigations.choices import FindingSeverity as Severity


def _nic_summary(facts: dict) -> dict[str, tuple]:
    names = str(facts.get("net.interfaces", "")).split()
    return {
        name: tuple(facts.get(f"net.if.{name}.{field}") for field in ("rx_queues", "tx_queues"))
        for name in names
        if facts.get(f"net.if.{name}.state", "up") == "up"
    }


@rule("net.if.*.rx_queues", "net.if.*.tx_queues")
def nic_queues(a: dict, b: dict) -> list[Verdict]:
    qa, qb = _nic_summary(a), _nic_summary(b)
    if not qa or not qb:
        return []
    most_a = max((sum(q for q in queues if q) for queues in qa.values()), default=0)
    most_b = max((sum(q for q in queues if q) for queues in qb.values()), default=0)
    if most_a == most_b:
        return []
    return [
        Verdict(
            rule="nic_queues",
            severity=Severity.MEDIUM,
            title=Phrase(_("Network interfaces have different numbers of queues")),
            explanation=Phrase(
                _(
                    "With fewer receive and transmit queues, packet processing lands on fewer "
                    "cores; at high packet rates one core saturates in softirq while others "
                    "idle."
                )
            ),
            recommendation=Phrase(
                _(
                    "Compare `ethtool -l`, raise the channel count (`ethtool -L <if> combined "
                    "N`) and check IRQ affinity (irqbalance)."
                )
            ),
            side_a=", ".join(f"{n}: rx {q[0]}, tx {q[1]}" for n, q in sorted(qa.items())),
            side_b=", ".join(f"{n}: rx {q[0]}, tx {q[1]}" for n, q in sorted(qb.items())),
        )
    ]

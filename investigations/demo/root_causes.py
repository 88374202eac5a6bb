"""The demo cases' root causes: knowledge-base entries shipped with Perfcase (migration
0013), each confirmed with the findings that prove it and the fix."""

from investigations.choices import EvidenceKind, FindingStatus
from investigations.models import Finding, RootCause
from investigations.services.findings import finding_set_status
from investigations.services.knowledge import case_root_cause_confirm

# The main case's: the governor entry, confirmed with the governor finding as its evidence.
DEMO_ROOT_CAUSE = "cpu-governor-powersave"
DEMO_FIX = (
    "Governor set to performance on every container host (cpupower frequency-set -g "
    "performance, kept across reboots by the tuned profile); the containers then matched the "
    "VMs."
)


def root_cause_load(
    *, investigation, user, slug: str, rules: tuple, fix: str, confirm_findings: bool = False
) -> RootCause | None:
    """The entry `slug`, confirmed with the case's findings of `rules` (themselves marked
    confirmed first if `confirm_findings`) and the fix; None if the entry is not there
    (deleted from the knowledge base)."""
    root_cause = RootCause.objects.filter(slug=slug).first()
    if root_cause is None:
        return None
    proof = Finding.objects.filter(investigation=investigation, rule__in=rules)
    if confirm_findings:
        for found in proof:
            finding_set_status(finding=found, user=user, status=FindingStatus.CONFIRMED)
    case_root_cause_confirm(
        investigation=investigation,
        user=user,
        root_cause=root_cause,
        evidence=[
            {"kind": EvidenceKind.FINDING, "id": pk} for pk in proof.values_list("pk", flat=True)
        ],
        fix=fix,
    )
    return root_cause


def demo_root_cause_load(*, investigation, user) -> bool:
    """The main case's; False if its entry is not there."""
    return (
        root_cause_load(
            investigation=investigation,
            user=user,
            slug=DEMO_ROOT_CAUSE,
            rules=("cpu_governor",),
            fix=DEMO_FIX,
        )
        is not None
    )

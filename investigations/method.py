"""The method's steps: what every investigation's guided checklist starts with, in order
(services/checklist.py completes them from evidence)."""

from dataclasses import dataclass

from django.utils.translation import gettext_lazy as _


@dataclass(frozen=True)
class Step:
    key: str
    title: str
    description: str


METHOD = [
    Step(
        "symptom",
        _("State the symptom exactly"),
        _(
            "Name the metric, the load under which it was measured and its value on each "
            "side: 'p99 1445 ms on A, 557 ms on B at 500 concurrent users', not 'A is slow'."
        ),
    ),
    Step(
        "path",
        _("Draw the traffic path"),
        _(
            "Every hop on both sides, from the load generator to the deepest dependency: "
            "entry points and their sizes, the service and its limits, databases and "
            "middleware."
        ),
    ),
    Step(
        "pairs",
        _("Pair the environments"),
        _("Place the hosts of each role on both sides, so that like compares with like."),
    ),
    Step(
        "sides_match",
        _("Confirm the sides match"),
        _(
            "Host facts from both hosts of every pair; deployment files, the image and the "
            "checksums of the packages inside it; configuration. Every finding reviewed."
        ),
    ),
    Step(
        "rule_out_path",
        _("Rule out the path"),
        _(
            "Mark each hop ruled out or suspect: new-connection rate and bandwidth of the "
            "load balancer, gateway CPU, SNAT, the saturation of each dependency."
        ),
    ),
    Step(
        "ladder",
        _("Ladder load test to the knee"),
        _(
            "Step the load up on both sides together and find the step where they begin to "
            "differ: the knee. Evidence is clearest there."
        ),
    ),
    Step(
        "host_at_knee",
        _("Look at the host at the knee"),
        _(
            "CPU by type, run queue, context switches, interrupts and thread counts on both "
            "sides at the knee load."
        ),
    ),
    Step(
        "packets_at_knee",
        _("Capture packets at the knee"),
        _(
            "Per-connection timing on both sides: who waits, how long, and how many "
            "connections are opened."
        ),
    ),
    Step(
        "profile_at_knee",
        _("Profile the CPU at the knee"),
        _("Record CPU profiles on both sides and compare the hot paths."),
    ),
    Step(
        "root_cause",
        _("Name the root cause and verify the fix"),
        _("Fix it, then run the same ladder again: the gap must be gone."),
    ),
    Step(
        "write_up",
        _("Write it up"),
        _("The timeline, the root cause, and the alert that would have caught it earlier."),
    ),
]

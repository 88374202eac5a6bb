"""The signals of a knowledge-base entry: which evidence supports it, which speaks against it,
and how much each weighs. Pure: a signal is a small dict stored with the entry
(RootCause.signals), validated here, read by the scoring engine (analysis/hypotheses.py).

    {"source": "finding", "rule": "cpu_governor", "weight": 0.8, "direction": "for",
     "decisive": true}
    {"source": "finding", "rule": "cgroup_cpu_limit", "subject": "service.cgroup.cpuset", ...}
    {"source": "baseline", "metric": "cpu_1.events_per_second", "verdict": "about_equal",
     "weight": 0.3, "direction": "against"}
    {"source": "capture", "measure": "tls_handshakes", "verdict": "differs", ...}
    {"source": "profile", "measure": "lock_contention", "verdict": "same", ...}
    {"source": "ladder", "verdict": "differs", ...}

A capture or profile measure "differs" when its rule found one side apart from the other
(the rule's finding is on the case) and is the "same" when a pair of that kind was compared
and the rule found nothing; a baseline row is "worse" when one side is clearly worse, or
"about_equal"; a ladder "differs" when its sides part at some step.
"""

import re

from django.utils.translation import gettext_lazy as _

SOURCES = ("finding", "baseline", "capture", "profile", "ladder")
DIRECTIONS = ("for", "against")
# The capture and profile measures, each read through the rule that compares it.
CAPTURE_MEASURES = {
    "connection_churn": "capture_connection_churn",
    "tls_handshakes": "capture_tls_handshakes",
    "request_pauses": "capture_request_pauses",
    "retransmissions": "capture_retransmissions",
    "zero_windows": "capture_zero_windows",
    "slow_handshakes": "capture_slow_handshakes",
}
PROFILE_MEASURES = {
    "tls_crypto": "profile_tls_crypto",
    "lock_contention": "profile_lock_contention",
    "garbage_collection": "profile_garbage_collection",
    "page_faults": "profile_page_faults",
    "syscalls_network": "profile_syscalls_network",
    "hypervisor": "profile_hypervisor",
}
MEASURE_VERDICTS = ("differs", "same")
BASELINE_VERDICTS = ("worse", "about_equal")
MAX_SIGNALS = 30
# A rule name, a fact-key pattern (fnmatch), a baseline metric "benchmark.metric".
RULE = re.compile(r"^[a-z0-9_.]{1,64}$")
SUBJECT = re.compile(r"^[A-Za-z0-9_.*?\[\]-]{1,120}$")
METRIC = re.compile(r"^[a-z0-9_]{1,40}\.[a-z0-9_]{1,40}$")

FIELDS = {
    "finding": ({"rule"}, {"subject"}),
    "baseline": ({"metric", "verdict"}, set()),
    "capture": ({"measure", "verdict"}, set()),
    "profile": ({"measure", "verdict"}, set()),
    "ladder": ({"verdict"}, set()),
}
COMMON = {"source", "weight", "direction", "decisive"}


def _one(signal, number: int) -> tuple[dict | None, str | None]:
    """The signal cleaned, or the reason it is not one (in the reader's language)."""
    where = _("Signal %(number)s") % {"number": number}
    if not isinstance(signal, dict):
        return None, _("%(where)s: write each signal as an object {…}.") % {"where": where}
    source = signal.get("source")
    if source not in SOURCES:
        return None, _("%(where)s: source must be one of %(choices)s.") % {
            "where": where,
            "choices": ", ".join(SOURCES),
        }
    required, optional = FIELDS[source]
    unknown = set(signal) - COMMON - required - optional
    if unknown:
        return None, _("%(where)s: unknown field %(field)s.") % {
            "where": where,
            "field": ", ".join(sorted(unknown)),
        }
    missing = required - set(signal)
    if missing:
        return None, _("%(where)s: %(field)s is required for a %(source)s signal.") % {
            "where": where,
            "field": ", ".join(sorted(missing)),
            "source": source,
        }
    weight = signal.get("weight")
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not 0 < weight <= 1:
        return None, _("%(where)s: weight must be a number above 0 and at most 1.") % {
            "where": where
        }
    direction = signal.get("direction", "for")
    if direction not in DIRECTIONS:
        return None, _("%(where)s: direction must be for or against.") % {"where": where}
    decisive = signal.get("decisive", False)
    if not isinstance(decisive, bool) or (decisive and direction != "for"):
        return None, _("%(where)s: decisive is true or false, and only for a signal for it.") % {
            "where": where
        }
    cleaned = {"source": source, "weight": round(float(weight), 3), "direction": direction}
    if decisive:
        cleaned["decisive"] = True
    problem = None
    if source == "finding":
        if not isinstance(signal["rule"], str) or not RULE.match(signal["rule"]):
            problem = _("rule must be a finding rule's name, such as cpu_governor.")
        elif "subject" in signal and (
            not isinstance(signal["subject"], str) or not SUBJECT.match(signal["subject"])
        ):
            problem = _("subject must be a fact key or a pattern, such as service.cgroup.*.")
        else:
            cleaned["rule"] = signal["rule"]
            if signal.get("subject"):
                cleaned["subject"] = signal["subject"]
    elif source == "baseline":
        if not isinstance(signal["metric"], str) or not METRIC.match(signal["metric"]):
            problem = _("metric must be benchmark.metric, such as cpu_1.events_per_second.")
        elif signal["verdict"] not in BASELINE_VERDICTS:
            problem = _("verdict must be one of %(choices)s.") % {
                "choices": ", ".join(BASELINE_VERDICTS)
            }
        else:
            cleaned |= {"metric": signal["metric"], "verdict": signal["verdict"]}
    else:
        measures = {"capture": CAPTURE_MEASURES, "profile": PROFILE_MEASURES}.get(source)
        if measures is not None and signal["measure"] not in measures:
            problem = _("measure must be one of %(choices)s.") % {"choices": ", ".join(measures)}
        elif signal["verdict"] not in MEASURE_VERDICTS:
            problem = _("verdict must be one of %(choices)s.") % {
                "choices": ", ".join(MEASURE_VERDICTS)
            }
        else:
            if measures is not None:
                cleaned["measure"] = signal["measure"]
            cleaned["verdict"] = signal["verdict"]
    if problem:
        return None, f"{where}: {problem}"
    return cleaned, None


def signals_clean(signals) -> tuple[list[dict], list[str]]:
    """The signals cleaned (known fields only, in a stable order) and the problems found, one
    sentence each naming the signal by its number (1-based)."""
    if not isinstance(signals, list):
        return [], [str(_("Give the signals as a list of objects."))]
    if len(signals) > MAX_SIGNALS:
        return [], [str(_("At most %(count)s signals.") % {"count": MAX_SIGNALS})]
    cleaned, problems = [], []
    for number, signal in enumerate(signals, start=1):
        one, problem = _one(signal, number)
        if problem:
            problems.append(str(problem))
        else:
            cleaned.append(one)
    return cleaned, problems


def signal_source_kind(signal: dict) -> str:
    """The kind of evidence a signal reads: facts, baseline, capture, profile or ladder (a
    finding's kind is its rule's)."""
    if signal["source"] != "finding":
        return signal["source"]
    rule = signal["rule"]
    if rule.startswith("capture_"):
        return "capture"
    if rule.startswith("profile_"):
        return "profile"
    if rule.startswith("baseline."):
        return "baseline"
    return "facts"


def signal_label(signal: dict) -> str:
    """What a signal reads, as a person reads it (in the reader's language)."""
    source = signal.get("source")
    if source == "finding":
        if signal.get("subject"):
            return str(
                _("Finding %(rule)s on %(subject)s")
                % {"rule": signal["rule"], "subject": signal["subject"]}
            )
        return str(_("Finding %(rule)s") % {"rule": signal["rule"]})
    if source == "baseline":
        if signal["verdict"] == "worse":
            return str(
                _("Baseline %(metric)s: one side clearly worse") % {"metric": signal["metric"]}
            )
        return str(_("Baseline %(metric)s: about equal") % {"metric": signal["metric"]})
    if source in ("capture", "profile"):
        what = {"capture": _("Capture"), "profile": _("CPU profile")}[source]
        if signal["verdict"] == "differs":
            return str(
                _("%(what)s %(measure)s: the sides differ")
                % {"what": what, "measure": signal["measure"]}
            )
        return str(
            _("%(what)s %(measure)s: the same on both sides")
            % {"what": what, "measure": signal["measure"]}
        )
    if source == "ladder":
        if signal["verdict"] == "differs":
            return str(_("Ladder: the sides part at some step"))
        return str(_("Ladder: the sides stay together"))
    return str(_("Capped: its decisive evidence is missing"))

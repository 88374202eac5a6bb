"""Perfcase is AGPL-3.0-or-later: every distribution it depends on (transitively, from its own
requirements, the dev extra's included) and every script it vendors must be under a licence
that an AGPL-3.0 work may include. Each installed distribution's licence is read from its
metadata: License-Expression (SPDX), else a License field that is an SPDX expression, else
the licence classifiers (all of them must be allowed); a package whose metadata says nothing
usable needs an entry in CHECKED_BY_HAND, and one under any other licence fails the test."""

import re
from importlib.metadata import Distribution, PackageNotFoundError, PathDistribution, distribution
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]

# SPDX ids of licences whose code an AGPL-3.0-or-later work may include: the permissive ones,
# the weak copyleft ones (MPL-2.0 through its secondary-licence clause, the LGPLs, 2.1 by its
# section 3), and the GPL/AGPL family from version 3 (GPLv3/AGPLv3 section 13) or with "or
# later". Not GPL-2.0-only, not proprietary or source-available terms (LicenseRef-*, BUSL,
# SSPL, Elastic, Commons Clause), nor anything unknown.
ALLOWED_SPDX = {
    "0BSD", "Apache-2.0", "BSD-2-Clause", "BSD-3-Clause", "BSL-1.0", "CC0-1.0", "HPND",
    "ISC", "MIT", "MIT-0", "MPL-2.0", "PSF-2.0", "Python-2.0", "Unlicense", "Zlib",
    "LGPL-2.1", "LGPL-2.1-only", "LGPL-2.1-or-later", "LGPL-3.0", "LGPL-3.0-only",
    "LGPL-3.0-or-later", "GPL-2.0-or-later", "GPL-2.0+", "GPL-3.0", "GPL-3.0-only",
    "GPL-3.0-or-later", "GPL-3.0+", "AGPL-3.0", "AGPL-3.0-only", "AGPL-3.0-or-later",
}  # fmt: skip
# Ids of licences it may not include, so that a License field naming one is judged by it.
REFUSED_SPDX = {
    "GPL-1.0", "GPL-1.0-only", "GPL-2.0", "GPL-2.0-only", "AGPL-1.0", "SSPL-1.0", "BUSL-1.1",
    "Elastic-2.0", "CC-BY-NC-4.0", "CC-BY-NC-SA-4.0", "JSON",
}  # fmt: skip
# Trove classifiers that name one of those. "BSD License" leaves the clause count open; the
# four-clause form (GPL-incompatible) is not used by any package here, and a package that
# states its SPDX expression is judged by that instead.
ALLOWED_CLASSIFIERS = {
    "License :: OSI Approved :: Apache Software License",
    "License :: OSI Approved :: BSD License",
    "License :: OSI Approved :: ISC License (ISCL)",
    "License :: OSI Approved :: MIT License",
    "License :: OSI Approved :: MIT No Attribution License (MIT-0)",
    "License :: OSI Approved :: Mozilla Public License 2.0 (MPL 2.0)",
    "License :: OSI Approved :: Python Software Foundation License",
    "License :: OSI Approved :: GNU Lesser General Public License v2 or later (LGPLv2+)",
    "License :: OSI Approved :: GNU Lesser General Public License v3 (LGPLv3)",
    "License :: OSI Approved :: GNU Lesser General Public License v3 or later (LGPLv3+)",
    "License :: OSI Approved :: GNU General Public License v2 or later (GPLv2+)",
    "License :: OSI Approved :: GNU General Public License v3 (GPLv3)",
    "License :: OSI Approved :: GNU General Public License v3 or later (GPLv3+)",
    "License :: OSI Approved :: GNU Affero General Public License v3",
    "License :: OSI Approved :: GNU Affero General Public License v3 or later (AGPLv3+)",
    "License :: OSI Approved :: The Unlicense (Unlicense)",
    "License :: CC0 1.0 Universal (CC0 1.0) Public Domain Dedication",
    "License :: OSI Approved :: Historical Permission Notice and Disclaimer (HPND)",
}
# Packages whose metadata names no licence usable here, each with its licence as checked by
# hand (and where). Empty today: every dependency's metadata says it.
CHECKED_BY_HAND: dict[str, str] = {}
# Vendored scripts under static/vendor/: each beside its licence file, which says this.
VENDORED = {"htmx": ("0BSD", "Zero-Clause BSD"), "plotly": ("MIT", "The MIT License")}


def spdx_allowed(expression: str) -> bool:
    """Whether an SPDX expression allows inclusion: OR needs one side, AND both, and
    `X WITH exception` is X (an exception only adds permissions)."""
    tokens = re.findall(r"\(|\)|[^\s()]+", expression)
    if not tokens:
        return False
    position = 0

    def take() -> str:
        nonlocal position
        if position >= len(tokens):
            raise ValueError(f"{expression!r} ends too soon")
        position += 1
        return tokens[position - 1]

    def term() -> bool:
        token = take()
        if token == "(":
            value = either()
            if take() != ")":
                raise ValueError(f"{expression!r}: unbalanced parentheses")
        else:
            value = token in ALLOWED_SPDX
        if position < len(tokens) and tokens[position] == "WITH":
            take(), take()
        return value

    def both() -> bool:
        value = term()
        while position < len(tokens) and tokens[position] == "AND":
            take()
            value = term() and value
        return value

    def either() -> bool:
        value = both()
        while position < len(tokens) and tokens[position] == "OR":
            take()
            value = both() or value
        return value

    value = either()
    if position != len(tokens):
        raise ValueError(f"{expression!r}: unexpected {tokens[position]!r}")
    return value


def _spdx_expression(text: str) -> bool:
    """Whether a License field is an SPDX expression of known ids (older metadata often
    holds a name such as "BSD" or a licence's whole text instead)."""
    tokens = re.findall(r"[^\s()]+", text)
    if not tokens:
        return False
    ids = [
        token
        for before, token in zip(["", *tokens[:-1]], tokens, strict=True)
        if token not in ("AND", "OR", "WITH") and before != "WITH"
    ]
    return all(i in ALLOWED_SPDX or i in REFUSED_SPDX or i.startswith("LicenseRef-") for i in ids)


def licence_verdict(dist: Distribution) -> tuple[bool, str]:
    """(allowed, the evidence) for an installed distribution."""
    metadata = dist.metadata
    name = metadata["Name"].lower().replace("_", "-")
    if name in CHECKED_BY_HAND:
        return spdx_allowed(CHECKED_BY_HAND[name]), f"checked by hand: {CHECKED_BY_HAND[name]}"
    expression = metadata.get("License-Expression")
    if expression:
        return spdx_allowed(expression), f"License-Expression: {expression}"
    text = (metadata.get("License") or "").strip()
    if _spdx_expression(text):
        return spdx_allowed(text), f"License: {text}"
    classifiers = [c for c in metadata.get_all("Classifier") or [] if c.startswith("License ::")]
    if classifiers:
        return set(classifiers) <= ALLOWED_CLASSIFIERS, f"classifiers: {classifiers}"
    return False, f"no licence in its metadata (License: {text[:60]!r})"


def dependencies(root: str = "perfcase", extras=("dev",)) -> dict[str, Distribution]:
    """Every distribution `root` requires, transitively, with the extras asked of each."""
    found: dict[str, Distribution] = {}
    seen: set[tuple[str, frozenset]] = set()
    todo = [(root, frozenset(extras))]
    while todo:
        name, wanted = todo.pop()
        try:
            dist = distribution(name)
        except PackageNotFoundError:
            pytest.fail(f"{name} is required but not installed")
        key = dist.metadata["Name"].lower().replace("_", "-")
        if (key, wanted) in seen:
            continue
        seen.add((key, wanted))
        found[key] = dist
        for line in dist.requires or []:
            requirement = Requirement(line)
            marker = requirement.marker
            if marker is None or any(
                marker.evaluate({**default_environment(), "extra": extra})
                for extra in (*wanted, "")
            ):
                todo.append((requirement.name, frozenset(requirement.extras)))
    found.pop(root)
    return found


def refused(found: dict[str, Distribution]) -> dict[str, str]:
    verdicts = {f"{name} {dist.version}": licence_verdict(dist) for name, dist in found.items()}
    return {name: evidence for name, (allowed, evidence) in verdicts.items() if not allowed}


def test_every_dependency_has_a_licence_agpl_may_include():
    found = dependencies()

    assert {"django", "celery", "redis", "paramiko", "pytest", "schemathesis"} <= set(found)
    assert not refused(found), "not includable in an AGPL-3.0 work"


def test_a_new_requirement_under_gpl_2_only_fails_the_check(tmp_path, monkeypatch):
    fake(tmp_path, "app-with-new-dep", "Requires-Dist: django\nRequires-Dist: gpl2lib>=1\n")
    fake(tmp_path, "gpl2lib", "License-Expression: GPL-2.0-only\n")
    monkeypatch.syspath_prepend(str(tmp_path))

    found = dependencies("app-with-new-dep", extras=())

    assert refused(found) == {"gpl2lib 1.0": "License-Expression: GPL-2.0-only"}


def test_perfcase_itself_is_agpl_3_or_later_with_the_licence_text():
    metadata = distribution("perfcase").metadata
    assert metadata["License-Expression"] == "AGPL-3.0-or-later"
    text = (ROOT / "LICENSE").read_text()
    assert text.lstrip().startswith("GNU AFFERO GENERAL PUBLIC LICENSE")
    assert "Version 3, 19 November 2007" in text and "13. Remote Network Interaction" in text
    core = (ROOT / "collectors/capture/_core.c").read_text()
    assert "tcp_analyze_sequence_number()" in core
    assert "SPDX-License-Identifier: GPL-2.0-or-later" in core


def fake(tmp_path, name: str, headers: str) -> Distribution:
    info = tmp_path / f"{name.replace('-', '_')}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.4\nName: {name}\nVersion: 1.0\n{headers}")
    return PathDistribution(info)


@pytest.mark.parametrize(
    "headers",
    [
        "License-Expression: GPL-2.0-only\n",
        "License-Expression: LicenseRef-Proprietary\n",
        "License-Expression: MIT AND SSPL-1.0\n",
        "License-Expression: BUSL-1.1\n",
        "License: GPL-2.0-only\nClassifier: License :: OSI Approved :: GNU General Public "
        "License v2 (GPLv2)\n",
        "Classifier: License :: Other/Proprietary License\n",
        "Classifier: License :: OSI Approved :: MIT License\nClassifier: License :: "
        "OSI Approved :: GNU General Public License v2 (GPLv2)\n",
        "License: Proprietary, all rights reserved\n",
        "",
    ],
)
def test_a_dependency_under_an_incompatible_or_unknown_licence_is_refused(tmp_path, headers):
    allowed, evidence = licence_verdict(fake(tmp_path, "newdep", headers))

    assert not allowed, evidence


@pytest.mark.parametrize(
    "headers",
    [
        "License-Expression: Apache-2.0 OR BSD-3-Clause\n",
        "License-Expression: GPL-2.0-only OR MIT\n",
        "License-Expression: (MIT AND PSF-2.0) OR GPL-2.0-only\n",
        "License-Expression: GPL-3.0-or-later WITH GCC-exception-3.1\n",
        "License: BSD-3-Clause\n",
        "License: BSD\nClassifier: License :: OSI Approved :: BSD License\n",
    ],
)
def test_an_includable_licence_is_read_from_whatever_the_metadata_states(tmp_path, headers):
    allowed, evidence = licence_verdict(fake(tmp_path, "newdep", headers))

    assert allowed, evidence


def test_every_vendored_script_sits_beside_its_licence():
    vendor = ROOT / "static" / "vendor"
    scripts = [p for p in vendor.iterdir() if p.suffix in (".js", ".css")]

    assert scripts
    for script in scripts:
        library = script.name.split(".")[0]
        assert library in VENDORED, f"{script.name}: name its licence in VENDORED"
        spdx, first_words = VENDORED[library]
        assert spdx_allowed(spdx)
        licence = vendor / f"{library}.LICENSE"
        assert licence.read_text().startswith(first_words), licence

"""No input makes a request run for long (issue 21, item 1).

Every regular expression of the code, every text field of every form, every validator and
every parser of an uploaded file is fed adversarial text at its largest size: runs of the
characters it accepts ended by one it refuses, the shape on which a pattern with nested
quantifiers backtracks exponentially and a search from every position turns quadratic. Each
must answer within a second (an exponential pattern takes minutes, so the margin is wide).

The lists are found, not written down: a new pattern, form or parser is covered as it lands.
"""

import ast
import importlib
import inspect
import itertools
import pkgutil
import re
from pathlib import Path
from re import _parser as sre_parse

import pytest
from django import forms

import collectors
import investigations
from tests.budget import within_a_second

ROOT = Path(__file__).resolve().parents[2]
PATTERN_TEXT = 50_000  # the text a pattern is tried on: quadratic work shows at this size
FIELD_TEXT = 100_000  # a field without max_length: what the service's own limits must bound
LINE = 1_000_000  # one line of an uploaded file


def _modules():
    for package in (collectors, investigations):
        yield package
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            if ".migrations." in info.name or info.name.endswith("__main__"):
                continue
            yield importlib.import_module(info.name)


MODULES = list(_modules())

# --- every pattern --------------------------------------------------------------------------

_CALLS = {"compile", "match", "search", "fullmatch", "findall", "finditer", "sub", "subn", "split"}


def _flags(node) -> int:
    """re.X, re.X | re.Y as written; anything else as no flags."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return int(getattr(re, node.attr, 0)) if node.value.id == "re" else 0
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _flags(node.left) | _flags(node.right)
    return 0


def _written_patterns():
    """Patterns written as literals in a call of re (re.search(r"...", text) and the like)."""
    for package in ("collectors", "investigations"):
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name)
                    and node.func.value.id == "re"
                    and node.func.attr in _CALLS
                    and node.args
                    and isinstance(node.args[0], ast.Constant)
                    and isinstance(node.args[0].value, str)
                ):
                    flags = [k.value for k in node.keywords if k.arg == "flags"]
                    position = 1 if node.func.attr == "compile" else 2
                    if len(node.args) > position:
                        flags.append(node.args[position])
                    compiled = re.compile(node.args[0].value, _flags(flags[0]) if flags else 0)
                    yield f"{path.relative_to(ROOT)}:{node.lineno}", compiled


def _patterns() -> dict:
    """Every pattern of the code: module-level compiled ones and literals in calls of re."""
    found = {}
    for module in MODULES:
        for name, value in vars(module).items():
            if isinstance(value, re.Pattern):
                found.setdefault((value.pattern, value.flags), f"{module.__name__}.{name}")
    for where, compiled in _written_patterns():
        found.setdefault((compiled.pattern, compiled.flags), where)
    return {where: re.compile(pattern, flags) for (pattern, flags), where in found.items()}


PATTERNS = _patterns()
_CATEGORIES = {
    "CATEGORY_DIGIT": "0",
    "CATEGORY_NOT_DIGIT": "a",
    "CATEGORY_SPACE": " \t",
    "CATEGORY_NOT_SPACE": "a0",
    "CATEGORY_WORD": "a_0",
    "CATEGORY_NOT_WORD": " .",
}
_GENERIC = "a0 ./-_:"
_REFUSED = "!\x00\n~\u2603"


def _pieces(pattern: re.Pattern) -> tuple[list[str], list[str], str]:
    """(the characters the pattern names, its runs of literal text, the literal text it
    starts with)."""
    chars, runs = [], []

    def walk(items) -> str:
        run, first = "", None
        for op, arg in items:
            name = str(op)
            if name == "LITERAL":
                run += chr(arg)
                chars.append(chr(arg))
                continue
            if run:
                runs.append(run)
            first = run if first is None else first
            run = ""
            if name in ("NOT_LITERAL", "ANY"):
                chars.extend(_GENERIC)
            elif name == "IN":
                for item, value in arg:
                    kind = str(item)
                    if kind == "LITERAL":
                        chars.append(chr(value))
                    elif kind == "RANGE":
                        chars.extend((chr(value[0]), chr(value[1])))
                    elif kind == "CATEGORY":
                        chars.extend(_CATEGORIES.get(str(value), _GENERIC))
                    elif kind == "NEGATE":
                        chars.extend(_GENERIC)
            elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
                walk(arg[2])
            elif name == "SUBPATTERN":
                walk(arg[-1])
            elif name == "ATOMIC_GROUP":
                walk(arg)
            elif name == "BRANCH":
                for branch in arg[1]:
                    walk(branch)
            elif name in ("ASSERT", "ASSERT_NOT"):
                walk(arg[1])
        if run:
            runs.append(run)
        return run if first is None else first

    leading = walk(
        [item for item in sre_parse.parse(pattern.pattern, pattern.flags) if str(item[0]) != "AT"]
    )
    return list(dict.fromkeys(chars)), list(dict.fromkeys(runs)), leading


def adversarial(pattern: re.Pattern, length: int):
    """Runs of accepted characters (alone, in pairs, the pattern's own words) ended by a
    refused one, with and without the pattern's leading text."""
    chars, runs, leading = _pieces(pattern)
    sample = chars[:16]
    units = sample + ["".join(pair) for pair in itertools.permutations(sample[:6], 2)] + runs
    units += [f"{run}{char}" for run in runs[:6] for char in sample[:4]]
    refused = [char for char in _REFUSED if char not in chars][:2] or ["\n"]
    for prefix, unit, end in itertools.product(dict.fromkeys(["", leading]), units, refused):
        body = length - len(prefix) - len(end)
        yield prefix + unit * (body // len(unit)) + end


@pytest.mark.parametrize("where", sorted(PATTERNS))
def test_every_pattern_answers_hostile_text_quickly(where):
    pattern = PATTERNS[where]
    for text in adversarial(pattern, PATTERN_TEXT):
        with within_a_second(f"{where} on {text[:40]!r}... ({len(text)} characters)"):
            pattern.fullmatch(text)
            for _match in pattern.finditer(text):
                pass


def test_the_pattern_sweep_finds_the_exponential_one():
    """The sweep's shapes do find nested quantifiers over the same characters."""
    nested = re.compile(r"^/(?:[A-Za-z0-9_.+-]+/?)*\Z")
    with pytest.raises(pytest.fail.Exception, match="took more than"):
        for text in adversarial(nested, 64):
            with within_a_second("the nested pattern"):
                nested.match(text)


# --- every field of every form --------------------------------------------------------------

FIELD_UNITS = ["a", "A", "0", "/", ".", "-", "_", ":", " ", "a/", "a.", "a-", "a ", "0.", "->"]
FIELD_PREFIXES = ["", "/", "a", "http://a/"]


def _form_classes():
    found, queue = {}, list(forms.Form.__subclasses__())
    while queue:
        cls = queue.pop()
        queue += cls.__subclasses__()
        if cls.__module__.startswith("investigations."):
            found[f"{cls.__module__}.{cls.__qualname__}"] = cls
    return found


FORMS = _form_classes()


def _form(cls, data):
    """The form bound to data, its choices from empty querysets."""
    from investigations.models import Team

    needed = {
        name: Team.objects.none()
        for klass in cls.__mro__
        if "__init__" in vars(klass)
        for name, parameter in inspect.signature(klass.__init__).parameters.items()
        if parameter.kind == parameter.KEYWORD_ONLY and parameter.default is parameter.empty
    }
    return cls(data=data, **needed)


def _text_fields(cls):
    form = _form(cls, None)
    return {
        name: field
        for name, field in form.fields.items()
        if isinstance(field, forms.CharField | forms.URLField)
    }


@pytest.mark.django_db
@pytest.mark.parametrize("name", sorted(FORMS))
def test_every_text_field_answers_hostile_text_quickly(name):
    cls = FORMS[name]
    for field_name, field in _text_fields(cls).items():
        limit = field.max_length or FIELD_TEXT
        for prefix, unit, end in itertools.product(FIELD_PREFIXES, FIELD_UNITS, ("!", "\n")):
            body = limit - len(prefix) - len(end)
            text = prefix + unit * (body // len(unit)) + end
            prefixed = f"{getattr(cls, 'prefix', '')}-{field_name}"
            form = _form(cls, {field_name: text, prefixed: text})
            with within_a_second(f"{name}.{field_name} on {text[:30]!r}... ({len(text)})"):
                form.is_valid()


def test_every_collection_parameter_has_a_length_limit():
    """What reaches a remote validator is bounded before any pattern sees it."""
    from investigations.runs import plans

    for kind, plan in plans().items():
        for field_name, field in plan.parameters_form.base_fields.items():
            if isinstance(field, forms.CharField):
                assert field.max_length, f"{kind}: {field_name} has no max_length"


# --- validators and parsers of uploaded files ------------------------------------------------


def _validators():
    """Every validate_*/normalise_* function of the code that takes one value, and the other
    functions that read typed text."""
    from investigations.analysis.pathtext import parse_path
    from investigations.analysis.search_terms import query_terms, terms
    from investigations.forms.ladders import parse_steps
    from investigations.forms.path import parse_values
    from investigations.webhook_addresses import webhook_address

    found = {}
    for module in MODULES:
        for name, value in vars(module).items():
            if (
                name.startswith(("validate_", "normalise_"))
                and inspect.isfunction(value)
                and value.__module__ == module.__name__
                and len(inspect.signature(value).parameters) == 1
            ):
                found[f"{module.__name__}.{name}"] = value
    for function in (parse_path, terms, query_terms, parse_steps, parse_values):
        found[f"{function.__module__}.{function.__name__}"] = function

    def webhook_host(text: str):
        return webhook_address(text, 443, unresolved_ok=True)

    found["investigations.webhook_addresses.webhook_address"] = webhook_host
    return found


VALIDATORS = _validators()


@pytest.mark.parametrize("name", sorted(VALIDATORS))
def test_every_validator_answers_hostile_text_quickly(name, settings):
    function = VALIDATORS[name]
    # A value of 10,000 characters: far past every limit the fields set (the longest, 5,000).
    for prefix, unit, end in itertools.product(FIELD_PREFIXES, FIELD_UNITS, ("!", "\n")):
        text = prefix + unit * ((10_000 - len(prefix)) // len(unit)) + end
        with within_a_second(f"{name} on {text[:30]!r}... ({len(text)})"):
            try:
                function(text)
            except Exception:  # noqa: BLE001, S110 (a refusal is an answer too)
                pass


def _parsers():
    from collectors.baseline.parsers import PARSERS as BENCHMARKS
    from collectors.baseline.parsers import parse_import
    from collectors.loadresults import FORMATS
    from investigations.services.profiles import PARSERS as PROFILES

    found = {f"load results {key}": parser for key, parser in FORMATS.items()}
    found |= {f"baseline {key}": parser for key, parser in BENCHMARKS.items()}
    found |= {f"profile {key}": parser for key, parser in PROFILES.items()}
    found["baseline import"] = parse_import
    return found


PARSERS = _parsers()
LINE_UNITS = ["a", "0", " ", "\t", "a ", "0.", "%", ":", "-", "a=", "apr_", "{", "[", ";", "0 "]


@pytest.mark.parametrize("name", sorted(PARSERS))
def test_every_parser_of_uploads_answers_long_lines_quickly(name):
    parser = PARSERS[name]
    texts = [unit * (LINE // len(unit)) + "!\n" for unit in LINE_UNITS]
    texts += [f"{unit * 50}\n" * 20_000 for unit in LINE_UNITS]
    for text in texts:
        with within_a_second(f"{name} on {text[:30]!r}... ({len(text)} characters)"):
            try:
                parser(text)
            except Exception:  # noqa: BLE001, S110 (a refusal is an answer too)
                pass

"""CPU profiles as folded stacks: `perf script` output folded exactly as FlameGraph's
stackcollapse-perf.pl folds it (perf.py), folded profiles from elsewhere: async-profiler,
py-spy, flamegraph.pl's input (folded.py), and the pure arithmetic the flame graphs and the
rules need: function shares and the A/B differential (shares.py), merging frames too small
to draw (small_frames.py). The profile itself is profile.py's FoldedProfile.

Text or bytes in, dataclasses out: no Django, no I/O beyond reading a stream it is given.
`python -m collectors.stacks [--pid|--tid] [--kernel|--jit|--all] FILE...` prints what
`stackcollapse-perf.pl` prints.

The names below are imported on first use: the command line then loads only the folding
(the analysis modules and what they import are a third of its start-up)."""

import importlib

_HOMES = {
    "collectors.stacks.folded": ("parse_async_profiler", "parse_folded", "parse_py_spy"),
    "collectors.stacks.perf": (
        "PerfScriptFolder",
        "feed_stream",
        "fold_perf_script",
        "fold_perf_script_stream",
    ),
    "collectors.stacks.profile": (
        "EMPTY_STACK",
        "OTHER_EVENT",
        "OUTSIDE_SAMPLE",
        "UNRECOGNIZED",
        "UNTERMINATED",
        "FoldedProfile",
    ),
    "collectors.stacks.shares": (
        "FunctionDelta",
        "FunctionShare",
        "compare_profiles",
        "function_shares",
        "stack_percentages",
    ),
    "collectors.stacks.small_frames": ("OTHER", "merge_small_frames"),
}
_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}

__all__ = sorted(_HOME_OF)


def __getattr__(name: str) -> object:
    module = _HOME_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))

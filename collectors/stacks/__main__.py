"""`python -m collectors.stacks [options] [FILE...]`: stackcollapse-perf.pl's command line
(its folding options; standard input without files), printing the same bytes."""

import sys

from collectors.stacks.perf import PerfScriptFolder, feed_stream

USAGE = """usage: python -m collectors.stacks [options] [FILE...] > folded.txt
  --pid            include the PID with process names
  --tid            include the PID and TID with process names
  --kernel         annotate kernel functions with _[k]
  --jit            annotate JIT functions with _[j]
  --all            all annotations (--kernel --jit)
  --event-filter=EVENT   keep samples of this event (default: the first one seen)
"""


def main(argv: list[str]) -> int:
    # A hand-made parser: argparse alone costs a few ms of start-up, a tenth of a fold.
    options = {"pid": False, "tid": False, "kernel": False, "jit": False}
    event = None
    files: list[str] = []
    arguments = iter(argv)
    for argument in arguments:
        name, _, value = argument.lstrip("-").partition("=")
        if argument in ("-h", "--help"):
            sys.stdout.write(USAGE)
            return 0
        if not argument.startswith("-") or argument == "-":
            files.append(argument)
        elif name in options and not value:
            options[name] = True
        elif name == "all" and not value:
            options["kernel"] = options["jit"] = True
        elif name == "event-filter":
            event = value or next(arguments, "")
        else:
            sys.stderr.write(f"unknown option: {argument}\n{USAGE}")
            return 2
    folder = PerfScriptFolder(**options, event=event, binary=True)
    for path in files or ["-"]:
        if path == "-":
            feed_stream(folder, sys.stdin.buffer)
            continue
        try:
            with open(path, "rb") as stream:
                feed_stream(folder, stream)
        except OSError as error:
            sys.stderr.write(f"{path}: {error.strerror}\n")
            return 1
    try:
        profile = folder.result()
    except ValueError as error:
        sys.stderr.write(f"{error}\n")
        return 1
    # Line by line: the whole text and its bytes at once would double the peak memory.
    out = sys.stdout.buffer
    for line in profile.lines():
        out.write(line.encode("utf-8", "surrogateescape") + b"\n")
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

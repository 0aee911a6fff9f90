"""The ``zarrx`` command.

Each group of commands lives in its own module and registers its subcommands; the work is
done by library functions (:mod:`zarrx.tools`), the commands only parse arguments and print.

Exit status (documented in ``zarrx --help`` and docs/guide/command.md):

- 0: success (``check``: nothing found);
- 1: the command worked and found a problem in the data (``check``: problems left;
  ``convert --verify``: blocks differ; ``chunk``: the object does not decode; ``demo``: a
  read differs);
- 2: the command line is wrong;
- 3: an error: the data could not be opened, read or written (the message says why);
- 4: ``check --repair`` found problems and repaired all of them;
- 130: interrupted (Ctrl-C).

Errors are one line on standard error, ``zarrx: <message>``.
"""
from __future__ import annotations

import argparse
import difflib
import os
import re
import sys
import warnings
from typing import Any

from zarrx.cli.example import demo

__all__ = ["main", "demo", "EXIT_OK", "EXIT_FOUND", "EXIT_USAGE", "EXIT_ERROR", "EXIT_REPAIRED",
           "EXIT_INTERRUPTED"]

EXIT_OK = 0
EXIT_FOUND = 1
EXIT_USAGE = 2
EXIT_ERROR = 3
EXIT_REPAIRED = 4
EXIT_INTERRUPTED = 130

EPILOG = """exit status: 0 success; 1 a problem found in the data (check, convert --verify,
chunk, demo); 2 wrong command line; 3 error (cannot open, read or write); 4 check --repair
repaired everything it found; 130 interrupted.

Locations: a directory (data.zarr, or a node inside it: data.zarr/group/array), a path inside a
zip archive (archive.zip/group/array), or a URL (s3://bucket/data.zarr) with -S key=value
storage options."""


#: a URL in a usage error's message, which quotes the arguments it could not take
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"]+")


def _redact(url: str) -> str:
    """``url`` as a message may show it: without credentials or query string (a usage error
    quotes a misplaced argument, which may be a URL holding a secret)."""
    from zarrx.store.remote.urls import redact
    return redact(url)


class _Parser(argparse.ArgumentParser):
    """Usage errors as one line on standard error (exit status 2). An argument that starts
    with a minus and then a number (``-1,4``, ``-5:``, ``-1.5e3``, ``-inf``) is a value, not an
    option (argparse takes only ``-1`` and ``-1.5`` as values), so that it reaches the option's
    own check and message; no option of zarrx is named so."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = re.compile(r"^-(\.?\d|inf|infinity|nan)", re.IGNORECASE)

    def parse_args(self, args: Any = None, namespace: Any = None) -> Any:  # type: ignore[override]
        """As argparse's, but an argument no option takes is reported by the command's parser
        (``zarrx info --help`` is where its options are), with the closest option to a
        misspelt one (``--jsn``: did you mean ``--json``?)."""
        ns, extras = self.parse_known_args(args, namespace)
        if extras:
            command = getattr(self, "commands", {}).get(getattr(ns, "cmd", None), self)
            options = [o for o in command._option_string_actions if o.startswith("--")]
            close = [difflib.get_close_matches(e.split("=")[0], options, n=1, cutoff=0.75)
                     for e in extras if e.startswith("--")]
            hint = next((f"; did you mean {c[0]}?" for c in close if c), "")
            command.error(f"unrecognized arguments: {' '.join(extras)}{hint}")
        return ns

    def error(self, message: str) -> None:  # type: ignore[override]
        message = _URL.sub(lambda m: _redact(m.group(0)), message)
        sys.stderr.write(f"{self.prog}: {message} (see {self.prog} --help)\n")
        raise SystemExit(EXIT_USAGE)


def _version() -> str:
    import zarrx
    return f"zarrx {zarrx.__version__}"


def parser() -> argparse.ArgumentParser:
    from zarrx.cli import data, example, maintain, nodes
    p = _Parser(prog="zarrx", description="Inspect, convert, copy and check Zarr (v2 and v3) "
                                          "arrays and hierarchies.",
                epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=_version())
    sub = p.add_subparsers(dest="cmd", required=True, metavar="COMMAND",
                           parser_class=_Parser)
    nodes.register(sub)
    data.register(sub)
    maintain.register(sub)
    example.register(sub)
    p.commands = sub.choices            # type: ignore[attr-defined]
    sub.add_parser("bench", help="benchmark against zarr-python and tensorstore "
                                 "(zarrx bench --help for its options)")
    return p


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["bench"]:          # the benchmark parses its own options
        from zarrx.bench import main as bench_main
        return bench_main(argv[1:])
    errors = _ErrorLines(sys.stderr, "--json" in argv[1:] and "--" not in argv)
    stderr, sys.stderr = sys.stderr, errors
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            code = _main(argv)
    finally:
        sys.stderr = stderr
    if code not in (EXIT_OK, EXIT_FOUND, EXIT_REPAIRED) and errors.json:
        _print_error_json(errors.lines, code)
    return code


def _show_warning(message: Warning | str, category: type, filename: str, lineno: int,
                  file: Any = None, line: str | None = None) -> None:
    """A warning as one line, ``zarrx: warning: <message>``, not Python's report of the
    source file and line that issued it (which reads as part of a traceback)."""
    text = " ".join(str(message).split())
    try:
        (file or sys.stderr).write(f"zarrx: warning: {text}\n")
    except (OSError, ValueError, AttributeError):
        pass


class _ErrorLines:
    """Standard error, passed through, keeping the ``zarrx...: <message>`` lines written to
    it, so that a command given ``--json`` can say on standard output too why it failed."""

    def __init__(self, stream: Any, json: bool) -> None:
        self.stream, self.json, self.lines = stream, json, []  # type: list[str]

    def write(self, text: str) -> int:
        if self.json:
            self.lines.extend(line for line in text.splitlines()
                              if line.startswith("zarrx") and
                              not line.startswith("zarrx: warning: "))
        return self.stream.write(text) if self.stream is not None else len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def _print_error_json(lines: list[str], code: int) -> None:
    """The one JSON document a command given ``--json`` prints when it fails (exit status 2,
    3 or 130): ``{"error": <message>, "exit_status": <status>}``, the message as the line on
    standard error has it."""
    import json
    message = " ".join(lines) or "failed"
    kind = {EXIT_USAGE: "usage", EXIT_INTERRUPTED: "interrupted"}.get(code, "error")
    doc = {"error": message, "kind": kind, "exit_status": code}
    try:
        print(json.dumps(doc, ensure_ascii=False))
        sys.stdout.flush()
    except (OSError, ValueError):       # standard output closed or a broken pipe
        pass


def _main(argv: list[str]) -> int:
    try:
        args = parser().parse_args(argv)
    except SystemExit as exc:          # --help, --version (0) or a usage error (2)
        return int(exc.code or 0)
    except KeyboardInterrupt:          # while the commands' modules load
        print("zarrx: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    from zarrx.cli.common import one_line
    from zarrx.errors import ZarrError
    try:
        return int(args.run(args))
    except SystemExit as exc:          # a usage error found after parsing (exit status 2)
        return int(exc.code or 0)
    except ZarrError as exc:
        flags = [getattr(args, "flags", {}).get(name) for name in exc.arguments]
        if flags and all(flags):          # a value of the command line the data cannot take
            named = f"argument {flags[0]}" if len(flags) == 1 else \
                f"arguments {', '.join(flags[:-1])} and {flags[-1]}"
            print(f"zarrx {args.cmd}: {named}: {one_line(exc)} (see zarrx {args.cmd} --help)",
                  file=sys.stderr)
            return EXIT_USAGE
        print(f"zarrx: {one_line(exc)}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print(f"zarrx: interrupted{_resume_hint(args)}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:            # zarrx cat ... | head
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except OSError as exc:
        print(f"zarrx: {one_line(exc)}", file=sys.stderr)
        return EXIT_ERROR


def _resume_hint(args: argparse.Namespace) -> str:
    """What an interrupted command adds to its message: a conversion left unfinished can be
    resumed; one replacing a node in a local folder (written beside it) left that node as
    it was."""
    from zarrx.tools.location import interrupted_at, writes_zip
    if args.cmd not in ("convert", "copy") or writes_zip(args.destination):
        return ""
    kept = args.overwrite and not getattr(args, "resume", False) and \
        os.path.isdir(os.fspath(args.destination)) and not interrupted_at(args.destination)
    if kept:
        return f"; the destination {args.destination} is as it was"
    return "; run it again with --resume to keep what is done" if args.cmd == "convert" else ""


if __name__ == "__main__":
    sys.exit(main())

"""``trainlint``: check, series, events, compare, preflight, watch, serve.

Exit codes: 0 judged with no FAIL; 1 a FAIL verdict about the run; 2 could not judge
(nothing readable, NOT-CHECKED, bad arguments, internal error). Never a traceback to the user.

Each command imports what it needs when it runs (start-up cost: `trainlint check` of one small file does not
pay for the language server, the outputs it does not print or the dataset linter).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from . import __version__
from .core.report import EXIT_CANNOT_JUDGE, EXIT_OK, exit_code

CI_FORMATS = ("github", "gitlab", "junit", "markdown")  # output/ci.py


class _Formatter(argparse.HelpFormatter):
    """argparse's formatter imports shutil (and with it bz2, lzma) for the terminal width; ask os."""

    def __init__(self, prog: str) -> None:
        try:
            width = os.get_terminal_size().columns
        except OSError:
            width = int(os.environ.get("COLUMNS", "100") or 100)
        super().__init__(prog, width=max(40, width - 2))


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:  # argparse exits 2 already; keep its one-line message
        self.print_usage(sys.stderr)
        self.exit(EXIT_CANNOT_JUDGE, f"trainlint: error: {message}\n")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="trainlint", description="A deterministic linter for ML training runs.")
    p.add_argument("--version", action="version", version=f"trainlint {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    from .readers import formats

    def common(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--log-format", choices=formats(), help="read every path as this format (skip detection)")
        sp.add_argument("--config", help="a .trainlint.yaml to use instead of the nearest one")

    _add_judging_commands(sub, common)
    _add_dataset_commands(sub, common)
    _add_tool_commands(sub, common)
    return p


def _line_breaks(p: argparse.ArgumentParser) -> None:
    """``--line-breaks``: check and series tell the same lines."""
    p.add_argument("--line-breaks", choices=("lf", "lsp"), default="lf",
                   help="lf: lines as wc -l, grep -n and most editors count them (default); lsp: a lone carriage "
                        "return (a progress-bar redraw) also starts a line, as the LSP and SARIF specifications say")


def _add_judging_commands(sub: argparse._SubParsersAction, common: Callable[[argparse.ArgumentParser], None]) -> None:  # type: ignore[type-arg]
    """check, series, compare: the commands that judge logs."""
    c = sub.add_parser("check", help="judge logs and run directories")
    c.add_argument("paths", nargs="+", metavar="PATH")
    c.add_argument("--output-format", "--format", dest="format", default="concise",
                   choices=("concise", "full", "text", "json", "sarif", *CI_FORMATS),
                   help="concise: a line per finding (default; 'text' is the same); full: also the log's line "
                        "with the value marked, the interpretation and the related lines; json; sarif; github "
                        "(workflow commands); gitlab (Code Quality JSON); junit (XML); markdown (a summary)")
    c.add_argument("--quiet", "-q", action="store_true", help="only FAIL and WARN findings, no verdict lines")
    c.add_argument("--verbose", "-v", action="store_true", help="also print what each check measured per series")
    c.add_argument("--also-write", action="append", default=[], metavar="FORMAT=PATH",
                   help="also write this rendering of the same judgement to PATH ('-' for stdout; repeatable), "
                        "e.g. sarif=trainlint.sarif markdown=$GITHUB_STEP_SUMMARY (markdown is appended)")
    c.add_argument("--skip-non-logs", action="store_true",
                   help="a named file that is not a training log is skipped as a folder's would be, not "
                        "NOT-CHECKED (pre-commit passes every staged file that matches the patterns)")
    c.add_argument("--jobs", "-j", type=int, default=1, metavar="N",
                   help="judge the logs in N processes (the output is the same as with one)")
    c.add_argument("--select", help="comma-separated rule IDs or prefixes to run")
    c.add_argument("--ignore", help="comma-separated rule IDs or prefixes to skip")
    c.add_argument("--live", action="store_true",
                   help="judge the runs as still being written (rules that need progress wait); without it the "
                        "bytes alone decide, whatever the files' age")
    c.add_argument("--color", "--colour", dest="color", choices=("auto", "always", "never"), default="auto",
                   help="colour the levels: auto (a terminal, unless NO_COLOR is set), always, never")
    _line_breaks(c)
    common(c)

    s = sub.add_parser("series", help="list every series read from a file, with the lines of its points")
    s.add_argument("paths", nargs="+", metavar="PATH")
    s.add_argument("--format", choices=("text", "json"), default="text")
    _line_breaks(s)
    common(s)

    cp = sub.add_parser("compare", help="compare runs against a baseline run (trainproof's compare rules)")
    cp.add_argument("baseline", metavar="BASELINE")
    cp.add_argument("runs", nargs="+", metavar="RUN")
    cp.add_argument("--format", choices=("text", "json", "sarif"), default="text")
    cp.add_argument("--quiet", "-q", action="store_true")
    common(cp)


def _add_dataset_commands(sub: argparse._SubParsersAction, common: Callable[[argparse.ArgumentParser], None]) -> None:  # type: ignore[type-arg]
    """preflight, env, events: datasets, the machine, and event files as text."""
    pf = sub.add_parser("preflight", help="lint fine-tuning datasets (JSON lines) before the run: malformed lines, "
                                          "empty texts, chat turns, duplicates, eval/train leakage, and with a "
                                          "local tokenizer token lengths, EOS, pad and unknown tokens")
    pf.add_argument("datasets", nargs="+", metavar="DATASET")
    pf.add_argument("--eval", action="append", default=[], metavar="DATASET",
                    help="an evaluation file to compare with the others for leakage (files named test, eval, "
                         "valid or dev are evaluation files already)")
    pf.add_argument("--tokenizer", help="a local tokenizer.json (tokenizers) or SentencePiece .model (never a "
                                        "download)")
    pf.add_argument("--max-len", type=_positive_int, help="the context length, in tokens (needs --tokenizer)")
    field = pf.add_mutually_exclusive_group()
    field.add_argument("--text-field", help="the field that holds each example's text")
    field.add_argument("--chat-field", help="the field that holds each example's chat turns")
    pf.add_argument("--format", choices=("concise", "full", "text", "json", "sarif"), default="concise")
    pf.add_argument("--quiet", "-q", action="store_true")
    pf.add_argument("--verbose", "-v", action="store_true", help="also print what was measured (examples, tokens)")


    _add_env_parser(sub)

    e = sub.add_parser("events", help="print a TensorBoard event file (or an MLflow SQLite store) as text, one "
                                      "scalar per line")
    e.add_argument("path", metavar="FILE")
    common(e)


def _add_tool_commands(sub: argparse._SubParsersAction, common: Callable[[argparse.ArgumentParser], None]) -> None:  # type: ignore[type-arg]
    """watch, report, formats, settings, docs, editor-config, serve."""
    w = sub.add_parser("watch", help="judge logs and run folders while they grow: each new or resolved finding "
                                     "once, a status line, stall notices")
    w.add_argument("paths", nargs="+", metavar="PATH")
    w.add_argument("--until-fail", action="store_true", help="exit 1 at the first FAIL")
    w.add_argument("--format", choices=("text", "json"), default="text", help="text lines, or JSON lines")
    w.add_argument("--stall-seconds", type=float, default=120.0, help="say so when a log has not grown for this long")
    w.add_argument("--stall-factor", type=float, default=10.0,
                   help="... or for this many times its usual interval between new points (measured while watching)")
    w.add_argument("--notify", action="append", default=[], metavar="URL",
                   help="post each new FAIL/WARN, resolution and stall to this webhook (Slack-compatible JSON; "
                        "repeatable)")
    w.add_argument("--notify-command", action="append", default=[], metavar="CMD",
                   help="run CMD (no shell) with each alert as JSON on its stdin (repeatable)")
    w.add_argument("--notify-timeout", type=float, default=5.0, help="seconds per delivery attempt (3 attempts)")
    w.add_argument("--poll-seconds", type=float, default=10.0,
                   help="how often remote logs (s3://, gs://, https://…) are asked whether they grew")
    w.add_argument("--line-breaks", choices=("lf", "lsp"), default="lf", help="as for check")
    common(w)

    rp = sub.add_parser("report", help="write the curves and findings of logs and run directories to one "
                                       "self-contained HTML file (no network needed to open it)")
    rp.add_argument("paths", nargs="+", metavar="PATH")
    rp.add_argument("-o", "--output", default="trainlint-report.html", help="the HTML file to write")
    rp.add_argument("--title", default="trainlint report")
    common(rp)

    fm = sub.add_parser("formats", help="every log format trainlint reads, from the format registry")
    fm.add_argument("--json", action="store_true", help="as JSON, with the editor's document patterns and activation "
                                                       "events (the VS Code extension's build reads it)")

    st = sub.add_parser("settings", help="every trainlint.* editor setting (name, type, default, range)")
    st.add_argument("--json", action="store_true", help="as VS Code's contributes.configuration and the server's "
                                                       "defaults (the VS Code extension's build reads it)")

    dc = sub.add_parser("docs", help="regenerate the generated parts of docs/ (rule page heads, shared sections, the "
                                     "formats table) from the registries")
    dc.add_argument("--check", action="store_true", help="change nothing; exit 1 when a generated part is stale")
    dc.add_argument("--dir", default=None, help="the docs folder (default: docs/ of this checkout)")

    ed = sub.add_parser("editor-config", help="print the path of the editor configuration trainlint ships")
    ed.add_argument("editor", choices=("nvim",))

    sv = sub.add_parser("serve", help="run the language server over stdio")
    sv.add_argument("--log-level", default="WARNING")
    sv.add_argument("--stdio", action="store_true", help="talk over stdio (the default; language clients pass it)")


def _add_env_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """`trainlint env` (envcheck.py): declared here so that building the parser imports nothing heavy."""
    e = sub.add_parser("env", help="can this machine start this run: the module imports (in a subprocess), RAM, "
                                   "disk for the checkpoints kept, a checkpoint complete (never unpickled)")
    e.add_argument("--module", help="the training module to import in a subprocess (as `python -m MODULE` would)")
    e.add_argument("--python", help="the run's interpreter (default: the first python on PATH)")
    e.add_argument("--cwd", help="the folder the run starts from (default: this one)")
    e.add_argument("--timeout", type=float, help="seconds the import may take (default 120)")
    e.add_argument("--required-gb", type=float, help="RAM the run needs, in GB")
    e.add_argument("--output-dir", help="where the run writes its checkpoints")
    e.add_argument("--checkpoint-gb", type=float, help="the size of one checkpoint, in GB")
    e.add_argument("--keep", type=int, default=1, help="how many checkpoints the run keeps (default 1)")
    e.add_argument("--checkpoint", help="a checkpoint file (or folder) to resume from: checked, never unpickled")
    e.add_argument("--format", choices=("concise", "full", "text", "json", "sarif"), default="concise")
    e.add_argument("--quiet", "-q", action="store_true")


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "check":
            return _check(args)
        if args.command == "series":
            return _series(args)
        if args.command == "events":
            return _events(args)
        if args.command == "preflight":
            return _preflight(args)
        if args.command == "compare":
            return _compare(args)
        if args.command == "env":
            from .envcheck import main as env

            return env(args)
        if args.command == "watch":
            from .watch import run as watch

            return watch(args.paths, _config(args, args.paths[0]), args.until_fail, args.format == "json",
                         args.stall_seconds, notify=args.notify, notify_commands=args.notify_command,
                         notify_timeout=args.notify_timeout, stall_factor=args.stall_factor,
                         poll_s=args.poll_seconds, line_breaks=args.line_breaks)
        if args.command == "formats":
            return _formats(args)
        if args.command == "settings":
            return _settings(args)
        if args.command == "docs":
            return _docs(args)
        if args.command == "report":
            return _report(args)
        if args.command == "editor-config":
            print(os.path.join(os.path.dirname(os.path.abspath(__file__)), "editors", "trainlint.lua"))
            return EXIT_OK
        if args.command == "serve":
            from .lsp.server import main as serve

            return serve(args.log_level)
    except KeyboardInterrupt:
        return EXIT_CANNOT_JUDGE
    except BrokenPipeError:
        return EXIT_OK
    except Exception as e:
        print(f"trainlint: internal error: {type(e).__name__}: {e}", file=sys.stderr)
        return EXIT_CANNOT_JUDGE
    return EXIT_CANNOT_JUDGE


def _formats(args: argparse.Namespace) -> int:
    from .editor_formats import editor_formats
    from .readers.registry import as_json, specs

    if args.json:
        print(json.dumps({"formats": as_json(), **editor_formats()}, indent=2))
    else:
        for s in specs():
            print(f"{s.name:<18} {s.description}")
    return EXIT_OK


def _settings(args: argparse.Namespace) -> int:
    from .lsp.settings import SCHEMA, server_defaults, vscode_configuration

    if args.json:
        print(json.dumps({"configuration": vscode_configuration(), "serverDefaults": server_defaults()}, indent=2))
    else:
        for s in SCHEMA:
            print(f"trainlint.{s.key:<24} {json.dumps(s.default):<14} {'server' if s.attr else 'client'}  "
                  f"{s.description}")
    return EXIT_OK


def _docs(args: argparse.Namespace) -> int:
    from . import docgen

    root = args.dir or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs")
    if not os.path.isdir(os.path.join(root, "rules")):
        print(f"trainlint: docs: no rules/ folder in {root} (run from a checkout, or pass --dir)", file=sys.stderr)
        return EXIT_CANNOT_JUDGE
    stale = docgen.run(root, args.check)
    for s in stale:
        print(f"{os.path.relpath(s.path)}: {'stale' if args.check else 'written'}: {s.why}")
    if args.check and stale:
        print("trainlint: docs are stale: run `trainlint docs`", file=sys.stderr)
        return 1
    return EXIT_OK


def _positive_int(text: str) -> int:
    """A count of tokens: what the configuration's max_len accepts (1 to 10,000,000), not 0 or -1."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if not 0 < n <= 10_000_000:
        raise argparse.ArgumentTypeError(f"expected a positive integer up to 10000000, got {n}")
    return n


def _config(args: argparse.Namespace, start: str):  # type: ignore[no-untyped-def]
    from . import config

    cfg = config.load(args.config) if args.config else config.for_path(start)
    for err in cfg.errors:
        print(f"trainlint: config: {err}", file=sys.stderr)
    return cfg


def _check(args: argparse.Namespace) -> int:
    from .parallel import resolve

    if args.also_write:
        from .output.ci import parse_also

        try:
            parse_also(args.also_write)
        except ValueError as e:
            print(f"trainlint: {e}", file=sys.stderr)
            return EXIT_CANNOT_JUDGE
    cfg = _config(args, args.paths[0])
    from .rules.ids import validate

    for key in ("select", "ignore"):
        flag = getattr(args, key)
        if flag:
            kept, bad = validate(f"--{key}", [x.strip() for x in flag.split(",") if x.strip()])
            setattr(cfg, key, kept)
            for _, message in bad:
                print(f"trainlint: {message}", file=sys.stderr)
    reports, skipped_files, unreadable, companions_read = _plan_check(args, cfg)
    reports = resolve(reports, cfg, args.jobs)  # the logs are judged here, in --jobs processes
    if args.skip_non_logs:  # read as text but nothing measured in it (a README with "step" and "loss")
        skipped_files.extend((r.path, "nothing measured in it") for r in reports if _nothing_measured(r))
        reports = [r for r in reports if not _nothing_measured(r)]
    for path, why in unreadable:
        print(f"trainlint: {path}: cannot be read: {why}", file=sys.stderr)
    discovery = {"read": len(reports), "skipped": [{"path": p, "reason": r} for p, r in skipped_files],
                 "unreadable": [{"path": p, "reason": r} for p, r in unreadable],
                 "companions": [{"path": p, "reason": r} for p, r in companions_read]}
    _print_check(args, reports, discovery, len(skipped_files), len(unreadable))
    if args.also_write:
        from .output.ci import write_also

        write_also(args.also_write, reports, discovery)
    # A file in which nothing was measured (a stdout with only warnings, an hparams-only event file) does not
    # decide the exit code of a check that judged other logs; alone, it is still "could not judge" (2).
    judged = [r for r in reports if not _nothing_measured(r)] or reports
    if args.skip_non_logs and not reports and not unreadable:
        return EXIT_OK  # nothing staged was a training log
    return exit_code(r.verdict for r in judged)


def _plan_check(args: argparse.Namespace,
                cfg: Any) -> tuple[list[Any], list[tuple[str, str]], list[tuple[str, str]], list[tuple[str, str]]]:
    """What ``check`` will judge, in order (each log a ``Pending`` until ``parallel.resolve``), and what it skipped,
    could not read and read as a companion."""
    from .core import fsio
    from .judge import not_checked
    from .parallel import Pending
    from .runs import plan

    reports: list[Any] = []  # Report | Pending
    skipped_files: list[tuple[str, str]] = []
    unreadable: list[tuple[str, str]] = []
    companions_read: list[tuple[str, str]] = []
    for path in args.paths:
        if path.startswith("mlflow:"):  # a tracking server's experiment or run (MLFLOW_TRACKING_URI)
            from .readers.mlflow_rest import runs_of

            try:
                reports.extend(Pending(run, "mlflow-rest") for run in runs_of(path))
            except OSError as e:
                reports.append(not_checked(path, "mlflow-rest", f"cannot be read ({e.strerror or e})"))
            continue
        try:
            fsio.stat(path)
        except FileNotFoundError:
            reports.append(not_checked(path, None, "it does not exist"))
            continue
        except PermissionError:
            reports.append(not_checked(path, None, "permission denied"))
            continue
        except OSError as e:
            reports.append(not_checked(path, None, f"cannot be read ({e.strerror or e})"))
            continue
        isdir = fsio.isdir(path)
        if args.log_format and not isdir:
            reports.append(Pending(path, args.log_format, live=args.live))
            continue
        try:
            p = plan(path, cfg)
        except OSError as e:
            reports.append(not_checked(path, None, f"cannot be read ({e.strerror or e})"))
            continue
        skipped_files.extend(p.skipped)
        unreadable.extend(p.unreadable)
        companions_read.extend(p.companions)
        if not isdir and not p.items:
            why = p.skipped[0][1] if p.skipped else (p.unreadable[0][1] if p.unreadable else "not a training log")
            if not (args.skip_non_logs and p.skipped):
                reports.append(not_checked(path, None, why))
            continue
        for item in p.items:
            if item.format == "dataset":
                skipped_files.append((item.path, "a fine-tuning dataset: `trainlint preflight` lints it"))
                if not isdir:
                    reports.append(not_checked(path, "dataset", "a fine-tuning dataset, not a training log; run "
                                               "`trainlint preflight` on it"))
                continue
            reports.append(Pending(item.path, item.format, item.facts, live=args.live))
        if isdir and not p.items:
            print(f"trainlint: no training logs found under {path} ({p.considered} files considered)",
                  file=sys.stderr)
    return reports, skipped_files, unreadable, companions_read


def _print_check(args: argparse.Namespace, reports: list[Any], discovery: dict[str, Any], skipped: int,
                 unreadable: int) -> None:
    """The chosen rendering of ``check``'s reports on stdout."""
    from .output import check_text

    maps = None
    if args.line_breaks == "lf":  # a tqdm redraw's `\r` does not start a line for grep -n, a terminal or Neovim
        from .core.linemap import reports_to_lf

        maps = reports_to_lf(reports)
    if args.format == "json":
        from .output import check_json

        print(json.dumps(check_json.document(reports, discovery=discovery), indent=2, allow_nan=False))
    elif args.format == "sarif":
        from .output import sarif

        print(json.dumps(sarif.document(reports), indent=2, allow_nan=False))
    elif args.format in CI_FORMATS:
        from .output.ci import render

        print(render(args.format, reports))
    else:
        for line in check_text.render(reports, quiet=args.quiet, verbose=args.verbose, full=args.format == "full",
                                      maps=maps, colour=check_text.use_colour(args.color, sys.stdout)):
            print(line)
        if not args.quiet:
            print(check_text.summary(reports, skipped, unreadable))


def _nothing_measured(rep) -> bool:  # type: ignore[no-untyped-def]
    from .core.findings import Level

    return (rep.verdict == Level.NOT_CHECKED and rep.log is not None and rep.error is None
            and not any(len(s) for s in rep.log.series.values()))


def _preflight(args: argparse.Namespace) -> int:
    from .output import check_text
    from .preflight import exit_code, preflight

    if args.max_len is not None and not args.tokenizer:
        print("trainlint: --max-len counts tokens: give --tokenizer too", file=sys.stderr)
        return EXIT_CANNOT_JUDGE
    from . import config

    cfg = config.for_path(args.datasets[0])  # thresholds: (the speech checks') from the nearest .trainlint.yaml
    reports = preflight(args.datasets, args.tokenizer, args.max_len, args.text_field, args.chat_field, args.eval,
                        cfg.thresholds)
    if args.format == "json":
        from .output import check_json

        print(json.dumps(check_json.document(reports), indent=2, allow_nan=False))
    elif args.format == "sarif":
        from .output import sarif

        print(json.dumps(sarif.document(reports), indent=2, allow_nan=False))
    else:
        for line in check_text.render(reports, quiet=args.quiet, verbose=args.verbose, full=args.format == "full"):
            print(line)
        if not args.quiet:
            print(check_text.summary(reports, 0, 0, noun="dataset"))
    return exit_code(reports)


def _one_log(path: str) -> str:
    """A run given as a directory means its one judged log."""
    from .runs import plan

    if not os.path.isdir(path):
        return path
    items = plan(path).items
    here = [i for i in items if os.path.dirname(i.path) == path.rstrip(os.sep)] if len(items) > 1 else items
    return here[0].path if len(here) == 1 else path


def _report(args: argparse.Namespace) -> int:
    """The HTML report: the same judging as ``check`` (its exit codes), the curves drawn from the points read."""
    from .core.findings import Level
    from .judge import judge_path, not_checked
    from .output.report_html import document
    from .runs import Companions, plan

    cfg = _config(args, args.paths[0])
    reports, companions = [], Companions()
    for path in args.paths:
        if not os.path.exists(path):
            reports.append(not_checked(path, None, "it does not exist"))
            continue
        items = [i for i in plan(path, cfg).items if i.format != "dataset"]
        if args.log_format and not os.path.isdir(path):
            reports.append(judge_path(path, cfg, args.log_format))
        elif not items:
            reports.append(not_checked(path, None, "not a training log"))
        reports.extend(judge_path(i.path, cfg, i.format, i.facts, companions) for i in items)
    page = document(reports, args.title)
    with open(args.output, "w", encoding="utf-8") as f:
        f.write(page)
    verdicts = [r.verdict for r in reports]
    print(f"trainlint: wrote {args.output} ({len(page) // 1024} KB): {len(reports)} log(s), "
          f"{sum(1 for v in verdicts if v == Level.FAIL)} FAIL")
    return exit_code(verdicts)


def _compare(args: argparse.Namespace) -> int:
    from .core.findings import Level
    from .judge import compare_paths, judge_path
    from .output import check_json, check_text, sarif

    cfg = _config(args, args.baseline)
    base = judge_path(_one_log(args.baseline), cfg, args.log_format)
    reports = [compare_paths(base, judge_path(_one_log(r), cfg, args.log_format), cfg) for r in args.runs]
    from .core.linemap import reports_to_lf

    reports_to_lf(reports)
    if args.format == "json":
        print(json.dumps(check_json.document(reports), indent=2, allow_nan=False))
    elif args.format == "sarif":
        print(json.dumps(sarif.document(reports), indent=2, allow_nan=False))
    else:
        for rep in reports:
            for f in rep.findings:
                if f.level != Level.PASS or not args.quiet:
                    print(check_text.finding_line(f))
            if not args.quiet:
                print(f"{check_text.rel(rep.path)} vs {check_text.rel(base.path)}: {rep.verdict.value}")
    return exit_code(r.verdict for r in reports)


def _series(args: argparse.Namespace) -> int:
    from .discovery import discover
    from .output import series as series_out
    from .output.check_text import rel
    from .readers import NotALog, open_source

    cfg = _config(args, args.paths[0])
    files = []
    status = EXIT_OK
    maps: dict[str, Any] | None = {} if args.line_breaks == "lf" else None  # check's lines (core/linemap.py)
    for path in args.paths:
        targets = [(path, args.log_format)]
        if os.path.isdir(path) and not args.log_format:
            d = discover(path, formats=cfg)
            targets = [(f.path, f.format) for f in d.found]
            if not targets:
                print(f"trainlint: {path}: no training logs found", file=sys.stderr)
                status = EXIT_CANNOT_JUDGE
        for target, fmt in targets:
            try:
                src = open_source(target, fmt, cfg.roles, cfg.format_for(target))
                src.update()
            except NotALog as e:
                print(f"trainlint: {target}: not a training log ({e})", file=sys.stderr)
                status = EXIT_CANNOT_JUDGE
                continue
            except OSError as e:
                print(f"trainlint: {target}: cannot be read ({e.strerror or e})", file=sys.stderr)
                status = EXIT_CANNOT_JUDGE
                continue
            if args.format == "json":
                files.append(series_out.file_dict(src.log, maps))
            else:
                for line in series_out.render_text(src.log, rel(target), maps):
                    print(line)
    if args.format == "json":
        print(json.dumps({"schema_version": 1, "files": files}, indent=2, allow_nan=False))
    return status


def _events(args: argparse.Namespace) -> int:
    from .events_view import render
    from .readers import detect, open_source

    try:
        fmt = ("mlflow-rest" if args.path.startswith("mlflow:")
               else "mlflow-db" if detect(args.path).format == "mlflow-db" else "tfevents")
        src = open_source(args.path, fmt)
        src.update()
    except OSError as e:
        print(f"trainlint: {args.path}: cannot be read ({e.strerror or e})", file=sys.stderr)
        return EXIT_CANNOT_JUDGE
    view = render(src.log)
    if len(view) == 1:
        print(f"trainlint: {args.path}: no scalars in this event file", file=sys.stderr)
    for line in view.lines(src.log):
        print(line)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())

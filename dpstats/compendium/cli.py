"""The ``dpstats`` command line: ``dpstats report`` and ``dpstats data list|fetch``.

Expected failures (unknown names, offline, bad checksum, missing manifest)
print one line ``dpstats: error: ...`` on stderr and exit with status 1 (2 for
usage errors), without a traceback.
"""

from __future__ import annotations

import argparse
import sys

from ..exceptions import DataValidationError, ParameterError

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dpstats", description="Differentially private statistics: reports and data.")
    commands = parser.add_subparsers(dest="command", required=True)

    report = commands.add_parser(
        "report",
        help="execute the notebooks of the manifest and write a report",
        description="Execute the notebooks of the manifest (notebooks/reports.toml of the clone you are in, or of "
        "the clone dpstats is installed from) with papermill and write a report. `dpstats report --list` shows "
        "the reports; `dpstats report NAME -p key=value` reruns one with changed parameters.",
    )
    report.add_argument("names", nargs="*", metavar="NAME", help="notebooks to run (default: all in the manifest)")
    report.add_argument("--list", action="store_true", help="list every report, its notebook and what it shows")
    report.add_argument(
        "-p",
        "--parameter",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="change a parameter of the notebook's `parameters` cell (repeatable; one NAME); the run goes to "
        "reports/_quick/ or --out, never over the record",
    )
    report.add_argument("--profile", choices=("quick", "full"), default="quick", help="parameter set (default quick)")
    report.add_argument(
        "--out",
        default=None,
        help="report folder (default: reports/ for --profile full, reports/_quick/ for quick; "
        "a quick run never overwrites a full-profile record)",
    )
    report.add_argument("--jobs", type=int, default=1, help="notebooks run in parallel (default 1)")
    report.add_argument(
        "--manifest",
        default=None,
        help="manifest file (default: notebooks/reports.toml of the clone you are in, else of the clone dpstats is "
        "installed from)",
    )
    report.add_argument("--no-progress", action="store_true", help="print no progress lines")
    report.add_argument(
        "--interval", type=float, default=15.0, help="seconds between progress lines of a running notebook (default 15)"
    )

    data = commands.add_parser("data", help="list or download the real datasets")
    data_commands = data.add_subparsers(dest="data_command", required=True)
    data_commands.add_parser("list", help="show each dataset, where it is expected and whether it is present")
    fetch = data_commands.add_parser("fetch", help="download a dataset and verify its SHA-256")
    fetch.add_argument("name", metavar="NAME", help="dataset name (see `dpstats data list`)")
    fetch.add_argument("--url", default=None, help="another source for the same file (mirror or file:// URL)")
    fetch.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    return parser


def _report(args) -> int:
    from .reports import list_reports, parse_changes, run_reports

    if args.list:
        print("\n".join(list_reports(args.manifest)))
        return 0
    report = run_reports(
        args.names,
        profile=args.profile,
        out=args.out,
        jobs=args.jobs,
        manifest=args.manifest,
        progress=not args.no_progress,
        interval=args.interval,
        changes=parse_changes(args.parameter),
    )
    for result in report.ran:
        status = "ok" if result.ok else f"FAILED: {result.error}"
        print(f"{result.name:<28} {result.seconds:7.1f} s  {status}")
    kept = len(report.results) - len(report.ran)
    print(f"index: {report.out / 'index.md'}" + (f" ({kept} other notebook(s) kept from earlier runs)" if kept else ""))
    return 0 if report.ok else 1


def _data_list() -> int:
    from . import datasets

    print(f"data folder: {datasets.data_home()}  (set DPSTATS_DATA to change it)")
    for name, spec in datasets.DATASETS.items():
        path = datasets.dataset_path(name)
        state = "present" if path.is_file() else f"missing (dpstats data fetch {name})"
        print(f"{name:<8} {state:<36} {path}")
        print(f"{'':<8} {spec.description}; source {spec.url}; licence {spec.licence}")
    return 0


def _data_fetch(args) -> int:
    from . import datasets

    path = datasets.fetch(args.name, url=args.url, progress=not args.no_progress)
    print(f"{args.name}: {path} (SHA-256 verified)")
    return 0


def main(argv=None) -> int:
    """Entry point of the ``dpstats`` command; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        if args.command == "report":
            return _report(args)
        if args.data_command == "list":
            return _data_list()
        return _data_fetch(args)
    except BrokenPipeError:  # the reader went away (`dpstats report --list | head`)
        return 0
    except (ParameterError, DataValidationError, OSError) as err:
        # OSError covers DownloadError (offline, checksum) and a missing manifest or notebook
        print(f"dpstats: error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("dpstats: interrupted", file=sys.stderr)
        return 130

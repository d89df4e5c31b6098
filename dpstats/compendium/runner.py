"""Execute one notebook with papermill: a quiet kernel, live progress lines, a tidy executed notebook.

Used by :mod:`dpstats.compendium.reports` only. The kernel is started with

* its own stdout and stderr sent to a temporary log (shown only when the notebook fails), so the kernel's
  start-up warnings ("running over TCP without encryption") and shutdown noise do not reach the terminal;
* ``MPLBACKEND`` set to the inline backend, so figures are stored in the executed notebook (the documentation
  site renders them from there), whatever backend the caller's shell sets (``make`` sets ``Agg``);
* ``DPSTATS_PROGRESS=text``, so :func:`dpstats.compendium.experiments.progress` draws plain-text bars on the notebook's
  stderr, which papermill streams back here while the cell runs.

While the notebook runs, a line ``name  elapsed  cell i/n  <the notebook's latest progress bar>`` is printed every
``interval`` seconds. Afterwards the executed notebook is tidied: progress-bar redraws are collapsed to their final
state, and no absolute path of this machine is left in its metadata or its printed text (:func:`scrub_paths`: a
warning's ``/tmp/ipykernel_…/….py:7:`` becomes ``<cell>:7:``, a file of the repository its path in it, an installed
package's ``<site-packages>/…``, the data folder ``$DPSTATS_DATA``).
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
import threading
import time
from pathlib import Path

PROGRESS_ENV = "DPSTATS_PROGRESS"
KERNEL_ENV = {"MPLBACKEND": "module://matplotlib_inline.backend_inline", PROGRESS_ENV: "text"}
_REDRAW = re.compile(r"[^\n]*\r(?=[^\n])")  # text a carriage return overwrites (as a terminal shows it)


class _Latest:
    """A write-only text stream that keeps the last non-empty line written to it (tqdm redraws with ``\\r``)."""

    def __init__(self):
        self.text = ""

    def write(self, text: str) -> int:
        lines = [part.strip() for part in re.split(r"[\r\n]", text) if part.strip()]
        if lines:
            self.text = lines[-1]
        return len(text)

    def flush(self) -> None:
        pass


class _Ticker:
    """Prints the state of one running notebook every ``interval`` seconds (a daemon thread)."""

    def __init__(self, name: str, interval: float, stream):
        self.name, self.interval, self.stream = name, interval, stream
        self.cells, self.notebook = _Latest(), _Latest()
        self.start = time.perf_counter()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def line(self) -> str:
        parts = [f"{self.name}", f"{time.perf_counter() - self.start:6.0f} s"]
        if self.cells.text:
            parts.append(f"cell {self.cells.text}")
        if self.notebook.text:
            parts.append(self.notebook.text[:100])
        return "  ".join(parts)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            print(f"  {self.line()}", file=self.stream, flush=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def _kernel_manager_class(log):
    """An AsyncKernelManager whose kernel writes its own output to ``log`` and gets :data:`KERNEL_ENV`."""
    from jupyter_client.manager import AsyncKernelManager

    class QuietKernelManager(AsyncKernelManager):
        async def _async_launch_kernel(self, kernel_cmd, **kw):
            kw["env"] = {**(kw.get("env") or os.environ), **KERNEL_ENV}
            kw["stdout"] = kw["stderr"] = log
            await super()._async_launch_kernel(kernel_cmd, **kw)

    return QuietKernelManager


def execute(
    source: Path, executed: Path, parameters: dict, *, name: str, root: Path, interval: float | None = 15.0, stream=None
) -> str:
    """Run ``source`` with papermill into ``executed``; return "" on success, else a one-line error.

    ``interval`` None prints nothing while it runs. ``root`` is the folder paths in the executed notebook's
    metadata are made relative to. Never raises for a failing notebook.
    """
    import papermill

    stream = stream if stream is not None else sys.stderr
    error = ""
    with tempfile.TemporaryFile(mode="w+") as log:
        ticker = _Ticker(name, interval or 0.0, stream)
        try:
            if interval:
                ticker.__enter__()
            papermill.execute_notebook(
                str(source),
                str(executed),
                parameters=parameters,
                cwd=str(source.parent),
                kernel_name="python3",
                progress_bar={"file": ticker.cells, "bar_format": "{n_fmt}/{total_fmt}", "mininterval": 0},
                stderr_file=ticker.notebook,
                stdout_file=_Latest(),
                kernel_manager_class=_kernel_manager_class(log),
            )
        except Exception as err:  # any failure is recorded in the index; the other notebooks still run
            error = summarize_error(err)
            log.seek(0)
            kernel_log = log.read().strip()
            if kernel_log:
                print(f"{name}: kernel log:\n{kernel_log[-3000:]}", file=stream)
        finally:
            if interval:
                ticker.__exit__()
    if executed.is_file():
        tidy(executed, root)
    return error


def summarize_error(err: BaseException) -> str:
    """One line: the notebook's exception name and message when papermill has them, else the error's."""
    ename, evalue = getattr(err, "ename", None), getattr(err, "evalue", None)
    text = f"{ename}: {evalue}" if ename else f"{type(err).__name__}: {err}"
    return text.strip().splitlines()[0] if text.strip() else type(err).__name__


def tidy(path: Path, root: Path) -> None:
    """Collapse progress-bar redraws in stream outputs, scrub machine paths from printed text (:func:`scrub_paths`)
    and make papermill's recorded paths relative to ``root``."""
    import nbformat

    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        if "outputs" in cell:
            cell["outputs"] = _coalesce_streams(cell["outputs"])
            scrub_outputs(cell["outputs"], root)
    meta = notebook.metadata.get("papermill", {})
    for key in ("input_path", "output_path"):
        if meta.get(key) and Path(meta[key]).is_absolute():
            meta[key] = relative(Path(meta[key]), root)
    nbformat.write(notebook, path)


_KERNEL_CELL = re.compile(r"/(?:[\w.-]+/)*ipykernel_\d+/\d+\.py")  # where IPython puts a cell's code
_SITE_PACKAGES = re.compile(r"(?:[A-Za-z]:)?[^\s:'\"]*[/\\](?:site|dist)-packages(?=[/\\])")


def scrub_paths(text: str, root: Path) -> str:
    """``text`` without the absolute paths of this machine: the cell a warning points at as ``<cell>``, files of
    the repository ``root`` relative to it, installed packages under ``<site-packages>``, and the data folder
    (:func:`dpstats.compendium.datasets.data_home`) as ``$DPSTATS_DATA``."""
    from .datasets import data_home

    text = _KERNEL_CELL.sub("<cell>", text)
    text = _SITE_PACKAGES.sub("<site-packages>", text)
    for folder, name in ((Path(root).resolve(), "."), (data_home().resolve(), "$DPSTATS_DATA")):
        prefix = folder.as_posix()
        if len(prefix) > 1:  # never rewrite "/"
            inside = "" if name == "." else f"{name}/"  # <root>/dpstats/x.py -> dpstats/x.py
            text = re.sub(re.escape(prefix) + r"/(?=[\w.$-])", lambda _, s=inside: s, text)
            text = re.sub(re.escape(prefix) + r"(?![\w.-])", lambda _, n=name: n, text)
    return text


def scrub_outputs(outputs: list, root: Path) -> None:
    """Apply :func:`scrub_paths` to the printed text of ``outputs`` (streams, errors, plain-text results)."""
    for output in outputs:
        if output.get("output_type") == "stream":
            output["text"] = scrub_paths(_text(output["text"]), root)
        elif output.get("output_type") == "error":
            output["evalue"] = scrub_paths(output.get("evalue", ""), root)
            output["traceback"] = [scrub_paths(line, root) for line in output.get("traceback", [])]
        for kind in ("text/plain", "text/markdown", "text/html"):
            if kind in output.get("data", {}):
                output["data"][kind] = scrub_paths(_text(output["data"][kind]), root)


def _text(value) -> str:
    return "".join(value) if isinstance(value, list) else value


def _coalesce_streams(outputs: list) -> list:
    """Join consecutive outputs of the same stream, then drop the text that carriage returns overwrite."""
    merged = []
    for output in outputs:
        previous = merged[-1] if merged else None
        if (
            output.get("output_type") == "stream"
            and previous is not None
            and previous.get("output_type") == "stream"
            and previous.get("name") == output.get("name")
        ):
            previous["text"] += output["text"]
        else:
            merged.append(output)
    for output in merged:
        if output.get("output_type") == "stream":
            output["text"] = _REDRAW.sub("", output["text"])
    return merged


def relative(path: Path, root: Path) -> str:
    """``path`` relative to ``root`` (POSIX separators), with ``..`` where needed; absolute only across drives."""
    try:
        return Path(os.path.relpath(Path(path).resolve(), Path(root).resolve())).as_posix()
    except ValueError:  # another drive (Windows)
        return Path(path).as_posix()

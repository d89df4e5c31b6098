"""The ledger file: an append-only, hash-chained log. Each kind of tampering is detected when the ledger is read,
with an error naming the file and the first bad record; every value read back is validated; a read-only folder
can be read, a full disk and a missing folder leave the ledger as it was."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import dpstats as dps
from dpstats.accounting import Gaussian, Laplace, LedgerError, LedgerTamperedError, gaussian_epsilon
from dpstats.accounting.log import FORMAT
from dpstats.exceptions import ParameterError

ROOT = Path(__file__).resolve().parents[1]


def _ledger(path: Path, releases: int = 4) -> dps.Accountant:
    acc = dps.Accountant(10.0, 1e-6, ledger_file=path)
    for i in range(releases):
        acc.record(f"release {i}", [Laplace.calibrated(10.0 + i, 1.0)], note=f"n{i}")
    return acc


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def test_the_file_is_one_json_record_per_line_each_with_the_hash_of_the_one_before(tmp_path):
    import hashlib

    path = tmp_path / "budget.jsonl"
    _ledger(path)
    lines = _lines(path)
    assert len(lines) == 5  # the header and four releases, nothing rewritten
    records = [json.loads(line) for line in lines]
    assert records[0]["format"] == FORMAT and records[0]["prev"] == "0" * 64
    for before, record in zip(lines, records[1:], strict=False):
        assert record["prev"] == hashlib.sha256(before.rstrip(b"\n")).hexdigest()
    head = (tmp_path / "budget.jsonl.head").read_text().split()[-2:]  # its last entry
    assert int(head[0]) == 5 and head[1] == hashlib.sha256(lines[-1].rstrip(b"\n")).hexdigest()
    size = path.stat().st_size
    dps.Accountant.open(path).spend(0.1, mechanism="appended")
    assert path.read_bytes()[:size] == b"".join(lines)  # appended, the old bytes untouched


def test_reopening_gives_the_same_ledger_and_total(tmp_path):
    path = tmp_path / "budget.jsonl"
    acc = _ledger(path)
    block = acc.parallel(2)
    block[0].record("part", [Gaussian(gaussian_epsilon(5.0, 1e-7), 1e-7, sigma=5.0)], relation="row")
    again = dps.Accountant.open(path)
    assert again.ledger == acc.ledger and again.spent == acc.spent and again.head == acc.head
    block.close()
    assert again.spent == acc.spent  # the close, appended by the first accountant, is read by the second


def _tampered(path: Path, match: str) -> None:
    with pytest.raises(LedgerTamperedError, match=match) as caught:
        dps.Accountant.open(path)
    assert str(path) in str(caught.value)


def _edit(index: int, old: bytes, new: bytes):
    def change(lines: list[bytes]) -> list[bytes]:
        lines[index] = lines[index].replace(old, new)
        return lines

    return change


TAMPERING = {
    "hand edit in the middle": (_edit(2, b'"note":"n1"', b'"note":"n9"'), "record 3 does not follow record 2"),
    "hand edit of the last record": (_edit(-1, b'"note":"n3"', b'"note":"n8"'), "head does not match record 4"),
    "deleted entry": (lambda lines: lines[:2] + lines[3:], "record 2 is numbered 3"),
    "inserted entry": (lambda lines: lines[:3] + lines[2:], "record 3 is numbered 2"),
    "truncated tail": (lambda lines: [*lines[:-1], lines[-1][:-30]], "ends at record 3 but its head says 5 records"),
    # two whole records gone: the chain alone still checks, the head does not
    "records cut from the end": (lambda lines: lines[:-2], "ends at record 2 but its head says 5 records"),
}


@pytest.mark.parametrize("kind", sorted(TAMPERING))
def test_each_kind_of_tampering_is_detected_and_names_the_file_and_record(tmp_path, kind):
    change, match = TAMPERING[kind]
    path = tmp_path / "budget.jsonl"
    _ledger(path)
    path.write_bytes(b"".join(change(_lines(path))))
    _tampered(path, match)


def test_a_missing_head_is_detected(tmp_path):
    path = tmp_path / "budget.jsonl"
    _ledger(path)
    (tmp_path / "budget.jsonl.head").unlink()
    _tampered(path, "head .* is missing")


def test_a_deleted_log_is_never_replaced_by_an_empty_one(tmp_path):
    path = tmp_path / "budget.jsonl"
    _ledger(path)
    path.unlink()
    with pytest.raises(LedgerTamperedError, match="missing but its head"):
        dps.Accountant(10.0, 1e-6, ledger_file=path)
    assert not path.exists()


def test_a_consistent_forgery_with_an_invalid_value_names_the_record(tmp_path):
    """Even a log whose chain and head were recomputed after the edit is read value by value."""
    import hashlib

    path = tmp_path / "budget.jsonl"
    _ledger(path)
    records = [json.loads(line) for line in _lines(path)]
    records[2]["entry"]["epsilon"] = -1.0
    prev, lines = "0" * 64, []
    for record in records:
        record["prev"] = prev
        line = json.dumps(record, sort_keys=True, separators=(",", ":")).encode()
        prev = hashlib.sha256(line).hexdigest()
        lines.append(line + b"\n")
    path.write_bytes(b"".join(lines))
    (tmp_path / "budget.jsonl.head").write_text(f"{len(lines):020d} {prev}\n")
    _tampered(path, r"record 2: ledger entry \(release 1\): epsilon must be a finite number >= 0; got -1.0")


def _write_log(path: Path, records: list[dict]) -> None:
    """A log of ``records`` (without n and prev) with its chain and head, as dpstats writes them."""
    import hashlib

    prev, lines = "0" * 64, []
    for n, record in enumerate(records):
        line = json.dumps({"n": n, "prev": prev, **record}, sort_keys=True, separators=(",", ":")).encode()
        prev = hashlib.sha256(line).hexdigest()
        lines.append(line + b"\n")
    path.write_bytes(b"".join(lines))
    path.with_name(path.name + ".head").write_text(f"{len(lines):020d} {prev}\n")


def _old_entry(name: str, epsilon: float) -> dict:
    """An entry as a ledger written before relations were recorded holds it (no relation)."""
    event = Laplace.calibrated(1.0 / epsilon, 1.0)
    return {
        "mechanism": name,
        "epsilon": event.epsilon,
        "delta": 0.0,
        "note": "",
        "proven": True,
        "events": [event.to_dict()],
    }


def test_an_older_ledger_opens_and_its_blocks_releases_compose_in_sequence(tmp_path):
    """Ledgers written before relations were recorded (a log, and a JSON export) still open. A release of unknown
    relation in a parallel block may have protected a privacy unit whose rows lay in both parts (the review's
    case), so it is charged in sequence with the block: 0.5 + 0.25, not max(0.5, 0.25)."""
    budget = {"epsilon": 1.0, "delta": 0.0, "composition": "basic", "slack": None, "allow_unproven": False}
    path = tmp_path / "old.jsonl"
    _write_log(
        path,
        [
            {"format": FORMAT, "budget": budget},
            {"parallel": 2},
            {"entry": _old_entry("a", 0.5), "block": 0, "part": 0},
            {"entry": _old_entry("b", 0.25), "block": 0, "part": 1},
            {"close": 0},
        ],
    )
    acc = dps.Accountant.open(path)
    assert acc.spent == (0.75, 0.0) and [e.relation for e in acc.ledger] == [None, None]
    block = acc.parallel(2)  # new releases in new blocks compose in parallel
    block[0].spend(0.125, relation="row")
    block[1].spend(0.0625, relation="row")
    block.close()
    assert dps.Accountant.open(path).spent == (0.875, 0.0)
    export = {
        "format": "dpstats-ledger/1",
        **budget,
        "entries": [{"parallel": [[_old_entry("a", 0.5)], [_old_entry("b", 0.25)]], "closed": True}],
    }
    assert dps.Accountant.from_json(json.dumps(export)).spent == (0.75, 0.0)


def test_a_release_of_another_relation_in_a_block_is_refused_when_read_back(tmp_path):
    """dpstats never records a unit-level release in a block by rows: one found there was put there by hand."""
    acc = dps.Accountant(1.0, 0.0, composition="basic")
    with acc.parallel(2) as block:
        block[0].spend(0.5, relation="row")
    data = json.loads(acc.to_json())
    data["entries"][0]["parallel"][0][0]["relation"] = "unit"
    with pytest.raises(ParameterError, match="entry 1, part 1, release 1: a release with relation 'unit' in a "):
        dps.Accountant.from_json(json.dumps(data))
    path = tmp_path / "budget.jsonl"
    acc = dps.Accountant(1.0, 0.0, composition="basic", ledger_file=path)
    with acc.parallel(2) as block:
        block[0].spend(0.5, relation="row")
    records = [{k: v for k, v in json.loads(line).items() if k not in ("n", "prev")} for line in _lines(path)]
    records[2]["entry"]["relation"] = "unit"
    _write_log(path, records)
    _tampered(path, "record 2: a release with relation 'unit' in a parallel block split by 'row'")


def test_the_head_lag_window_is_one_record_appended(tmp_path):
    """The documented window of the log (dpstats.accounting.log, "What the files cannot show"): with the head untouched,
    one record appended after the last, numbered and chained, reads as a crashed spend's unfinished append; a
    second is detected. Rewinding the head by one record lets the last record be replaced, which only a copy of
    the head kept elsewhere shows."""
    path = tmp_path / "budget.jsonl"
    noted = _ledger(path).head
    records = [{k: v for k, v in json.loads(line).items() if k not in ("n", "prev")} for line in _lines(path)]
    extra = {"entry": _old_entry("appended", 0.125)}
    head = path.with_name(path.name + ".head").read_bytes()
    _write_log(path, [*records, extra])
    path.with_name(path.name + ".head").write_bytes(head)
    assert dps.Accountant.open(path).ledger[-1].mechanism == "appended"
    _write_log(path, [*records, extra, extra])
    path.with_name(path.name + ".head").write_bytes(head)
    _tampered(path, "its head does not match")
    _write_log(path, records[:-1])
    rewound = path.with_name(path.name + ".head").read_bytes()
    _write_log(path, [*records[:-1], extra])
    path.with_name(path.name + ".head").write_bytes(rewound)
    replaced = dps.Accountant.open(path)
    assert replaced.ledger[-1].mechanism == "appended" and replaced.head != noted


@pytest.mark.parametrize("rule", ["basic", "pld", "zcdp"])
def test_an_event_labelled_below_its_noise_is_refused_when_read_back(rule):
    """The review's cases (ledger_attacks.py c, d): a Laplace of scale 1 on sensitivity 1 labelled ε = 0.001, and
    a Gaussian of σ/Δ = 0.01 labelled (0.001, 0), used to be read back and reported as spent ε = 0.001."""
    laplace = {
        "type": "laplace",
        "epsilon": 0.001,
        "delta": 0.0,
        "scale": 1.0,
        "sensitivity": 1.0,
        "discrete": False,
        "coordinates": 1,
    }
    gaussian = {
        "type": "gaussian",
        "epsilon": 0.001,
        "delta": 0.0,
        "sigma": 0.01,
        "sensitivity": 1.0,
        "discrete": False,
        "repeat": 1,
        "failure": 0.0,
    }
    for event, match in [(laplace, "below what its noise gives"), (gaussian, "not a guarantee of its noise")]:
        text = json.dumps(
            {
                "format": "dpstats-ledger/1",
                "epsilon": 1.0,
                "delta": 1e-6,
                "composition": rule,
                "slack": None,
                "allow_unproven": False,
                "entries": [
                    {"mechanism": "mean", "epsilon": 0.001, "delta": 0.0, "note": "", "proven": True, "events": [event]}
                ],
            }
        )
        with pytest.raises(ParameterError, match=f"entry 1 \\(mean\\): privacy event .*{match}"):
            dps.Accountant.from_json(text)


def test_a_file_shortened_under_a_live_accountant_stops_it_for_good(tmp_path):
    path = tmp_path / "budget.jsonl"
    acc = _ledger(path)
    path.write_bytes(b"".join(_lines(path)[:-1]))
    for _ in range(2):  # the error is final: no silent reset on a second try
        with pytest.raises(LedgerTamperedError, match="shorter than when it was last read"):
            acc.spend(0.1)
    with pytest.raises(LedgerTamperedError):
        acc.spent  # noqa: B018


# ----------------------------------------------------------------------------- values read back


def _export_with(tmp_path, change) -> str:
    acc = dps.Accountant(10.0, 1e-6)
    acc.record("first", [Laplace.calibrated(10.0, 1.0)])
    acc.record("second", [Gaussian(gaussian_epsilon(5.0, 1e-7), 1e-7, sigma=5.0)])
    data = json.loads(acc.to_json())
    change(data["entries"][1])
    return json.dumps(data)


@pytest.mark.parametrize(
    "change,match",
    [
        (lambda e: e.update(epsilon=-0.5), "epsilon must be a finite number >= 0; got -0.5"),
        (lambda e: e.update(epsilon=float("nan")), "epsilon must be a finite number >= 0; got nan"),
        (lambda e: e["events"][0].update(delta=1.0), r"delta must lie in \[0, 1\); got 1.0"),
        (lambda e: e["events"][0].update(type="magic"), "unknown privacy event type 'magic'"),
        (lambda e: e["events"][0].update(sigma="5"), "sigma must be a finite number"),
        (lambda e: e.update(epsilon=0.25), "is not the total of its events"),
        (lambda e: e.update(events=[]), "events must be a non-empty list"),
        (lambda e: e.update(noise=[{"distribution": "Gaussian"}]), "a noise statement has the fields"),
    ],
)
def test_from_json_validates_every_value_and_names_the_entry(tmp_path, change, match):
    with pytest.raises(ParameterError, match=match) as caught:
        dps.Accountant.from_json(_export_with(tmp_path, change))
    assert "entry 2 (second)" in str(caught.value)


def test_from_json_validates_the_budget():
    acc = dps.Accountant(1.0)
    data = json.loads(acc.to_json())
    data["delta"] = 2.0
    with pytest.raises(ParameterError, match="delta"):
        dps.Accountant.from_json(json.dumps(data))


def test_a_json_export_given_as_a_ledger_file_says_what_it_is(tmp_path):
    path = tmp_path / "budget.json"
    path.write_text(dps.Accountant(1.0).to_json())
    with pytest.raises(LedgerError, match="from_json"):
        dps.Accountant(1.0, ledger_file=path)


# ----------------------------------------------------------------------------- the file system


def test_a_missing_folder_is_a_clear_error_and_creates_nothing(tmp_path):
    path = tmp_path / "no such folder" / "budget.jsonl"
    with pytest.raises(LedgerError, match="folder .*no such folder does not exist"):
        dps.Accountant(1.0, ledger_file=path)
    assert list(tmp_path.iterdir()) == []


def _in_child(code: str, *, as_nobody: bool = False, file_size_limit: int | None = None) -> str:
    """Run ``code`` in a fresh interpreter (optionally as user nobody, or under a file-size limit); its stdout."""
    prelude = "import os, resource, signal\n"
    if file_size_limit is not None:  # writes beyond the limit fail with EFBIG, as on a full disk with ENOSPC
        prelude += "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        prelude += f"resource.setrlimit(resource.RLIMIT_FSIZE, ({file_size_limit}, {file_size_limit}))\n"
    if as_nobody:  # the interpreter may live where nobody cannot read: import what the code needs first
        prelude += "import fcntl, dpstats.accounting, scipy.optimize, dp_accounting.pld.privacy_loss_distribution\n"
        prelude += "os.setgid(65534); os.setuid(65534)\n"
    result = subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_a_ledger_in_a_read_only_folder_can_be_read_but_not_charged(tmp_path):
    folder = Path(os.environ.get("TMPDIR", "/tmp")) / f"dpstats-read-only-{os.getpid()}"
    folder.mkdir()
    try:
        path = folder / "budget.jsonl"
        acc = _ledger(path)
        expected = acc.spent
        before = path.read_bytes()
        for name in (path, folder / "budget.jsonl.head"):
            name.chmod(0o444)
        folder.chmod(0o555)
        # root ignores permissions: the child drops to user nobody, for whom the folder is really read-only
        out = _in_child(
            f"""
            import dpstats as dps
            from dpstats.accounting import LedgerError
            acc = dps.Accountant.open({str(path)!r})
            print(acc.spent, len(acc.ledger))
            try:
                acc.spend(0.1)
            except LedgerError as err:
                print("refused:", err)
            """,
            as_nobody=os.geteuid() == 0,
        )
        assert out.splitlines()[0] == f"{expected} 4"
        assert "is read-only" in out and "can be read and audited" in out
        assert path.read_bytes() == before
    finally:
        folder.chmod(0o755)
        for name in folder.iterdir():
            name.unlink()
        folder.rmdir()


def test_a_full_disk_refuses_the_release_and_leaves_the_ledger_as_it_was(tmp_path):
    path = tmp_path / "budget.jsonl"
    _ledger(path)
    before, head = path.read_bytes(), (tmp_path / "budget.jsonl.head").read_bytes()
    out = _in_child(
        f"""
        import numpy as np
        import dpstats as dps
        from dpstats.accounting import LedgerError
        acc = dps.Accountant.open({str(path)!r})
        rng = np.random.default_rng(0)
        state = rng.bit_generator.state
        try:
            dps.mean([0.5, 0.2], 0.5, bounds=(0, 1), rng=rng, accountant=acc)
        except LedgerError as err:
            print("refused:", err)
        print("no noise drawn:", rng.bit_generator.state == state)
        """,
        file_size_limit=len(before) + 100,  # room for part of one more line only
    )
    assert "refused: could not write to ledger file" in out and "File too large" in out
    assert "no noise drawn: True" in out
    assert path.read_bytes() == before and (tmp_path / "budget.jsonl.head").read_bytes() == head
    assert sorted(p.name for p in tmp_path.iterdir()) == ["budget.jsonl", "budget.jsonl.head"]
    assert len(dps.Accountant.open(path).ledger) == 4


# ----------------------------------------------------------------------------- a crash at any byte (issue 39, item 5)


def _head_path(path: Path) -> Path:
    return path.with_name(path.name + ".head")


def _snapshots(path: Path) -> tuple[dps.Accountant, list[tuple[bytes, bytes]]]:
    """A ledger of three releases, then two more; the (log, head) bytes before and after each of the last two."""
    acc = dps.Accountant(10.0, 1e-6, composition="basic", ledger_file=path)  # basic: a quick read back
    states = []
    for i in range(5):
        states.append((path.read_bytes(), _head_path(path).read_bytes()))
        acc.record(f"release {i}", [Laplace.calibrated(10.0 + i, 1.0)], note=f"n{i}")
    states.append((path.read_bytes(), _head_path(path).read_bytes()))
    return acc, states[-3:]


def _crash_states(states):
    """Every state a crash (a power loss included) can leave during the last two appends: each append writes its
    record and flushes it to disk, then its head, so the files are (what was on disk before, plus any prefix of the
    one write under way). Yields (log, head, releases the ledger must hold, releases it may hold)."""
    for (log0, head0), (log1, head1), done in ((states[0], states[1], 3), (states[1], states[2], 4)):
        for cut in range(len(log0), len(log1) + 1):  # the record being written
            yield log1[:cut], head0, done, done + (cut == len(log1))
        for cut in range(len(head0), len(head1) + 1):  # the record on disk, the head being written
            yield log1, head1[:cut], done + 1, done + 1


def test_a_crash_at_any_byte_of_the_last_two_appends_leaves_a_ledger_that_opens_with_every_released_spend(tmp_path):
    """Issue 39, item 5, one way: after a crash at any byte of an append the ledger opens (before, a record cut
    short, or a head left behind by a power loss, marked the ledger as tampered for good), holds every release that
    went out (a release goes out only after its head is on disk), and takes the next spend."""
    path = tmp_path / "budget.jsonl"
    _, states = _snapshots(path)
    count = 0
    for log, head, must, may in _crash_states(states):
        path.write_bytes(log)
        _head_path(path).write_bytes(head)
        acc = dps.Accountant.open(path)
        held = len(acc.ledger)
        assert must <= held <= may, (len(log), len(head))
        if count % 16 == 0:  # the next spend finishes what the crash left (a sample of the states)
            acc.spend(0.01, mechanism="after the crash")
            again = dps.Accountant.open(path)
            assert len(again.ledger) == held + 1 and again.head == acc.head
        count += 1
    assert count > 2 * 200 + 2 * 86  # two records of a few hundred bytes and two head entries, byte by byte


def test_a_cut_of_a_released_spend_is_detected_at_any_byte(tmp_path):
    """The other way: with the head of the last append on disk, cutting the log anywhere within the last two
    records, or deleting the last record whole, is detected: a crash cannot look like it, since a release goes out
    only after its head is written."""
    path = tmp_path / "budget.jsonl"
    _, states = _snapshots(path)
    log, head = states[-1]
    start, middle = len(states[0][0]), len(states[1][0])
    for cut in sorted({*range(start, len(log), 5), start, middle - 1, middle, len(log) - 1}):  # every 5th byte
        path.write_bytes(log[:cut])
        _head_path(path).write_bytes(head)
        with pytest.raises(LedgerTamperedError):
            dps.Accountant.open(path)


def test_what_a_hash_chain_cannot_see_and_a_pinned_head_does(tmp_path):
    """Deleting the last record *and* the last head entry (a deleted pair), or cutting the log to a consistent
    prefix with its head, is not detected by the files alone (docs/guide/privacy.md); a head kept elsewhere
    (Accountant.head) and checked with Accountant.check_head is."""
    path = tmp_path / "budget.jsonl"
    acc, states = _snapshots(path)
    pinned = acc.head
    acc.check_head(pinned)
    for log, head in states[:2]:  # the pair of the last release deleted; the last two
        path.write_bytes(log)
        _head_path(path).write_bytes(head)
        rolled_back = dps.Accountant.open(path)
        assert len(rolled_back.ledger) < 5
        with pytest.raises(LedgerTamperedError, match="pinned head"):
            rolled_back.check_head(pinned)
    with pytest.raises(ParameterError, match="head"):
        acc.check_head((3, "not a hash"))


def test_the_record_then_the_head_are_flushed_to_disk_before_the_release_goes_out(tmp_path, monkeypatch):
    """The head used to be written and never flushed: after a power loss it could lag several records behind the
    log, and the ledger was then read as tampered for good. A spend now flushes the record, then the head, before
    it returns (and the release goes out)."""
    path = tmp_path / "budget.jsonl"
    acc = dps.Accountant(1.0, 0.0, composition="basic", ledger_file=path)
    inodes = {path.stat().st_ino: "log", _head_path(path).stat().st_ino: "head"}
    flushed, fdatasync = [], os.fdatasync

    def recorded(fd):  # the real flush, and which file it was
        flushed.append(inodes.get(os.fstat(fd).st_ino))
        fdatasync(fd)

    monkeypatch.setattr(os, "fdatasync", recorded)
    acc.spend(0.1)
    assert flushed == ["log", "head"]

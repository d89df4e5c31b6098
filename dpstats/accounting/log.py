"""The ledger file: an append-only log of JSON records, one per line, each carrying the hash of the one before.

Format ``dpstats-ledger-log/1``. Line k (k = 0, 1, ...) is a JSON object, keys sorted, no spaces::

    {"n": k, "prev": H(k-1), ...the record...}

where H(k) is the SHA-256 (hex) of line k's bytes without its newline, and H(-1) is 64 zeros. Line 0 holds the
format and the budget; every later line one change of the ledger (a release, a parallel block opened or closed).
A spend appends one line, writes and flushes it to disk (``fdatasync``) while it holds an exclusive ``flock`` on
the file, so the file is never rewritten and a charge is never lost (a spend at the ten-thousandth release writes one
line, as at the first). Readers hold a shared lock, and read only what was appended since their last read.

The **head** file beside it (the same name + ``.head``) holds, for every append, one entry of fixed length: the
number of records and the last record's hash (86 bytes: 20 digits, a space, 64 hex digits, a newline). Its entries
are appended, never rewritten; its last complete entry is the head. The hash chain alone cannot see whole records
cut from the end; the head does. (A ledger written before holds one entry, rewritten in place: it reads alike.)

When the log is read (opened, or brought up to date before a spend) these are detected, with an error that names
the file and the first record that does not check (:class:`~dpstats.exceptions.LedgerTamperedError`): a record
edited (its successor's hash of it no longer matches, or it no longer parses), deleted, inserted or reordered (the
numbers or the chain break), a record the head covers cut short or cut from the end (the head says more), a file
shorter than already read, a missing or malformed head. An error is final for that accountant: it never resets
itself.

**Crash safety.** A spend (1) writes its record and flushes it to disk (``fdatasync``), (2) appends its head entry
and flushes it, and only then returns, so that the release can go out. A crash or a power loss leaves what was
flushed before, plus any prefix of the one write under way; every such state opens, and holds every spend whose
release went out:

* a last line cut short (a crash during (1)) is not read: that spend never returned. It is accepted only where
  the head says the log ends;
* one complete record after the head's (a crash between (1) and (2)) stands, as an unfinished append: it is read
  and charged (its release did not go out: the charge is on the safe side);
* a last head entry cut short (a crash during (2)) is not read: the entry before it stands, and the record it
  would have covered is the unfinished append above.

The next spend finishes what the crash left, under the exclusive lock, before its own writes: it cuts a torn last
line or head entry, and appends the head entry of an unheaded record. (Before, the head was rewritten in place and
never flushed: after a power loss it could lag several records, and the ledger read as tampered for good; a record
cut short by a crash did too.)

**What the files cannot show.** Whoever can write both files can roll the ledger back, and no hash chain can show
it, because the chain holds no secret:

* a **deleted pair**: the last record deleted together with its head entry reads as the ledger before that spend;
* a **consistent prefix**: the log cut after any record, with a head entry that names it (its hash is in the file),
  reads as a complete ledger of that many records; a log rewritten from some record on, with a head to match,
  likewise.

And with the head left as it is, **one** record appended after it, numbered and chained to the last, reads as the
unfinished append of a crash (it can only add a charge); deleting such an unheaded record reads as a crash before
it was written — which forgets no release, since a release goes out only after its head entry is on disk.
Everything else — a change to any record the head covers, two records beyond it, a cut inside the records it
covers — is detected. Against the rollbacks, keep a copy of the head elsewhere (:attr:`dpstats.Accountant.head`:
a lab notebook, a commit, a message to a colleague) and check it later with :meth:`dpstats.Accountant.check_head`,
which raises if the ledger no longer extends it; or keep the files where only dpstats' processes can write.
(Requiring the head to be current would make every crash between the two writes look like tampering, and writing
the head first would let a record be cut from the end unseen; neither is better.)

A full disk (or a file-size limit) while appending truncates the log back to its previous length and raises
:class:`~dpstats.exceptions.LedgerError`: the release is refused and the ledger is as it was. No temporary file
is ever written.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import time
from pathlib import Path

from ..exceptions import LedgerError, LedgerTamperedError

__all__ = ["FORMAT", "LedgerLog"]

FORMAT = "dpstats-ledger-log/1"
_ZERO = "0" * 64
_HEAD_LENGTH = 86  # 20 digits, a space, 64 hex digits, a newline
_CREATION_WAITS = 500  # x 10 ms: how long a reader waits for another process to write a new log's first line


def _canonical(record: dict) -> bytes:
    return json.dumps(record, sort_keys=True, separators=(",", ":"), allow_nan=False).encode("ascii")


class LedgerLog:
    """An append-only, hash-chained log file (the module docstring), read incrementally.

    Parameters
    ----------
    path : pathlib.Path
        The log; its head is ``path`` + ``.head``.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.head_path = path.with_name(path.name + ".head")
        self.count = 0
        self._offset = 0
        self._last, self._before_last = _ZERO, None
        self._torn = 0  # bytes of a last line cut short by a crash (not read; the next append removes them)
        self._unheaded = False  # the last record's head entry is missing (a crash between the two writes)
        self._broken: LedgerTamperedError | None = None

    @property
    def head(self) -> tuple[int, str]:
        """(number of records read, hash of the last): note it elsewhere to detect a rewrite of the whole log."""
        return self.count, self._last

    # ------------------------------------------------------------------ opening

    def start(self, header: dict | None) -> list[tuple[int, dict]]:
        """Read and check the whole log, creating it with ``header`` first if it does not exist (``header=None``:
        it must exist). Returns every (record number, record), the header first."""
        if not self.path.exists():
            if header is None:
                raise LedgerError(f"ledger file {self.path} does not exist")
            if self.head_path.exists():
                raise LedgerTamperedError(
                    f"ledger file {self.path} is missing but its head {self.head_path} is there: the log was deleted "
                    "(a new, empty ledger is not created in its place)"
                )
            self._create(header)
        for _ in range(_CREATION_WAITS):
            with self.locked(write=False) as fd:
                if os.fstat(fd).st_size:
                    records = self.read_new(fd)
                    break
            time.sleep(0.01)  # another process has created the file and is writing its first line
        else:
            raise LedgerError(f"ledger file {self.path} is empty: its creation did not finish")
        if not records or records[0][1].get("format") != FORMAT:
            raise LedgerTamperedError(f"ledger file {self.path}: record 0 is not a {FORMAT} header")
        return records

    def read_header(self) -> dict:
        """Record 0 (the format and the budget) alone, for opening a ledger whose budget is not known yet; the
        whole log is checked when it is read."""
        try:
            with open(self.path, "rb") as handle:
                first = handle.readline()
        except FileNotFoundError as err:
            raise LedgerError(f"ledger file {self.path} does not exist") from err
        except OSError as err:
            raise LedgerError(f"cannot read ledger file {self.path}: {err.strerror}") from err
        try:
            record = json.loads(first)
        except (UnicodeDecodeError, json.JSONDecodeError):
            record = None
        if not isinstance(record, dict) or record.get("format") != FORMAT or not isinstance(record.get("budget"), dict):
            self.fail(f"ledger file {self.path}: record 0 is not a {FORMAT} header with a budget")
        return record

    def _create(self, header: dict) -> None:
        folder = self.path.parent
        if not folder.is_dir():
            raise LedgerError(f"cannot create ledger file {self.path}: the folder {folder} does not exist")
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o644)
        except FileExistsError:
            return  # another process is creating it: start() waits for its first line
        except OSError as err:
            raise LedgerError(f"cannot create ledger file {self.path}: {err.strerror}") from err
        try:
            _lock(fd, write=True)
            try:
                with open(self.head_path, "wb") as head:
                    head.write(_head_bytes(0, _ZERO))
                    head.flush()
                    os.fdatasync(head.fileno())
                self.append(fd, {"format": FORMAT, **header})
            except (OSError, LedgerError):
                with contextlib.suppress(OSError):
                    self.head_path.unlink()
                with contextlib.suppress(OSError):
                    self.path.unlink()
                raise
        finally:
            os.close(fd)
        self.count, self._offset, self._last, self._before_last = 0, 0, _ZERO, None  # read it back in start()

    # ------------------------------------------------------------------ locking

    @contextlib.contextmanager
    def locked(self, write: bool):
        """The log's file descriptor, locked: exclusively to ``write``, shared to read. To write, the log must be
        writable: in a read-only folder it can still be read (and audited)."""
        if self._broken is not None:
            raise self._broken
        flags = os.O_RDWR | os.O_APPEND if write else os.O_RDONLY
        try:
            fd = os.open(self.path, flags)
        except FileNotFoundError:
            self.fail(f"ledger file {self.path} has disappeared")
        except OSError as err:
            if write and err.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
                raise LedgerError(
                    f"ledger file {self.path} is read-only ({err.strerror}): it can be read and audited, but no "
                    "release can be charged to it. Nothing was released."
                ) from err
            raise LedgerError(f"cannot open ledger file {self.path}: {err.strerror}") from err
        try:
            _lock(fd, write)
            yield fd
        finally:
            os.close(fd)  # releases the lock

    # ------------------------------------------------------------------ reading

    def read_new(self, fd: int) -> list[tuple[int, dict]]:
        """The (record number, record) pairs appended since the last read, each checked against the chain, then
        the head. A last line cut short is the record of an append a crash interrupted (module docstring, "Crash
        safety"): it is not read, and it is allowed only where the head says the log ends."""
        size = os.fstat(fd).st_size
        if size < self._offset:
            self.fail(
                f"ledger file {self.path} is shorter than when it was last read ({size} < {self._offset} bytes): "
                f"records up to record {self.count - 1} were removed or cut"
            )
        data = os.pread(fd, size - self._offset, self._offset) if size > self._offset else b""
        complete = data.rfind(b"\n") + 1
        records = [self._checked(line) for line in data[:complete].split(b"\n")[:-1]]
        self._offset += complete
        self._torn = len(data) - complete
        self._check_head()
        return records

    def _checked(self, line: bytes) -> tuple[int, dict]:
        n = self.count
        try:
            record = json.loads(line)
        except (UnicodeDecodeError, json.JSONDecodeError):
            self.fail(f"ledger file {self.path}: record {n} is not valid JSON (edited or cut short)")
        if not isinstance(record, dict) or record.get("n") != n:
            found = record.get("n") if isinstance(record, dict) else record
            self.fail(
                f"ledger file {self.path}: record {n} is numbered {found!r}: a record was deleted, inserted or moved"
            )
        if record.get("prev") != self._last:
            self.fail(
                f"ledger file {self.path}: record {n} does not follow record {n - 1} (the hash it holds of the "
                f"record before does not match): record {n - 1} was edited, or records were deleted or inserted"
            )
        self._before_last, self._last = self._last, hashlib.sha256(line).hexdigest()
        self.count += 1
        return n, {key: value for key, value in record.items() if key not in ("n", "prev")}

    def _read_head(self) -> tuple[int, str]:
        """The last complete entry of the head file (a last entry cut short is a head append a crash
        interrupted: the one before stands)."""
        try:
            with open(self.head_path, "rb") as head:
                size = os.fstat(head.fileno()).st_size
                entries = size // _HEAD_LENGTH
                text = os.pread(head.fileno(), _HEAD_LENGTH, (entries - 1) * _HEAD_LENGTH) if entries else b""
        except FileNotFoundError:
            self.fail(
                f"ledger file {self.path}: its head {self.head_path} is missing, so records cut from the end could "
                "not be seen (when copying a ledger, copy its .head file with it)"
            )
        except OSError as err:
            raise LedgerError(f"cannot read {self.head_path}: {err.strerror}") from err
        parts = text.split()
        if len(text) != _HEAD_LENGTH or not text.endswith(b"\n") or len(parts) != 2 or not parts[0].isdigit():
            self.fail(f"ledger file {self.path}: its head {self.head_path} is malformed")
        return int(parts[0]), parts[1].decode("ascii", "replace")

    def _check_head(self) -> None:
        count, last = self._read_head()
        self._unheaded = False
        if count == self.count and last == self._last:
            return
        if count == self.count - 1 and last == self._before_last and not self._torn:
            self._unheaded = True  # an append wrote its record but not its head (a crash in between): it stands
            return
        if count > self.count:
            self.fail(
                f"ledger file {self.path} ends at record {self.count - 1} but its head says {count} records: "
                f"records from record {self.count} on were removed from the end"
            )
        self.fail(
            f"ledger file {self.path}: its head does not match record {count - 1} (the head says {count} records, "
            f"the log has {self.count}): the last records were edited or the head was replaced"
        )

    def fail(self, message: str):
        """Raise LedgerTamperedError(message), and again on every later use of this log."""
        self._broken = LedgerTamperedError(message)
        raise self._broken

    # ------------------------------------------------------------------ writing

    def append(self, fd: int, record: dict) -> None:
        """Append ``record`` (under the exclusive lock, after :meth:`read_new`): what a crash left unfinished is
        finished first (a torn last line cut off, a missing head entry written), then the record is written and
        flushed to disk, then its head entry is appended and flushed: only then may the release go ahead (module
        docstring, "Crash safety"). On any failure both files are cut back to their previous lengths and
        LedgerError is raised."""
        line = _canonical({"n": self.count, "prev": self._last, **record})
        digest = hashlib.sha256(line).hexdigest()
        with self._head_file() as head:
            head_size = self._finish_crashed_append(fd, head)
            try:
                _write_all(fd, line + b"\n")
                os.fdatasync(fd)  # the record is on disk before its head
                _write_all(head, _head_bytes(self.count + 1, digest))
                os.fdatasync(head)  # the head is on disk before the release goes ahead
            except OSError as err:
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, self._offset)
                    os.fdatasync(fd)
                with contextlib.suppress(OSError):
                    os.ftruncate(head, head_size)
                    os.fdatasync(head)
                raise self._write_error(err) from err
        self._before_last, self._last = self._last, digest
        self.count += 1
        self._offset += len(line) + 1

    @contextlib.contextmanager
    def _head_file(self):
        """The head file, opened to append (its entries are never rewritten)."""
        try:
            head = os.open(self.head_path, os.O_RDWR | os.O_APPEND)
        except OSError as err:
            raise self._write_error(err) from err
        try:
            yield head
        finally:
            os.close(head)

    def _finish_crashed_append(self, fd: int, head: int) -> int:
        """Finish what a crash left (under the exclusive lock, after :meth:`read_new`): cut a torn last line of the
        log and a torn last head entry, and write the head entry of a record that has none. Each step leaves a state
        a crash could have left, so a failure here changes nothing that is read. Returns the head's length."""
        try:
            if self._torn:
                os.ftruncate(fd, self._offset)
                os.fdatasync(fd)
                self._torn = 0
            size = os.fstat(head).st_size
            if size % _HEAD_LENGTH:
                size -= size % _HEAD_LENGTH
                os.ftruncate(head, size)
                os.fdatasync(head)
            if self._unheaded:
                _write_all(head, _head_bytes(self.count, self._last))
                os.fdatasync(head)
                size += _HEAD_LENGTH
                self._unheaded = False
        except OSError as err:
            raise self._write_error(err) from err
        return size

    def _write_error(self, err: OSError) -> LedgerError:
        return LedgerError(
            f"could not write to ledger file {self.path} ({err.strerror or err}: a full disk, a file-size limit "
            "or a read-only folder); the release was refused and the ledger file is as it was. Nothing was "
            "released."
        )

    # ------------------------------------------------------------------ a head kept elsewhere

    def check_pinned(self, fd: int, count: int, digest: str) -> None:
        """Check (under a lock, after :meth:`read_new`) that the log holds the pinned head: at least ``count``
        records, the record ``count − 1`` with SHA-256 ``digest``. Raises LedgerTamperedError otherwise (a
        rollback or a rewrite the files alone cannot show: module docstring)."""
        if count > self.count:
            self.fail(
                f"ledger file {self.path} holds {self.count} records but the pinned head says {count}: records were "
                "removed from the end together with their head entries (a rollback the files alone cannot show)"
            )
        if count == 0:
            found = _ZERO
        else:
            lines = os.pread(fd, self._offset, 0).split(b"\n")
            found = hashlib.sha256(lines[count - 1]).hexdigest()
        if found != digest:
            self.fail(
                f"ledger file {self.path}: record {count - 1} is not the one of the pinned head (its hash differs): "
                "the log was rewritten from there on, with a head to match"
            )


def _head_bytes(count: int, digest: str) -> bytes:
    return f"{count:020d} {digest}\n".encode("ascii")


def _lock(fd: int, write: bool) -> None:
    import fcntl

    fcntl.flock(fd, fcntl.LOCK_EX if write else fcntl.LOCK_SH)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]

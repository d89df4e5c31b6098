"""Download a file with a progress bar, a SHA-256 check and an atomic write.

The file is streamed into a temporary file in the destination folder, hashed on
the way, and moved into place with :func:`os.replace` only when its checksum is
one of the known-good ones. On any failure (network, checksum, interrupt) the
temporary file is removed, so no half-written or unverified file is ever left
under the final name.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

from .exceptions import DownloadError

__all__ = ["download", "sha256sum"]

_CHUNK = 1 << 16
_TIMEOUT = 30.0


def sha256sum(path: str | os.PathLike) -> str:
    """Hex SHA-256 digest of the file at ``path``."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def download(url: str, dest: str | os.PathLike, sha256: tuple[str, ...], *, progress: bool = True) -> Path:
    """Download ``url`` to ``dest`` unless a file with a known-good checksum is already there.

    Parameters
    ----------
    url : str
        Any URL :func:`urllib.request.urlopen` understands (``https://``, ``http://``, ``file://``).
    dest : path
        Final location. Its folder is created if needed.
    sha256 : tuple of str
        Accepted hex SHA-256 digests of the file.
    progress : bool, default True
        Show a tqdm progress bar (bytes).

    Returns
    -------
    pathlib.Path
        ``dest``.

    Raises
    ------
    DownloadError
        The URL could not be read, or the downloaded bytes match none of the checksums.
        Nothing is written to ``dest`` in either case.
    """
    dest = Path(dest)
    accepted = {s.lower() for s in sha256}
    if dest.is_file() and sha256sum(dest) in accepted:
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".part", dir=dest.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            digest = _stream(url, out, progress=progress, label=dest.name)
        if digest not in accepted:
            raise DownloadError(
                f"checksum mismatch for {url}: got SHA-256 {digest}, expected "
                f"{' or '.join(sorted(accepted))}; the download was discarded"
            )
        os.replace(tmp_name, dest)
    finally:
        if os.path.exists(tmp_name):
            os.remove(tmp_name)
    return dest


def _stream(url: str, out, *, progress: bool, label: str) -> str:
    """Copy ``url`` into the open binary file ``out``; return the hex SHA-256 of the bytes."""
    from tqdm.auto import tqdm

    digest = hashlib.sha256()
    try:
        with urllib.request.urlopen(url, timeout=_TIMEOUT) as response:
            length = response.headers.get("Content-Length")
            total = int(length) if length and length.isdigit() else None
            with tqdm(total=total, unit="B", unit_scale=True, desc=label, disable=not progress) as bar:
                for chunk in iter(lambda: response.read(_CHUNK), b""):
                    out.write(chunk)
                    digest.update(chunk)
                    bar.update(len(chunk))
    except (urllib.error.URLError, OSError, ValueError) as err:
        reason = getattr(err, "reason", err)
        raise DownloadError(f"could not download {url}: {reason}") from err
    return digest.hexdigest()

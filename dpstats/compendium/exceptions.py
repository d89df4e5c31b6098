"""The compendium's errors: data sets that are missing or could not be downloaded (the library never raises them)."""

__all__ = ["DatasetNotFoundError", "DownloadError"]


class DatasetNotFoundError(FileNotFoundError):
    """A real dataset's file is not in the data folder (the message names the command that fetches it)."""


class DownloadError(OSError):
    """A dataset could not be downloaded or did not match its checksum."""

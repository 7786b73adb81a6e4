"""Where the tasks of a Spark write job put their files until the driver commits.

Every task attempt writes under a directory of its own::

    <path>/_temporary/<job>/attempt-<task attempt id>/...

Readers skip names starting with ``_``, so nothing staged is ever read. The driver makes
``<path>/_temporary/<job>`` when it plans the job; commit moves the files of the winning
attempts into place and removes the rest (failed, retried and speculative attempts, killed
ones included: whatever they left is under their directory); abort removes everything.

An attempt that starts after the job was committed or aborted fails at once. A dataset
write's commit also *closes* the job first (renames its directory): an attempt still
writing then finds its directory gone or replaced when it finishes, and removes what it
wrote itself.
"""

from __future__ import annotations

import os
import shutil
import uuid

from ..errors import LanceIOError

__all__ = ["STAGING_DIR", "StagedJob"]

STAGING_DIR = "_temporary"


class StagedJob:
    """Mixin of the write jobs: ``self.root`` and ``self.job_id`` name the staging directory."""

    root: str
    job_id: str

    @property
    def staging(self) -> str:
        return os.path.join(self.root, STAGING_DIR, self.job_id)

    # -- on the executors -------------------------------------------------------------
    def open_attempt(self) -> tuple[str, int]:
        """Make this task attempt's directory: its path and inode (see :meth:`attempt_closed`)."""
        from pyspark import TaskContext

        ctx = TaskContext.get()
        attempt = ctx.taskAttemptId() if ctx else uuid.uuid4().hex[:8]
        path = os.path.join(self.staging, f"attempt-{attempt}")
        try:
            os.mkdir(path)  # the driver made the job's directory; if it is gone the job is over
        except FileNotFoundError:
            raise LanceIOError(f"{self.staging} is gone: the write job was committed or aborted") from None
        return path, os.stat(path).st_ino

    def attempt_closed(self, path: str, inode: int) -> bool:
        """Whether the job was closed while this attempt wrote (its directory moved away; a
        new file may have re-created the path). If so, what is at ``path`` is removed."""
        try:
            if os.stat(path).st_ino == inode:
                return False
        except FileNotFoundError:
            pass
        shutil.rmtree(path, ignore_errors=True)
        for d in (self.staging, os.path.dirname(self.staging)):
            try:
                os.rmdir(d)
            except OSError:
                pass
        return True

    # -- on the driver ----------------------------------------------------------------
    def close_staging(self) -> str | None:
        """Rename the job's directory so no attempt can add to it; its new path (None if gone)."""
        closed = f"{self.staging}.closed"
        try:
            os.rename(self.staging, closed)
        except FileNotFoundError:
            return None
        return closed

    def cleanup(self) -> None:
        """Remove the job's staging directory, and ``_temporary`` when no other job uses it."""
        shutil.rmtree(f"{self.staging}.closed", ignore_errors=True)
        shutil.rmtree(self.staging, ignore_errors=True)
        try:
            os.rmdir(os.path.join(self.root, STAGING_DIR))
        except OSError:
            pass  # another job is still writing, or it never existed

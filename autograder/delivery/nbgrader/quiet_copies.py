"""nbgrader's log without a line per file copied."""

from __future__ import annotations

import logging


class QuietCopies(logging.Filter):
    """Leaves out nbgrader's "Copying SOURCE -> DESTINATION" lines, one per file of each notebook's
    folder; every other line of the log stays."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.msg != "Copying %s -> %s"

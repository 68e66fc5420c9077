"""What the page calls each submission: its own name, or a stable pseudonym (an HMAC of the
name under a key kept in the grades folder)."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from pathlib import Path

from ... import bidi

KEY_FILE = ".pseudonym-key"  # in the grades folder; a dot name no submission can be filed under


class Names:
    """What the page calls each submission: its own name, or a stable pseudonym."""

    def __init__(self, folder: Path, names: list[str], anonymise: bool):
        self.anonymise = anonymise
        self.shown = {name: name for name in names}
        if anonymise:
            key = _pseudonym_key(folder)
            self.shown = {name: "student-" + hmac.new(key, name.encode(), hashlib.sha256).hexdigest()[:8]
                          for name in names}
        # the longest name first, so that a name inside another is not replaced within it
        self._order = sorted((n for n in names if len(n) >= 3), key=len, reverse=True)

    def __call__(self, name: str) -> str:
        return self.shown.get(name, name)

    def html(self, name: str) -> str:
        """What the page calls ``name``, as HTML isolated from the text around it (a name may be
        written right to left)."""
        return bidi.bdi(self(name))

    def scrub(self, text: str) -> str:
        """``text`` with every submission's name replaced by its pseudonym (feedback, notes, code)."""
        if not self.anonymise or not self._order:
            return text
        pattern = re.compile("|".join(re.escape(n) for n in self._order))
        return pattern.sub(lambda m: self.shown[m.group(0)], text)


def _pseudonym_key(folder: Path) -> bytes:
    """The batch's pseudonym key, made on first use: the same names get the same pseudonyms on
    every run, and nobody without the key can recompute them from a class list."""
    path = folder / KEY_FILE
    if not path.is_file():
        path.write_text(secrets.token_hex(32) + "\n", encoding="ascii")
        path.chmod(0o600)
    return bytes.fromhex(path.read_text(encoding="ascii").strip())

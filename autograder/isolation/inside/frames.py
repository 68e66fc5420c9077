"""The frames the grader and a worker exchange: a body's length (4 bytes, big-endian), then the body.

The one definition of the header, for both sides: the worker reads and writes frames with
:func:`read_frame` and :func:`write_frame`; the grader, which bounds every read and write by a
deadline, with :class:`autograder.isolation.channel.Channel` on :data:`HEADER`.
"""

import struct

HEADER = struct.Struct(">I")


def read_frame(inbox):
    """The next frame's body from the binary stream ``inbox``; None once it ends (mid-frame too)."""
    header = inbox.read(HEADER.size)
    if len(header) < HEADER.size:
        return None
    (size,) = HEADER.unpack(header)
    chunks, remaining = [], size
    while remaining:
        chunk = inbox.read(remaining)
        if not chunk:
            return None
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def write_frame(outbox, payload):
    """``payload`` as one frame, in one write."""
    outbox.write(HEADER.pack(len(payload)) + payload)

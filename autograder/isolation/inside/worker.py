"""The sandboxed worker: it imports student code and runs the calls the grader sends.

This module runs inside the sandbox, next to ``codec.py`` and ``landlock.py`` (the only other
engine files it can see): the grader starts Python with their folder first on ``sys.path`` and
calls :func:`main` (:meth:`autograder.isolation.process.Worker._command`). It talks to the
grader over its original stdin and stdout with length-prefixed JSON frames; once started it
points file descriptors 0, 1 and 2 at ``/dev/null``, so nothing the student prints can reach the
grader's pipes: what a call prints through ``sys.stdout`` and ``sys.stderr`` goes back, bounded,
as plain data in its answer (:func:`answer`). Before it imports any student code it confines
itself (:func:`confine`) and sends one frame saying whether that worked. Objects that are not
plain data stay here, in a table of handles.

Nothing here is trusted by the grader: a student can rewrite any of it at run time, which only
changes what the student's own calls return.
"""

import _signal as signal  # type: ignore[import-not-found]  # the signal module's enums took 3 ms of a start
import builtins
import io
import os
import resource
import struct
import sys

TYPE_CHECKING = False  # typing is not imported, which would add 3 ms to every worker's start

if TYPE_CHECKING:  # mypy reads the siblings as the package's own modules
    from . import codec, landlock
else:  # the sibling modules, found on sys.path (no package inside the sandbox)
    import codec
    import landlock

PR_SET_PDEATHSIG = 1

HEADER = struct.Struct(">I")
PRINTED_CHARS = 8000  # of what one call prints, what crosses back with its answer


def apply_limits(limits):
    """Lower this process's resource limits, soft and hard, so student code cannot raise them."""
    for name, value in limits.items():
        resource.setrlimit(getattr(resource, name), (value, value))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the size cap fails, it doesn't kill


def die_with_parent():
    """Be killed when the grader's side of the pipe goes away (the parent that started us)."""
    parent = os.getppid()
    landlock.libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before the signal was set
        os._exit(1)


def confine(config):
    """Take away what student code must not have: capabilities, files, network. Raises OSError."""
    if config["drop_capabilities"]:
        landlock.drop_capabilities()
    if config["landlock"]:
        landlock.restrict(config["read"], config["write"])
    # a zygote (told of its control socket) runs no student code and cleans after its children with chmod
    landlock.deny_syscalls(processes=config["no_processes"], metadata="control" not in config)


class NotebookShell:
    """What ``get_ipython()`` gives a module made from a notebook (:mod:`autograder.batch.notebook`
    turns ``%magic`` and ``!command`` into calls on it): every magic and shell command does
    nothing, except that the body of a timing or capturing cell magic (``%%time``) still runs,
    since the definitions in it are the student's answer."""

    RUN_BODY = {"time", "timeit", "capture", "prun"}

    def run_cell_magic(self, name, line, cell):
        if name in self.RUN_BODY:
            exec(cell, sys._getframe(1).f_globals)

    def getoutput(self, *args, **kwargs):
        return []

    def __getattr__(self, name):  # run_line_magic, system, ...: nothing happens
        return lambda *args, **kwargs: None


def take_protocol_pipes():
    """Keep the grader's pipes on private descriptors; point fds 0-2 at /dev/null. The inbox
    is buffered, so that a frame's header and body mostly come in one read."""
    inbox = os.fdopen(os.dup(0), "rb")
    outbox = os.fdopen(os.dup(1), "wb", buffering=0)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    return inbox, outbox


def read_frame(inbox):
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
    outbox.write(HEADER.pack(len(payload)) + payload)


class Handles:
    """The objects the grader refers to by number; each object gets one number."""

    def __init__(self):
        self.objects = []
        self.numbers = {}

    def number(self, obj):
        key = id(obj)
        if key not in self.numbers:
            self.numbers[key] = len(self.objects)
            self.objects.append(obj)
        return {"$handle": [self.numbers[key], type(obj).__name__]}

    def get(self, number):
        if type(number) is not int or not 0 <= number < len(self.objects):
            raise LookupError(f"no object number {number}")
        return self.objects[number]


def describe_error(error, roots):
    """Plain data about an exception: its class chain, message and the student's frames (none
    if they cannot be read: ``traceback`` is imported only now, about 3 ms saved on every start,
    and student code may have used up the files or the memory that importing it needs)."""
    try:
        message = str(error)
    except BaseException:  # a student's __str__ may itself raise
        message = "<the exception's message could not be read>"
    try:
        where = _student_frames(error, roots)
    except BaseException:
        where = ""
    return {
        "type": type(error).__name__,
        "mro": [cls.__name__ for cls in type(error).__mro__],
        "message": message[:2000],
        "traceback": where[-4000:],
    }


def _student_frames(error, roots):
    """The traceback's frames in the student's files, with paths as the student knows them."""
    import traceback

    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename.startswith(roots)]
    lines = traceback.format_list(frames)
    if isinstance(error, SyntaxError):
        lines += traceback.format_exception_only(type(error), error)
    where = "".join(lines)
    for root in roots:  # exercises/ex1_merge_tracing.py
        where = where.replace(root.rstrip("/") + "/", "")
    return where


def serve(inbox, outbox, handles, roots):
    """Answer requests until the grader closes the pipe."""
    while (frame := read_frame(inbox)) is not None:
        request = codec.loads(frame, handles.get)
        write_frame(outbox, call_member(request, handles, roots) if "name" in request and request["op"] == "call"
                    else answer(request, handles, roots))


def answer(request, handles, roots):
    """The answer to an import, a lookup or a call: ``ok`` and the result, or ``error``; a call's
    answer also holds, as ``printed``, the start of what it wrote to ``sys.stdout`` and
    ``sys.stderr``, if anything (imports and lookups print to /dev/null: their answers must be
    the same in every fresh worker)."""
    printed = Printed() if request["op"] == "call" else None
    streams = sys.stdout, sys.stderr
    try:
        if printed is not None:
            sys.stdout = sys.stderr = printed
        if request["op"] == "import":
            __import__(request["module"])  # as importlib.import_module, whose package took 1 ms of every start
            result = sys.modules[request["module"]]
        elif request["op"] == "getattr":
            result = getattr(request["target"], request["name"])
        else:
            result = request["target"](*request["args"], **request["kwargs"])
        reply: dict[str, object] = {"ok": result}
    except BaseException as error:  # SystemExit and friends are the student's too
        reply = {"error": describe_error(error, roots)}
    finally:
        sys.stdout, sys.stderr = streams
    if printed is not None and printed.getvalue():
        reply["printed"] = printed.getvalue()
    try:
        return codec.dumps(reply, handles.number)
    except BaseException as error:
        return codec.dumps({"error": describe_error(error, roots)})


class Printed(io.StringIO):
    """``sys.stdout`` and ``sys.stderr`` during a call: keeps the first :data:`PRINTED_CHARS`
    characters written, and one more if more came, so the grader can say it was cut."""

    def write(self, text):
        if not isinstance(text, str):
            return super().write(text)  # raises TypeError, as any text stream does
        room = PRINTED_CHARS + 1 - self.tell()
        if room > 0:
            super().write(text[:room])
        return len(text)


def call_member(request, handles, roots):
    """The answer to ``target.name(*args, **kwargs)`` asked in one request, as the lookup and
    the call asked one after the other would have answered: ``lookup_error`` if the lookup
    raised, ``attr`` (the value found, not called) if it is not callable, else the call's."""
    try:
        member = getattr(request["target"], request["name"])
        if not callable(member):
            return codec.dumps({"attr": member}, handles.number)
    except BaseException as error:
        return codec.dumps({"lookup_error": describe_error(error, roots)})
    return answer({"op": "call", "target": member, "args": request["args"], "kwargs": request["kwargs"]},
                  handles, roots)


def be_zygote(modules, sources, inbox, outbox, config):
    """Import ``modules`` (the standard library's, which the submission imports), answer the
    code compiled from ``sources`` (:func:`compiled`), then fork a child per property on
    request, one at a time; student code never runs here.

    Requests come on the pipe: ``fork`` (the child's two pipes come alongside on the control
    socket, SCM_RIGHTS) and ``end`` (kill the child, collect it, answer its wait status). A
    child is this process, confined once more, and imports the submission itself
    (:func:`be_child`): whatever it changes, in memory or in its own folder, dies with it."""
    submission = sys.path[:len(config["path"])]
    del sys.path[:len(config["path"])]  # the submission's files must not stand in for them
    for module in modules:
        try:
            __import__(module)
        except BaseException:  # the child that imports it meets the failure, as a fresh worker would
            pass
    sys.path[:0] = submission
    import _socket  # type: ignore[import-not-found]  # no socket(2): the seccomp filter denies it

    control = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM, 0, config["control"])
    write_frame(outbox, b'{"ok":' + compiled(sources, submission[0]) + b"}")
    child, number = None, 0
    tmp = shared_tmp(config)
    while (frame := read_frame(inbox)) is not None:
        if codec.loads(frame)["op"] == "end":
            status, cleared = end_child(child, tmp)
            child = None
            write_frame(outbox, codec.to_json({"ok": status}).encode())
            if not cleared:  # what the child left could reach the next one: no more children
                return
            continue
        _, ancillary, _, _ = control.recvmsg(1, _socket.CMSG_SPACE(8))
        pipes = [int.from_bytes(ancillary[0][2][at:at + 4], sys.byteorder) for at in (0, 4)]
        number += 1
        folder = os.path.join(config["work"], f"property-{number}")
        os.mkdir(folder)
        child = (os.fork(), folder)
        if child[0] == 0:
            try:
                be_child(pipes, folder, config, tmp is not None)
            finally:  # never back into this loop, whatever student code raised
                os._exit(0)
        for end in pipes:
            os.close(end)
        write_frame(outbox, b'{"ok":null}')


def compiled(sources, root):
    """The code of each of ``sources`` (paths below ``root``, the submission's folder) as its
    import would compile it, in checked-hash pyc files, wire-encoded as {path: bytes}; files
    that do not compile are left out, for the child that imports them to meet the error. A
    helper forked for it compiles, under a Landlock of its own that reads only those files and
    writes nothing, so that what the compiler makes of student code passes through this
    process only as bytes, unread."""
    import _frozen_importlib_external as external  # type: ignore[import-not-found]  # importlib's own
    import _imp  # type: ignore[import-not-found]

    reading, writing = os.pipe()
    helper = os.fork()
    if helper == 0:
        try:
            os.close(reading)
            paths = {name: os.path.join(root, name) for name in sources}
            landlock.restrict(list(paths.values()), [])
            code = {}
            for name, path in paths.items():
                try:
                    with open(path, "rb") as file:
                        source = file.read()
                    code[name] = bytes(external._code_to_hash_pyc(compile(source, path, "exec", dont_inherit=True),  # type: ignore[attr-defined]
                                                                  _imp.source_hash(external._RAW_MAGIC_NUMBER, source),  # type: ignore[attr-defined]
                                                                  True))
                except (OSError, SyntaxError, ValueError):
                    continue
            with os.fdopen(writing, "wb") as pipe:
                pipe.write(codec.dumps(code))
        finally:
            os._exit(0)
    os.close(writing)
    with os.fdopen(reading, "rb") as pipe:
        wire = pipe.read()
    os.waitpid(helper, 0)
    return wire or b"null"


def end_child(child, tmp):
    """Kill a child (pid, folder), collect it, and remove its folder and what it left in
    ``/tmp`` (the zygote's own tmpfs under bubblewrap, which children write as a fresh worker
    writes its own; ``tmp`` holds its size and its entries before any child, bubblewrap's
    folders for the paths it binds below ``/tmp``, or is None); its wait status, and whether all
    of that is gone. A helper forked for it does the removing, so that nothing the child chose
    (its files' names) passes through this process's memory, which the next child is a copy
    of; it first gives back any write permission the child took away."""
    if child is None:
        return None, True
    pid, folder = child
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    status = os.waitpid(pid, 0)[1]

    def left():
        dirty = ["/tmp"] if tmp and os.stat("/tmp").st_size != tmp[0] else []  # its size counts its entries
        try:
            os.rmdir(folder)  # most children leave nothing
        except FileNotFoundError:
            pass
        except OSError:
            dirty.append(folder)
        return dirty

    if dirty := left():
        helper = os.fork()
        if helper == 0:
            try:
                import shutil  # before the Landlock below, which leaves nothing to read

                landlock.restrict([], dirty)  # no reach into the zygote, whatever it reads
                for path in dirty:
                    empty(path, shutil.rmtree, tmp[1] if path == "/tmp" else ())
            finally:
                os._exit(0)
        os.waitpid(helper, 0)
        dirty = left()
    return status, not dirty


def empty(folder, rmtree, keep=()):
    """Remove everything in ``folder`` but the entries named in ``keep``, making read-only
    folders inside it writable first."""
    def writable_again(function, path, _):
        os.chmod(os.path.dirname(path), 0o700)
        function(path)

    if folder != "/tmp":  # the tmpfs root keeps its sticky 1777
        os.chmod(folder, 0o700)
    for entry in os.scandir(folder):
        if entry.name in keep:
            continue
        if entry.is_dir(follow_symlinks=False):
            os.chmod(entry.path, 0o700)
            rmtree(entry.path, onerror=writable_again)
        else:
            os.unlink(entry.path)


def shared_tmp(config):
    """``/tmp`` as children may write it: its size and entries before any child wrote there
    (bubblewrap's folders for the paths it binds below it), so each child's leavings can be
    found and removed; None where children do not write it (no bubblewrap, or one of those
    folders is this uid's own, where a child could leave a file inside it unseen)."""
    if "/tmp" not in config["write"]:
        return None
    names = os.listdir("/tmp")
    for name in names:
        info = os.lstat(os.path.join("/tmp", name))
        if info.st_uid == os.getuid() or info.st_mode & 0o022:
            return None
    return os.stat("/tmp").st_size, frozenset(names)


def be_child(pipes, folder, config, tmp=False):
    """One property's worker, forked from the zygote: confined once more (Landlock), so that it
    writes only its own folder and signals no process outside itself, and changes no file's
    metadata (:func:`landlock.deny_metadata`), then serves its ``pipes`` (the one it reads,
    the one it writes)."""
    low, high = sorted(pipes)  # all else is closed: the zygote's pipes and its control socket
    for start, stop in ((3, low), (low + 1, high), (high + 1, resource.getrlimit(resource.RLIMIT_NOFILE)[0])):
        os.closerange(start, stop)
    inbox, outbox = os.fdopen(pipes[0], "rb"), os.fdopen(pipes[1], "wb", buffering=0)  # as take_protocol_pipes
    die_with_parent()
    try:
        landlock.restrict(config["read"], [folder, "/dev/null", *(["/tmp"] if tmp else [])])
        landlock.deny_metadata()
    except OSError as error:
        write_frame(outbox, codec.to_json({"broken": str(error)}).encode())
        return
    os.chdir(folder)
    os.environ["HOME"] = os.environ["TMPDIR"] = folder
    if "tempfile" in sys.modules:
        sys.modules["tempfile"].tempdir = None  # type: ignore[attr-defined]  # found again, from TMPDIR
    write_frame(outbox, b'{"ready":true}')
    serve(inbox, outbox, Handles(), tuple(config["path"]))


def with_site_packages(folders):
    """What ``site`` gives every Python, less its ``.pth`` files: the worker starts with ``-S``,
    since running them (an editable install's finder, setuptools' hook) took two thirds of its
    start. Student code still imports installed packages and finds ``exit``, ``quit`` and ``help``."""
    import site

    sys.path.extend(folder for folder in folders if folder not in sys.path)
    site.setquit()
    site.setcopyright()
    site.sethelper()


def main():
    config = codec.from_json(sys.argv[1])
    inbox, outbox = take_protocol_pipes()
    die_with_parent()
    apply_limits(config["limits"])
    try:
        confine(config)
    except OSError as error:
        write_frame(outbox, codec.to_json({"broken": str(error)}).encode())
        return
    write_frame(outbox, b'{"ready":true}')
    sys.path[:0] = config["path"]
    with_site_packages(config["site"])
    sys.dont_write_bytecode = True
    shell = NotebookShell()
    builtins.get_ipython = lambda: shell  # type: ignore[attr-defined]
    if "control" not in config:
        serve(inbox, outbox, Handles(), tuple(config["path"]))
    elif (frame := read_frame(inbox)) is not None:  # a zygote, told what to import first
        request = codec.loads(frame)
        be_zygote(request["modules"], request["compile"], inbox, outbox, config)

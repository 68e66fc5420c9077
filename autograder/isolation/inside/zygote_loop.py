"""A zygote: a worker that imports what a submission's exercise needs once, then forks a child per property.

The grader starts it as any fresh worker (:func:`worker.start`), but runs :func:`main` here: told
which standard-library modules to import and which of the submission's files to compile, it does
so, answers the compiled code, and then forks one child at a time on request. Student code never
runs in the zygote: each child imports the submission itself, confined once more
(:func:`be_child`), and whatever it changes dies with it (:func:`end_child`).
The grader's side is :class:`autograder.isolation.zygote.Zygote`.
"""

import os
import resource
import sys

TYPE_CHECKING = False  # typing is not imported: a worker's every import is paid at each of its starts

if TYPE_CHECKING:  # mypy reads the siblings as the package's own modules
    from . import codec, cpython, landlock, seccomp, worker
    from .frames import read_frame, write_frame
else:  # the sibling modules, found on sys.path (no package inside the sandbox)
    import codec
    import cpython
    import landlock
    import seccomp
    import worker
    from frames import read_frame, write_frame


def main():
    """A zygote: started as every worker is, then told what to import first."""
    started = worker.start()
    if started is not None and (frame := read_frame(started[1])) is not None:
        config, inbox, outbox = started
        request = codec.loads(frame)
        be_zygote(request["modules"], request["compile"], inbox, outbox, config)


def be_zygote(modules, sources, inbox, outbox, config):
    """Import ``modules`` (the standard library's, which the submission imports), answer the
    code compiled from ``sources`` (:func:`compiled`), then fork a child per property on
    request, one at a time; student code never runs here.

    Requests come on the pipe: ``end`` (kill the child, collect it, answer its wait status) and
    ``fork``, which ends the child before it first (the new child's two pipes come alongside on
    the control socket, SCM_RIGHTS). A child is this process, confined once more, and imports
    the submission itself (:func:`be_child`): whatever it changes, in memory or in its own
    folder, dies with it."""
    submission = sys.path[:len(config["path"])]
    del sys.path[:len(config["path"])]  # the submission's files must not stand in for them
    for module in modules:
        try:
            __import__(module)
        except BaseException:  # the child that imports it meets the failure, as a fresh worker would
            pass
    sys.path[:0] = submission
    control, cmsg_space = cpython.unix_socket(config["control"])
    write_frame(outbox, b'{"ok":' + compiled(sources, submission[0]) + b"}")
    child, number = None, 0
    tmp = shared_tmp(config)
    while (frame := read_frame(inbox)) is not None:
        status, cleared = end_child(child, tmp)
        child, ending = None, codec.loads(frame)["op"] == "end"
        if ending:
            write_frame(outbox, codec.to_json({"ok": status}).encode())
        if not cleared:  # what the child left could reach the next one: no more children
            return
        if ending:
            continue
        _, ancillary, _, _ = control.recvmsg(1, cmsg_space(8))
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
                    code[name] = cpython.checked_pyc(compile(source, path, "exec", dont_inherit=True), source)
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
        os.kill(pid, cpython.signal.SIGKILL)
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
    metadata (:func:`seccomp.deny_metadata`), then serves its ``pipes`` (the one it reads,
    the one it writes)."""
    low, high = sorted(pipes)  # all else is closed: the zygote's pipes and its control socket
    for start, stop in ((3, low), (low + 1, high), (high + 1, resource.getrlimit(resource.RLIMIT_NOFILE)[0])):
        os.closerange(start, stop)
    inbox, outbox = os.fdopen(pipes[0], "rb"), os.fdopen(pipes[1], "wb", buffering=0)  # as take_protocol_pipes
    worker.die_with_parent()
    try:
        landlock.restrict(config["read"], [folder, "/dev/null", *(["/tmp"] if tmp else [])])
        seccomp.deny_metadata()
    except OSError as error:
        write_frame(outbox, codec.to_json({"broken": str(error)}).encode())
        return
    os.chdir(folder)
    os.environ["HOME"] = os.environ["TMPDIR"] = folder
    if "tempfile" in sys.modules:
        sys.modules["tempfile"].tempdir = None  # type: ignore[attr-defined]  # found again, from TMPDIR
    write_frame(outbox, b'{"ready":true}')
    worker.serve(inbox, outbox, worker.Handles(), tuple(config["path"]))

"""The sandboxed worker: it imports student code and runs the calls the grader sends.

It runs inside the sandbox, beside ``codec.py`` and ``landlock.py``: the grader starts Python
with their folder first on ``sys.path`` and calls :func:`main`. It talks over its original stdin
and stdout in length-prefixed JSON frames, then points descriptors 0, 1 and 2 at ``/dev/null``;
what a call prints goes back, bounded, in its answer (:func:`answer`). It confines itself
(:func:`confine`) before any student import; objects that are not plain data stay here behind
handles. The grader trusts nothing here. Why: docs/architecture.md, "Processes and
boundaries"; docs/security.md, "A worker".
"""

import builtins
import io
import os
import resource
import sys
import time

TYPE_CHECKING = False  # typing is not imported: a worker's every import is paid at each of its starts

if TYPE_CHECKING:  # mypy reads the siblings as the package's own modules
    from . import codec, cpython, landlock, seccomp
    from .frames import HEADER, read_frame, write_frame
else:  # the sibling modules, found on sys.path (no package inside the sandbox)
    import codec
    import cpython
    import landlock
    import seccomp
    from frames import HEADER, read_frame, write_frame

signal = cpython.signal
PR_SET_PDEATHSIG = 1
PRINTED_CHARS = 8000  # of what one call prints, what crosses back with its answer
HOLD_SECONDS = 0.005  # how long a batch's answers wait to go out together (answer_batch)


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
    """Take away what student code must not have: capabilities, files, network, every system
    call it does not need. Its affinity and priority are its grader's, which it cannot change
    once confined. Raises OSError."""
    if config["drop_capabilities"]:
        landlock.drop_capabilities()
    if config["landlock"]:
        landlock.restrict(config["read"], config["write"])
    # a zygote (told of its control socket) runs no student code and cleans after its children with chmod
    seccomp.restrict(processes=config["no_processes"], metadata="control" not in config,
                     pid_namespace=config["pid_namespace"])


class NotebookShell:
    """What ``get_ipython()`` gives a module made from a notebook (:mod:`autograder.intake.notebook`
    turns ``%magic`` and ``!command`` into calls on it): every magic and shell command does
    nothing, except that the body of a timing or capturing cell magic (``%%time``) still runs,
    since the definitions in it are the student's answer."""

    RUN_BODY = {"time", "timeit", "capture", "prun"}

    def run_cell_magic(self, name, line, cell):
        if name in self.RUN_BODY:
            exec(cell, cpython.caller_globals())

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
    if they cannot be read: ``traceback`` is imported only now, so that a start does not pay for it,
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
    """Answer requests until the grader closes the pipe: a frame holds one request, or a batch
    of them (a JSON array, :func:`answer_batch`)."""
    while (frame := read_frame(inbox)) is not None:
        if frame[:1] == b"[":
            answer_batch(codec.from_json(frame), outbox, handles, roots)
        else:
            write_frame(outbox, respond(codec.loads(frame, handles.get), handles, roots))


def respond(request, handles, roots):
    """The answer frame's body for one decoded request."""
    if "name" in request and request["op"] == "call":
        return call_member(request, handles, roots)
    return answer(request, handles, roots)


def answer_batch(requests, outbox, handles, roots):
    """Answer a batch's requests in their order, each in a frame of its own. The answers go out
    together, in one write, unless the calls so far took longer than :data:`HOLD_SECONDS`: then
    what is held goes out before the next call starts, so the grader sees a slow batch make
    progress and times out only a call that runs past its limit."""
    held, since = bytearray(), time.monotonic()
    for data in requests:
        body = respond(codec.decode(data, handles.get), handles, roots)
        held += HEADER.pack(len(body)) + body
        if time.monotonic() - since > HOLD_SECONDS:
            outbox.write(held)
            held, since = bytearray(), time.monotonic()
    if held:
        outbox.write(held)


def answer(request, handles, roots):
    """The answer to an import, a lookup or a call: ``ok`` and the result, or ``error``; a call's
    answer also holds, as ``printed``, the start of what it wrote to ``sys.stdout`` and
    ``sys.stderr``, if anything (imports and lookups print to /dev/null: their answers must be
    the same in every fresh worker), and, as ``changed``, the arguments it changed, if any
    (:func:`changed_arguments`)."""
    call = request["op"] == "call"
    printed = Printed() if call else None
    before = encoded_arguments(request, handles) if call else None
    streams = sys.stdout, sys.stderr
    try:
        if printed is not None:
            sys.stdout = sys.stderr = printed
        if request["op"] == "import":
            __import__(request["module"])  # as importlib.import_module, without importing its package at every start
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
    if before is not None:
        changed = changed_arguments(before, request, handles)
        if changed:
            reply["changed"] = changed
    try:
        return codec.dumps(reply, handles.number)
    except BaseException as error:
        return codec.dumps({"error": describe_error(error, roots)})


def encoded_arguments(request, handles):
    """A call's arguments as the wire writes them (a fresh copy of their plain data, student
    objects by number), one per positional argument and one per keyword; an argument that
    cannot be written (a list the call made hold itself) is None."""
    return ([encoded(value, handles) for value in request["args"]],
            {name: encoded(value, handles) for name, value in request["kwargs"].items()})


def encoded(value, handles):
    try:
        return codec.encode(value, handles.number)
    except BaseException:
        return None


def changed_arguments(before, request, handles):
    """The arguments a call changed, compared with ``before`` (:func:`encoded_arguments`): values,
    nested containers and the order of dict keys count, the order a set happens to iterate in does
    not. Each is ``[name, how]``: its parameter's name (``"argument 2"`` if that cannot be told),
    and ``"order"`` when only the order of some keys changed, else ``"value"``."""
    after = encoded_arguments(request, handles)
    if codec.to_json([after[0], list(after[1].items())]) == codec.to_json([before[0], list(before[1].items())]):
        return []  # the usual case, decided in C (``==`` would take 1 for 1.0 or True)
    names = parameter_names(request["target"])
    pairs = [(names[i] if i < len(names) else f"argument {i + 1}", old, after[0][i]) for i, old in enumerate(before[0])]
    pairs += [(name, old, after[1][name]) for name, old in before[1].items()]
    return [[name, how(old, new)] for name, old, new in pairs if new is None or canonical(old) != canonical(new)]


def how(old, new):
    """How an argument changed: ``"order"`` if only the order of some keys did, else ``"value"``."""
    if new is None:
        return "value"
    return "order" if canonical(old, any_order=True) == canonical(new, any_order=True) else "value"


def canonical(encoded, any_order=False):
    """An encoded value as JSON text, each set's items in a fixed order (a set's own depends on
    its history, which is no change), and with ``any_order`` each dict's items too."""
    def walk(value):
        if type(value) is list:
            return [walk(item) for item in value]
        if type(value) is not dict:
            return value
        (tag, body), = value.items()
        if tag in ("$set", "$frozenset") or (any_order and tag == "$dict"):
            return {tag: sorted((walk(item) for item in body), key=codec.to_json)}
        return {tag: walk(body)}
    return codec.to_json(walk(encoded))


def parameter_names(target):
    """The names of ``target``'s positional parameters, as far as they can be told (``inspect``
    is imported only now: a changed argument is rare, and every start pays for an import)."""
    try:
        import inspect

        kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        return [p.name for p in inspect.signature(target).parameters.values() if p.kind in kinds]
    except BaseException:  # a student's signature may be anything, or raise
        return []


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


def with_site_packages(folders):
    """What ``site`` gives every Python, less its ``.pth`` files: the worker starts with ``-S``,
    since running them (an editable install's finder, setuptools' hook) was most of its
    start. Student code still imports installed packages and finds ``exit``, ``quit`` and ``help``."""
    import site

    sys.path.extend(folder for folder in folders if folder not in sys.path)
    site.setquit()
    site.setcopyright()
    site.sethelper()


def start():
    """What every worker does first, before any student code can run: take the grader's pipes, die
    with the grader, lower its limits and confine itself, then say so in its first frame (its
    hello). Returns ``(config, inbox, outbox)``, or None when it could not confine itself."""
    config = codec.from_json(sys.argv[1])
    inbox, outbox = take_protocol_pipes()
    die_with_parent()
    apply_limits(config["limits"])
    try:
        confine(config)
    except OSError as error:
        write_frame(outbox, codec.to_json({"broken": str(error)}).encode())
        return None
    write_frame(outbox, b'{"ready":true}')
    sys.path[:0] = config["path"]
    with_site_packages(config["site"])
    sys.dont_write_bytecode = True
    shell = NotebookShell()
    builtins.get_ipython = lambda: shell  # type: ignore[attr-defined]
    return config, inbox, outbox


def main():
    """A fresh worker: serve the grader's requests until it closes the pipe."""
    started = start()
    if started is not None:
        config, inbox, outbox = started
        serve(inbox, outbox, Handles(), tuple(config["path"]))

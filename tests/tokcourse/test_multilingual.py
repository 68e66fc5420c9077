"""The multilingual benchmark over the real tokenizers, on the course set and Django's.

Needs the fetched files (``make setup``); without them the tests are skipped with the command to run.
"""

from __future__ import annotations

import time

import pytest

from solutions.ex4_multilingual import benchmark
from tests.conftest import ROOT
from tokcourse import assets
from tokcourse.tools import multilingual, registry

pytestmark = [pytest.mark.data, pytest.mark.slow]


@pytest.fixture(scope="module")
def django(fetched) -> dict[str, list[str]]:
    return multilingual.django_set(ROOT)


class Fixed:
    """A stand-in tokenizer: one token per ``size`` characters (at least one)."""

    unk_id = None

    def __init__(self, vocab_size: int, size: int):
        self.vocab_size, self.size = vocab_size, size

    def encode(self, text: str) -> list[int]:
        return [0] * max(1, len(text) // self.size)


# -- the Django set ---------------------------------------------------------------------


def test_placeholders_are_removed_and_spaces_normalised():
    assert (multilingual.without_placeholders("%(model_name)s with this %(field_label)s already exists.")
            == "with this already exists.")
    assert multilingual.without_placeholders("%s GB") == "GB"
    assert multilingual.without_placeholders("%(num)d  items, %(size)s") == "items,"


def test_django_set_holds_the_messages_translated_into_every_language(django):
    assert list(django) == ["en", "es", "zh", "ko", "ar", "fa", "hi", "ja", "ru"]
    sizes = {len(sentences) for sentences in django.values()}
    assert len(sizes) == 1 and sizes.pop() >= 200
    assert all(sentence and "%(" not in sentence and "%s" not in sentence
               for lang in django.values() for sentence in lang)
    i = django["en"].index("Enter a valid email address.")
    assert django["es"][i] == "Introduzca una dirección de correo electrónico válida."
    assert django["ja"][i] == "有効なメールアドレスを入力してください。"
    assert django["ru"][i] == "Введите правильный адрес электронной почты."


def test_a_missing_catalogue_names_the_fetch_command(tmp_path):
    with pytest.raises(assets.AssetError, match=r"django-es: missing .*run `python -m tokcourse.assets fetch`"):
        multilingual.django_set(tmp_path)


# -- the tables, on stand-ins -----------------------------------------------------------


def test_tables_pivot_the_premium_and_price_the_vocabulary():
    parallel = {"en": ["abcd", "abcd"], "xx": ["abcdefgh", "abcdefgh"]}
    tokenizers = {"small": Fixed(1_000, 1), "big": Fixed(250_000, 4)}
    rows = multilingual.measure(tokenizers, parallel)
    premium = multilingual.premium_table(rows, parallel, ["small", "big"]).splitlines()
    assert premium[:1] + premium[2:] == ["| language | small | big |", "| en | 1.00 | 1.00 |", "| xx | 2.00 | 2.00 |"]
    tradeoff = multilingual.tradeoff_table(tokenizers, {"toy": parallel}, {"toy": rows}).splitlines()
    assert tradeoff[0] == ("| tokenizer | vocabulary | embedding parameters at d_model 4,096 "
                           "| toy: tokens/sentence, en | toy: tokens/sentence, others |")
    assert tradeoff[2] == "| small | 1,000 | 4.1 M | 4.0 | 8.0 |"
    assert tradeoff[3] == "| big | 250,000 | 1,024.0 M | 1.0 | 2.0 |"


# -- the real benchmark -----------------------------------------------------------------


def test_the_command_writes_the_tables_and_the_chart_quickly(fetched, tmp_path):
    started = time.perf_counter()
    assert multilingual.main(["--out", str(tmp_path)]) == 0
    assert time.perf_counter() - started < 60
    report = (tmp_path / "benchmark.md").read_text(encoding="utf-8")
    header = "| language | " + " | ".join(registry.names()) + " |"
    assert report.count(header) == 2
    assert "## course set: 18 sentences in 6 languages" in report and "## django set: " in report
    assert report.count("| en | " + " | ".join(["1.00"] * 7) + " |") == 2
    assert "| llama3 | 128,256 | 525.3 M |" in report and "| o200k_base | 200,019 | 819.3 M |" in report
    assert "bert-base-uncased" in report.split(multilingual.UNKNOWN_NOTE)[1]
    assert (tmp_path / "premium.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_llama3_compresses_every_other_language_better_than_gpt2(fetched, django):
    """The lesson's claim, on both sets: Llama 3's 128K vocabulary against GPT-2's 50K."""
    tokenizers = registry.load_all(["gpt2", "llama3"])
    for parallel in (multilingual.course_set(), django):
        premium = multilingual.premiums(multilingual.measure(tokenizers, parallel))
        for lang in multilingual.languages(parallel)[1:]:
            assert premium[lang, "llama3"] < premium[lang, "gpt2"], lang
        assert premium["ko", "gpt2"] > 3


def test_the_measurement_is_exercise_4s_reference_benchmark(fetched):
    tokenizers = registry.load_all(["cl100k_base"])
    parallel = multilingual.course_set()
    expected = benchmark({"cl100k_base": tokenizers["cl100k_base"].encode}, parallel)
    assert multilingual.measure(tokenizers, parallel) == expected

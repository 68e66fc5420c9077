"""Hypothesis strategies shared by the course's property suites (``suites/*.py``).

Every strategy draws *small* inputs that exercise the course's rules: overlapping runs
(``aaaa``), ties between equally frequent pairs, several scripts whose characters take 2-4
UTF-8 bytes (CJK, Arabic, Persian with a zero-width non-joiner, emoji with modifiers and
joiners), whitespace runs, control characters and special-token strings, whole and broken.
Sizes stay small (texts well under 200 characters, merge counts under 30) so that a property
is cheap even when a student's implementation recounts every pair before every merge.
"""

from __future__ import annotations

from hypothesis import strategies as st

SPECIAL_STRINGS = ("<pad>", "<eos>", "<unk>")

# Scripts whose characters take several UTF-8 bytes.
WORLD = (
    "漢字仮名交じり文ひらがなカタカナ한국어"  # CJK
    "العربية"  # Arabic
    "فارسی گچپژ ی\u200cها"  # Persian, with a zero-width non-joiner
    "😀👍🏽👨\u200d👩\u200d👧🇮🇷"  # emoji: skin tone, ZWJ family, flag
)

# Pieces that make overlapping runs, ties, several scripts, whitespace runs and special
# tokens likely when joined at random.
FRAGMENTS = (
    "a", "b", "aa", "aaa", "aaaa", "ab", "abab", "ba", "the", " the", "then", " there",
    "hug", " pug", "low", " lower", "est", " ", "  ", "   ", "\n", "\n\n", "\t", " \n ",
    "é", "中文", "日本語", "한국어", "سلام", " دنیا", "فارسی", "ی\u200cها", "😀", "👍🏽",
    "👨\u200d👩\u200d👧", "!", ",", ".", "x", "<pad>", "<eos>", "<unk>", "<eos", "pad>", "<",
)

# Tiny alphabets: every pair is frequent, so ties and overlaps are everywhere.
TINY = ("ab", "abc", "ab ", "ab \n", "aé", "a中")


def fragment_texts(max_fragments: int = 25, fragments=FRAGMENTS) -> st.SearchStrategy[str]:
    """Texts glued from ``fragments``."""
    return st.lists(st.sampled_from(fragments), max_size=max_fragments).map("".join)


def tiny_texts(max_size: int = 40) -> st.SearchStrategy[str]:
    """Texts over a two- or three-letter alphabet: ties and overlapping runs."""
    return st.sampled_from(TINY).flatmap(lambda alphabet: st.text(alphabet, max_size=max_size))


def runs(max_run: int = 9, max_runs: int = 4) -> st.SearchStrategy[str]:
    """Runs of one repeated character (``aaaa``, ``aaab bbb``): overlapping pairs."""
    run = st.builds(lambda ch, n: ch * n, st.sampled_from("ab é中"), st.integers(1, max_run))
    return st.lists(run, min_size=1, max_size=max_runs).map("".join)


def world_texts(max_size: int = 30) -> st.SearchStrategy[str]:
    """Any Unicode, weighted towards multi-byte scripts and emoji."""
    return st.text(alphabet=st.one_of(st.characters(codec="utf-8"), st.sampled_from(WORLD)), max_size=max_size)


def texts(max_size: int = 60) -> st.SearchStrategy[str]:
    """The general text strategy of the course: fragments, tiny alphabets, runs, any script."""
    return st.one_of(
        fragment_texts(max_fragments=max_size // 3),
        tiny_texts(max_size),
        runs(),
        world_texts(max_size // 2),
    )


def nonempty_texts(max_size: int = 60) -> st.SearchStrategy[str]:
    return texts(max_size).filter(bool)


def tie_texts() -> st.SearchStrategy[str]:
    """Texts in which several pairs share the highest count: distinct characters in a shuffled
    order, repeated, so the first occurrence decides; mixed with tiny-alphabet texts."""
    distinct = st.lists(st.sampled_from("abcdefgh中é"), min_size=2, max_size=6, unique=True)
    repeated = st.builds(lambda chars, n, sep: sep.join(["".join(chars)] * n), distinct,
                         st.integers(1, 4), st.sampled_from(["", " ", "x"]))
    shuffled = st.builds(lambda a, b: a + b, distinct.map("".join), distinct.map("".join))
    return st.one_of(repeated, shuffled, tiny_texts(30))


def overlap_tie_texts() -> st.SearchStrategy[str]:
    """A run (``aaa``: its pair counts twice but merges once) tied with a repeated distinct pair
    (``bcbc``: counts twice and merges twice), in either order: which pair wins the tie shows
    in the length of the sequence, not only in the merged pair."""
    run = st.builds(lambda ch, n: ch * n, st.sampled_from("a中"), st.integers(3, 5))
    pairs = st.builds(lambda p, n: p * n, st.sampled_from(["bc", "xy", "é!"]), st.integers(2, 3))
    return st.builds(lambda r, p, flip, sep: sep.join([p, r] if flip else [r, p]), run, pairs, st.booleans(),
                     st.sampled_from(["", " ", "-"]))


def merges(max_merges: int = 30) -> st.SearchStrategy[int]:
    return st.integers(0, max_merges)


def id_lists(max_size: int = 30) -> st.SearchStrategy[list[int]]:
    """Lists of ids, mostly from a tiny range (overlaps, ties), sometimes any byte or merge id."""
    return st.one_of(
        st.lists(st.integers(0, 3), max_size=max_size),
        st.lists(st.sampled_from([5, 5, 5, 7]), max_size=max_size),
        st.lists(st.integers(0, 300), max_size=max_size),
    )


# --- exercise 1: word-count tables ------------------------------------------------------

def word_counts(max_words: int = 6) -> st.SearchStrategy[dict[str, int]]:
    """Word-frequency tables over a tiny alphabet (shared pairs across words, ties)."""
    word = st.one_of(st.text("abc", min_size=1, max_size=6), st.sampled_from(
        ["low", "lower", "lowest", "newest", "widest", "hug", "pug", "aaaa", "中文", "é"]))
    return st.dictionaries(word, st.integers(1, 6), max_size=max_words)


# --- exercise 2: pre-tokenization and special tokens ------------------------------------

def whitespace_texts(max_fragments: int = 20) -> st.SearchStrategy[str]:
    """Texts with many words, spaces and whitespace runs: pre-token boundaries matter."""
    pieces = ("ab", " ab", "ab ", "a", " a", "b", " ", "  ", "\n", " \n", "\t ", "ba", " ba", "aab")
    return fragment_texts(max_fragments, pieces)


def special_texts(max_fragments: int = 20) -> st.SearchStrategy[str]:
    """Texts full of special-token strings, whole and broken, between short words."""
    pieces = ("<pad>", "<eos>", "<unk>", "<eos", "eos>", "<", ">", "ab", " ab", "a", "s>",
              "<e", " ", "x<", ">x", "eos")
    return fragment_texts(max_fragments, pieces)


def allowed_special() -> st.SearchStrategy:
    """``"all"``, ``"none"``, or a set / list / tuple of special-token strings."""
    subset = st.lists(st.sampled_from(SPECIAL_STRINGS), unique=True, max_size=3)
    return st.one_of(st.sampled_from(["all", "none"]), subset.map(set), subset, subset.map(tuple))


def batches() -> st.SearchStrategy[list[list[int]]]:
    return st.lists(st.lists(st.integers(0, 400), max_size=6), max_size=5)


# --- exercise 3: WordPiece ---------------------------------------------------------------

def word_texts(max_words: int = 12) -> st.SearchStrategy[str]:
    """Texts of short words over a small alphabet, with punctuation and one-letter words."""
    word = st.one_of(st.text("abcd", min_size=1, max_size=6), st.sampled_from(
        ["hug", "hugs", "pug", "pun", "bun", "a", "b", "!", ",", "中文", "é", "x1", "_"]))
    separator = st.sampled_from([" ", "  ", "\n", ", ", "! "])
    return st.lists(st.tuples(word, separator), max_size=max_words).map(
        lambda parts: "".join(w + s for w, s in parts))


def wordpiece_tie_texts() -> st.SearchStrategy[str]:
    """Texts whose pairs often share both the WordPiece score and the count."""
    word = st.text("abc", min_size=1, max_size=4)
    return st.lists(word, min_size=1, max_size=8).map(" ".join)


def single_unit_word_texts() -> st.SearchStrategy[str]:
    """Texts where one-character words make up much of each unit's count."""
    word = st.one_of(st.sampled_from(["a", "b", "c", "!", "."]), st.text("abc", min_size=2, max_size=4))
    return st.lists(word, min_size=1, max_size=12).map(" ".join)


def wordpiece_vocab() -> st.SearchStrategy[list[str]]:
    """A vocabulary of word-initial pieces and ``##`` continuations over ``abc``."""
    piece = st.text("abc", min_size=1, max_size=3)
    token = st.one_of(piece, piece.map(lambda p: "##" + p))
    return st.lists(token, max_size=12, unique=True)


def vocab_lists(unique: bool = False) -> st.SearchStrategy[list[str]]:
    """Token lists for ``compare_vocabularies`` (``##`` tokens, multi-byte characters)."""
    token = st.one_of(st.text("ab中", min_size=1, max_size=3),
                      st.text("ab中", min_size=1, max_size=3).map(lambda p: "##" + p))
    return st.lists(token, max_size=8, unique=unique)


# --- exercise 4: parallel text -----------------------------------------------------------

LANGUAGES = ("en", "es", "zh", "ko", "ar", "fa")

SENTENCE_PIECES = {
    "en": ("the cat", "a dog", " sat", " on the mat", ".", "hello", " world", "!"),
    "es": ("el gato", "un perro", " está", " sobre la alfombra", ".", "¡hola", " mundo", "!"),
    "zh": ("猫", "狗", "坐在", "垫子上", "。", "你好", "世界", "！"),
    "ko": ("고양이", " 개", "가", " 앉았다", ".", "안녕", " 세상", "!"),
    "ar": ("القط", " كلب", " جلس", " على الحصيرة", ".", "مرحبا", " بالعالم", "!"),
    "fa": ("گربه", " سگ", " روی", " فرش نشست", ".", "سلام", " دنیا", "ی\u200cها"),
}


def sentences(language: str, min_size: int = 1) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(SENTENCE_PIECES[language]), min_size=min_size, max_size=5).map("".join)


@st.composite
def parallel(draw, min_languages: int = 1, baseline: str = "en") -> dict[str, list[str]]:
    """Aligned sentences per language: the same number of non-empty sentences everywhere,
    the baseline always present (not necessarily first)."""
    others = draw(st.lists(st.sampled_from([lang for lang in LANGUAGES if lang != baseline]), unique=True,
                           min_size=max(0, min_languages - 1), max_size=4))
    languages = others[:]
    languages.insert(draw(st.integers(0, len(others))), baseline)
    n = draw(st.integers(1, 4))
    return {lang: draw(st.lists(sentences(lang), min_size=n, max_size=n)) for lang in languages}


def text_lists() -> st.SearchStrategy[list[str]]:
    """Lists of texts with at least one character in total (some texts may be empty)."""
    text = st.one_of(st.sampled_from(["", " ", "héllo", "中文", "a b  c"]), world_texts(20))
    return st.lists(text, min_size=1, max_size=5).filter(lambda ts: any(ts))


# --- exercise 5: compression -------------------------------------------------------------

def tolerances() -> st.SearchStrategy[float]:
    """Tolerances strictly between 0 and 1, often ones that make thresholds exact floats."""
    return st.one_of(st.sampled_from([0.25, 0.5, 0.125, 0.75, 0.1, 0.05]),
                     st.floats(0.01, 0.99, allow_nan=False, allow_infinity=False))

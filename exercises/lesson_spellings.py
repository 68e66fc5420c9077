"""Step 5 of the lesson: one Persian word, several byte sequences.

A reader takes the spellings for one word; a tokenizer sees other bytes and counts other
tokens. Exercise 4 compares languages by their token counts.
"""

from .lesson_bpe import BPETokenizer  # noqa: F401 - the examples train one

# Two Persian letters have Arabic twins that most fonts draw alike: Persian yeh and kaf
# (U+06CC, U+06A9) and Arabic yeh and kaf (U+064A, U+0643). Text typed on an Arabic
# keyboard, or passed through older software, holds the twins. And Persian writes a
# zero-width non-joiner (ZWNJ, U+200C) between a stem and its suffix, which many writers
# leave out or type as a space. Each spelling is another byte sequence.

ZWNJ = "\u200c"  # zero-width non-joiner: keeps two letters apart without a space
ARABIC_TWINS = str.maketrans({"\u06cc": "\u064a", "\u06a9": "\u0643"})  # Persian yeh, kaf -> Arabic yeh, kaf


def spellings(word):
    r"""Three spellings of a Persian ``word`` that a reader takes for one: as written, without
    its zero-width non-joiners, and with Arabic yeh and kaf in place of the Persian letters.

    >>> word = "کتاب_های".replace("_", ZWNJ)  # ketab-haye, "the books of": stem, ZWNJ, suffix
    >>> for name, spelled in spellings(word).items():
    ...     print(f"{name:15} {len(spelled)} characters, {len(spelled.encode('utf-8'))} bytes")
    persian         8 characters, 17 bytes
    no_zwnj         7 characters, 14 bytes
    arabic_letters  8 characters, 17 bytes

    The ZWNJ is three bytes of UTF-8, and a letter and its twin are two bytes each, not
    the same two:

    >>> ZWNJ.encode("utf-8"), "\u06a9".encode("utf-8"), "\u0643".encode("utf-8")  # ZWNJ, Persian kaf, Arabic kaf
    (b'\xe2\x80\x8c', b'\xda\xa9', b'\xd9\x83')

    A tokenizer trained on Persian as Persian writers write it learns merges for the first
    spelling; the others share few of its byte pairs, so they cost more tokens:

    >>> text = "کتاب_های من روی میز است. کتاب_های تو کجاست؟ این کتاب_ها را کی خواندی؟".replace("_", ZWNJ)
    >>> tok = BPETokenizer().train(text, 20)
    >>> {name: len(tok.encode(spelled)) for name, spelled in spellings(word).items()}
    {'persian': 3, 'no_zwnj': 6, 'arabic_letters': 5}

    Trained tokenizers differ in the same way: tiktoken's ``cl100k_base`` gives the three
    spellings 6, 5 and 7 tokens, so there the ZWNJ that correct Persian needs costs a token.
    To compare languages fairly, measure text as its writers spell it, or normalize it first.
    """
    return {"persian": word, "no_zwnj": word.replace(ZWNJ, ""), "arabic_letters": word.translate(ARABIC_TWINS)}

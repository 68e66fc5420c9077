"""Exercise 2: special tokens and pre-tokenization. Properties of pretokenize and
SpecialTokenizer, graded against the docstrings' rules."""

import functools
import re

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from autograder.signatures import graded_functions
from autograder.suite import expect, expect_bad_input_rules, expect_equal, expect_error, say, show, together
from tokcourse.grading import strategies as S

points = pytest.mark.points
hidden = pytest.mark.hidden
docstring_examples = pytest.mark.examples  # the stub's >>> examples a property checks (autograder.engine.examples)

PATTERN = r" ?\S+|\s+(?!\S)|\s+"
SPECIALS = {"<pad>": 0, "<eos>": 1, "<unk>": 2}

train_texts = st.one_of(S.texts(), S.whitespace_texts(), S.special_texts())


def _trained(student, reference, text, num_merges):
    """The student's and the reference's tokenizers, trained on the same text."""
    mine = student.SpecialTokenizer()
    mine.train(text, num_merges)
    return mine, reference.SpecialTokenizer().train(text, num_merges)


def _trained_alike(student, reference, text, num_merges):
    """Both tokenizers trained on ``text``, how to name that, and their vocabulary size (checked equal)."""
    mine, ref = _trained(student, reference, text, num_merges)
    what = f"SpecialTokenizer().train({text!r}, {num_merges})"
    return mine, ref, what, _check_vocab_size(mine, ref, what)


def _learned(tok, size):
    """The text of every merged token (ids 259 .. size - 1)."""
    return together([lambda i=i: tok.id_to_token(i) for i in range(259, size)])


def _learned_strings(tok, size, what):
    """``_learned``, with every token checked to be a str."""
    learned = _learned(tok, size)
    for i, token in zip(range(259, size), learned, strict=True):
        expect(type(token) is str, say("after {what}, {call} should be a str, got {got}", what=what,
                                       call=f"id_to_token({i})", got=show(token)))
    return learned


def _learns_a_merge(text, num_merges):
    """Whether training on ``text`` must learn a merge: one is asked for and some pre-token of
    the text between special-token strings has two bytes."""
    between = re.split("|".join(re.escape(special) for special in SPECIALS), text)
    return num_merges > 0 and any(len(piece.encode("utf-8")) > 1
                                  for part in between for piece in re.findall(PATTERN, part))


def _own_trained(student, text, num_merges):
    """The student's tokenizer trained on ``text``, how to say so, and its vocabulary size (an int of at
    least 259): for a property that judges a rule on the student's own model, whatever it learned."""
    tok = student.SpecialTokenizer()
    tok.train(text, num_merges)
    after = say("after {what}", what=f"train({text!r}, {num_merges})")
    size = tok.vocab_size
    expect(type(size) is int and size >= 259,
           say("{call} {after} should be 259 + the merges learned, got {got}", call="vocab_size", after=after,
               got=show(size)))
    return tok, after, size


def _check_vocab_size(mine, ref, what):
    size = mine.vocab_size
    expect_equal(size, ref.vocab_size, f"{what}.vocab_size")
    return size


# --------------------------------------------------------------------------- pretokenize


@points(2)
@docstring_examples("pretokenize('Hi  there,\\n  you!')")
@given(text=st.one_of(S.texts(), S.whitespace_texts()))
@example(text="Hi  there,\n  you!")
@example(text="")
@example(text="  \n\t a  b\n")
def test_pretokenize_matches_pattern_and_joins_back(student, text):
    """pretokenize is re.findall(PRETOKEN_PATTERN, text), and its pieces join back to the text."""
    pieces = student.pretokenize(text)
    expect_equal(pieces, re.findall(PATTERN, text), f"pretokenize({text!r})")
    expect_equal("".join(pieces), text, f"''.join(pretokenize({text!r}))")


# --------------------------------------------------------------------------- ids


@points(2)
@given(text=S.texts())
@example(text="a<eos>")
def test_untrained_ids_specials_0_2_and_bytes_offset_by_3(student, text):
    """Untrained: vocab_size is 259, specials are ids 0-2 and byte b has id b + 3."""
    tok = student.SpecialTokenizer()
    together([
        lambda: expect_equal(tok.vocab_size, 259, "SpecialTokenizer().vocab_size"),
        lambda: expect_equal(tok.encode(text, "none"), [b + 3 for b in text.encode("utf-8")],
                             f"SpecialTokenizer().encode({text!r}, 'none')"),
        *(check for special, i in SPECIALS.items() for check in (
            lambda special=special, i=i: expect_equal(tok.token_to_id(special), i, f"token_to_id({special!r})"),
            lambda special=special, i=i: expect_equal(tok.id_to_token(i), special, f"id_to_token({i})"))),
        lambda: expect_equal(tok.id_to_token(100), "a", "SpecialTokenizer().id_to_token(100)"),
        lambda: expect_equal(tok.token_to_id("a"), 100, "SpecialTokenizer().token_to_id('a')"),
    ])


@points(1)
@docstring_examples("tok.vocab_size", "[tok.id_to_token(i) for i in (259, 260, 261)]", "tok.encode('lowest<eos>')",
                    "tok.encode('lowest<eos>', allowed_special='none')", "tok.encode('low', add_eos=True)",
                    "tok.decode([260, 104, 118, 119, 1])")
@given(letters=st.lists(st.sampled_from("abcdfghijkmnpquvxyz"), min_size=7, max_size=7, unique=True),
       repeat=st.integers(1, 3))
@example(letters=list("lowerst"), repeat=1)
def test_worked_example_low_lower_lowest(student, letters, repeat):
    ("""The docstring's example: train('low lower lowest<eos>', 3) learns 'lo', 'low', ' low' as ids 259-261 (and so """
     """with other letters).""")
    rename = str.maketrans("lowerst", "".join(letters))  # other letters, every count times `repeat`: the same merges
    word, lowest = "low".translate(rename), "lowest".translate(rename)
    e, s, t = (ord(ch) + 3 for ch in "est".translate(rename))
    train = ("low lower lowest".translate(rename) + "<eos>") * repeat
    tok = student.SpecialTokenizer()
    tok.train(train, 3)
    what = f"SpecialTokenizer().train({train!r}, 3)"
    together([
        lambda: expect_equal(tok.vocab_size, 262, f"{what}.vocab_size"),
        lambda: expect_equal(together([lambda i=i: tok.id_to_token(i) for i in (259, 260, 261)]),
                             [word[:2], word, " " + word],
                             say("{call} after {what}", call="[id_to_token(i) for i in (259, 260, 261)]", what=what)),
        lambda: expect_equal(tok.encode(lowest + "<eos>"), [260, e, s, t, 1],
                             say("{call} after {what}", call=f"encode({lowest + '<eos>'!r})", what=what)),
        lambda: expect_equal(tok.encode(lowest + "<eos>", allowed_special="none"),
                             [260, e, s, t, 63, 104, 114, 118, 65],
                             say("{call} after {what}", call=f"encode({lowest + '<eos>'!r}, allowed_special='none')",
                                 what=what)),
        lambda: expect_equal(tok.encode(word, add_eos=True), [260, 1],
                             say("{call} after {what}", call=f"encode({word!r}, add_eos=True)", what=what)),
        lambda: expect_equal(tok.decode([260, e, s, t, 1]), lowest + "<eos>",
                             say("{call} after {what}", call=f"decode([260, {e}, {s}, {t}, 1])", what=what)),
    ])


# --------------------------------------------------------------------------- training


@points(3)
@given(text=train_texts, num_merges=S.merges())
@example(text="the the the cat", num_merges=5)
@example(text="ab ab ab ba ba ba ba", num_merges=3)
def test_training_learns_reference_merges_weighted_by_pretoken_frequency(student, reference, text, num_merges):
    """train learns the reference's merges: pairs counted per distinct pre-token, weighted by how often it occurs."""
    mine, ref, what, size = _trained_alike(student, reference, text, num_merges)
    expect_equal(_learned(mine, size), _learned(ref, size),
                 say("the learned tokens (ids 259..{last}) after {what}", last=size - 1, what=what))
    expect_equal(mine.encode(text), ref.encode(text), say("{call} after {what}", call=f"encode({text!r})", what=what))


@hidden
@points(2)
@given(text=S.whitespace_texts(), num_merges=S.merges())
@example(text="a a a a", num_merges=3)
@example(text="ab\n\nab  ab", num_merges=6)
def test_merges_never_cross_pretoken_boundaries(student, text, num_merges):
    """No learned token spans two pre-tokens (merges happen inside pre-tokens only)."""
    tok, after, size = _own_trained(student, text, num_merges)
    expect(size > 259 or not _learns_a_merge(text, num_merges),
           say("{call} {after} is {size}: no merge was learned", call="vocab_size", after=after, size=size))
    what = f"SpecialTokenizer().train({text!r}, {num_merges})"
    for i, token in zip(range(259, size), _learned_strings(tok, size, what), strict=True):
        if "\ufffd" not in token:
            expect(len(re.findall(PATTERN, token)) == 1,
                   say("after {what}, token {id} is {token!r}, which spans several pre-tokens {pieces!r}",
                       what=what, id=i, token=token, pieces=re.findall(PATTERN, token)))


@hidden
@points(2)
@given(text=S.special_texts(), num_merges=S.merges())
@example(text="ab<eos>ab<eos>ab<pad>", num_merges=10)
@example(text="<eos><eos><eos>", num_merges=3)
def test_special_token_strings_are_cut_out_of_training(student, reference, text, num_merges):
    """Special-token strings in the training text are cut out: never merged, and boundaries for pairs."""
    mine, ref, what, size = _trained_alike(student, reference, text, num_merges)
    learned = _learned_strings(mine, size, what)
    for i, token in zip(range(259, size), learned, strict=True):
        expect(not any(s in token for s in SPECIALS),
               say("after {what}, token {id} is {token!r}: it holds a special token", what=what, id=i, token=token))
    expect_equal(learned, _learned(ref, size),
                 say("the learned tokens (ids 259..{last}) after {what}", last=size - 1, what=what))


@points(1)
@given(text=S.texts(), first=S.merges(), num_merges=S.merges(10))
@example(text="abababab", first=3, num_merges=1)
def test_merge_ids_259_plus_k_and_vocab_size(student, reference, text, first, num_merges):
    """Merge k gets id 259 + k, vocab_size is 259 + merges learned, and training again starts from scratch."""
    tok = student.SpecialTokenizer()
    tok.train(text, first)
    tok.train(text, num_merges)
    ref = reference.SpecialTokenizer().train(text, num_merges)
    what = say("{first} then {second}", first=f"train({text!r}, {first})", second=f"train({text!r}, {num_merges})")
    size = _check_vocab_size(tok, ref, what)
    expect_equal(size, 259 + len(ref.merges), f"{what}: vocab_size")
    expect_equal(tok.encode(text), ref.encode(text), say("{call} after {what}", call=f"encode({text!r})", what=what))


# --------------------------------------------------------------------------- encode


@points(2)
@given(train=train_texts, num_merges=S.merges(), data=st.data())
@example(train="the then there", num_merges=6, data=None)
@example(train="aaaa aaa", num_merges=4, data=None)
@example(train="bc bc bc ab ab", num_merges=5, data=None)
def test_encode_applies_learned_merges_in_rank_order(student, reference, train, num_merges, data):
    """encode pre-tokenizes and applies the learned merges in rank order (first learned, first applied)."""
    mine, ref = _trained(student, reference, train, num_merges)
    texts = [" abc abcd bcab", "other theme", "aaaaaaa", train[::-1]]
    if data is not None:  # new text over the training text's characters: the learned pairs meet in new orders
        texts = [data.draw(st.text(alphabet=sorted(set(train)) or "a", max_size=40), label="text"),
                 data.draw(S.texts(), label="other")]
    for text in texts:
        expect_equal(mine.encode(text), ref.encode(text),
                     say("{call} after {what}", call=f"encode({text!r})", what=f"train({train!r}, {num_merges})"))


def _cut(text: str, allowed: set[str]) -> list[str]:
    """``text`` as ordinary parts and the allowed special strings between them, longest first."""
    if not allowed:
        return [text]
    return re.split("(" + "|".join(map(re.escape, sorted(allowed, key=lambda x: (-len(x), x)))) + ")", text)


def _allowed_set(allowed) -> set[str]:
    return set(SPECIALS) if allowed == "all" else set() if allowed == "none" else set(allowed)


@points(2)
@given(train=S.special_texts(), text=S.special_texts(), num_merges=S.merges(15), allowed=S.allowed_special())
@example(train="ab<eos>", text="<eos>ab<pad><unk>", num_merges=2, allowed={"<pad>"})
@example(train="ab<eos>", text="ab<eos>", num_merges=2, allowed="none")
@example(train="ab<eos>", text="<eos>ab<pad><unk>", num_merges=2, allowed=frozenset({"<pad>", "<unk>"}))
def test_allowed_special_all_none_or_subset(student, train, text, num_merges, allowed):
    ("""allowed_special 'all', 'none' or a collection decides which special strings become ids; the others, and """
     """the text between them, are encoded as ordinary text (as with 'none'); another str, or a str member that is """
     """not a special token, is a ValueError.""")
    untrained = student.SpecialTokenizer()
    parts = _cut(text, _allowed_set(allowed))
    expected = [b + 3 if i % 2 == 0 else SPECIALS[part] for i, part in enumerate(parts)
                for b in (part.encode("utf-8") if i % 2 == 0 else b"_")]
    expect_equal(untrained.encode(text, allowed), expected, f"SpecialTokenizer().encode({text!r}, {allowed!r})")
    tok = student.SpecialTokenizer()
    tok.train(train, num_merges)
    after = say("after {what}", what=f"train({train!r}, {num_merges})")
    ordinary = [tok.encode(part, "none") if i % 2 == 0 else [SPECIALS[part]] for i, part in enumerate(parts)]
    expect_equal(tok.encode(text, allowed_special=allowed), [i for ids in ordinary for i in ids],
                 say("{call} {after}, against {part} for the parts between the allowed special strings {parts!r}",
                     call=f"encode({text!r}, allowed_special={allowed!r})", after=after, part="encode(part, 'none')",
                     parts=parts))
    bad = [{"<bos>"}, "some", "", "a", "alm", "ALL", "all ", "nonf", "zz"]  # before, between and after "all", "none"
    together([functools.partial(expect_error, lambda word=word: tok.encode(text, word), ("ValueError",),
                                f"encode(text, allowed_special={word!r})", naming=("allowed_special",))
              for word in bad])


@hidden
@points(1)
@given(train=train_texts, text=S.special_texts(), num_merges=S.merges(15), allowed=S.allowed_special())
@example(train="ab ab ab", text="ab<eos>ab", num_merges=2, allowed="all")
@example(train="ab ab ab", text="ab<eos>ab", num_merges=2, allowed="none")
def test_add_eos_appends_eos_id(student, train, text, num_merges, allowed):
    """encode(..., add_eos=True) appends <eos> (id 1) at the end, whatever allowed_special is."""
    tok = student.SpecialTokenizer()
    tok.train(train, num_merges)
    what = say("{call} after {what}", call=f"encode({text!r}, {allowed!r}, add_eos=True)",
               what=f"train({train!r}, {num_merges})")
    plain = tok.encode(text, allowed)
    expect_equal(tok.encode(text, allowed, add_eos=True), plain + [1] if isinstance(plain, list) else [1], what)
    expect_equal(tok.encode("", add_eos=True), [1], "encode('', add_eos=True)")


# --------------------------------------------------------------------------- decode


@points(2)
@given(train=train_texts, text=st.one_of(S.texts(), S.special_texts()), num_merges=S.merges(),
       allowed=S.allowed_special())
@example(train="中文中文中文", text="中文 文中", num_merges=4, allowed="all")
@example(train="ab ab", text="<pad> ab", num_merges=1, allowed="all")
def test_decode_encode_round_trips(student, train, text, num_merges, allowed):
    """decode(encode(text)) == text for every text, whatever was learned and whichever specials are allowed."""
    tok, after, size = _own_trained(student, train, num_merges)
    expect(size > 259 or not _learns_a_merge(train, num_merges),
           say("{call} {after} is {size}: no merge was learned", call="vocab_size", after=after, size=size))
    ids = tok.encode(text, allowed)
    expect(isinstance(ids, list) and all(type(i) is int and 0 <= i < size for i in ids),
           say("{call} {after}: expected ids in {range}, got {got}", call=f"encode({text!r}, {allowed!r})",
               after=after, range=f"0 .. {size - 1}", got=show(ids)))
    if size > 259:  # merges were learned: encoding the training text uses them, so it takes fewer ids than bytes
        again = tok.encode(train)
        expect(isinstance(again, list) and len(again) < len(train.encode("utf-8")),
               say("{call} {after} should use the learned merges (fewer ids than bytes), got {got}",
                   call=f"encode({train!r})", after=after, got=show(again)))
    expect_equal(tok.decode(ids), text,
                 say("{call} {after}", call=f"decode(encode({text!r}, {allowed!r}))", after=after))


@hidden
@points(1)
@given(text=S.world_texts(12), start=st.integers(0, 40), stop=st.integers(0, 40))
@example(text="中", start=0, stop=1)
@example(text="é中😀", start=1, stop=6)
def test_invalid_utf8_decodes_to_replacement_char(student, text, start, stop):
    """decode joins the bytes of all ids and decodes once, partial UTF-8 becoming U+FFFD."""
    ids = [b + 3 for b in text.encode("utf-8")][start:stop]
    expected = bytes(i - 3 for i in ids).decode("utf-8", errors="replace")
    expect_equal(student.SpecialTokenizer().decode(ids), expected, f"SpecialTokenizer().decode({ids!r})")


@hidden
@points(1)
@given(text=S.texts(), num_merges=S.merges(10), extra=st.integers(0, 50), batch=S.batches())
def test_bad_ids_and_lengths_raise_value_error(student, text, num_merges, extra, batch):
    ("""decode and id_to_token raise ValueError for an id outside 0 .. vocab_size - 1, and pad_batch one naming """
     """length for a length shorter than a sequence.""")
    tok = student.SpecialTokenizer()
    tok.train(text, num_merges)
    size = tok.vocab_size
    expect(type(size) is int, say("{call} should be an int, got {got}", call="vocab_size", got=show(size)))
    checks = []
    for bad in (size + extra, -1 - extra):
        checks += [functools.partial(expect_error, lambda bad=bad: tok.decode([100, bad]), ("ValueError",),
                                     say("{call} with {size}", call=f"decode([100, {bad}])",
                                         size=f"vocab_size {size}")),
                   functools.partial(expect_error, lambda bad=bad: tok.id_to_token(bad), ("ValueError",),
                                     say("{call} with {size}", call=f"id_to_token({bad})", size=f"vocab_size {size}"))]
    longest = max((len(row) for row in batch), default=0)
    if longest > 0:
        checks.append(functools.partial(expect_error, lambda: tok.pad_batch(batch, longest - 1), ("ValueError",),
                                        f"pad_batch({batch!r}, {longest - 1})", naming=("length",)))
    together(checks)


# --------------------------------------------------------------------------- token_to_id


@hidden
@points(1)
@given(train=train_texts, num_merges=S.merges(), other=S.texts(8))
@example(train="ab ab", num_merges=1, other="")
def test_token_to_id_inverts_id_to_token(student, train, num_merges, other):
    ("""token_to_id gives a token's id (the smaller one if two spell the same bytes) and 2 (<unk>) for non-tokens, """
     """on the tokenizer's own vocabulary: token_to_id(id_to_token(i)) is i for every token i of valid UTF-8.""")
    tok, after, size = _own_trained(student, train, num_merges)
    ascii_ids = sorted({b + 3 for b in (train + other + "aé中 <eos").encode("utf-8") if b < 128})
    ids = [0, 1, 2, *ascii_ids, *range(256, size)]  # the specials, the bytes in play, every merge (and 253-255)

    def token_of(i: int) -> str:
        token = tok.id_to_token(i)
        expect(type(token) is str, say("{call} {after} should be a str, got {got}", call=f"id_to_token({i})",
                                       after=after, got=show(token)))
        return token

    first: dict[str, int] = {}  # each token's text, the smallest id that has it
    for i, token in zip(ids, together([functools.partial(token_of, i) for i in ids]), strict=True):
        first.setdefault(token, i)
    pieces = [piece for piece in [*first, "", other, "a", "é", "中", " ", "<eos", "ab\ufffd"]
              if "\ufffd" not in piece]  # a lone byte's text is U+FFFD: not its bytes
    together([lambda piece=piece: expect_equal(tok.token_to_id(piece), first.get(piece, 2),
                                               say("{call} {after}", call=f"token_to_id({piece!r})", after=after))
              for piece in pieces])


# --------------------------------------------------------------------------- pad_batch


@points(1)
@docstring_examples("tok.pad_batch([[260, 1], [7]])")
@given(batch=S.batches(), pad=st.one_of(st.none(), st.integers(0, 4)))
@example(batch=[[5, 6], [7]], pad=None)
@example(batch=[], pad=None)
def test_pad_batch_right_pads_with_attention_mask(student, reference, batch, pad):
    """pad_batch right-pads with <pad> (0) to the longest (or length) and returns the 1/0 attention mask."""
    tok = student.SpecialTokenizer()
    longest = max((len(row) for row in batch), default=0)
    if pad is None:
        expect_equal(tok.pad_batch(batch), reference.SpecialTokenizer().pad_batch(batch), f"pad_batch({batch!r})")
        return
    length = longest + pad
    expect_equal(tok.pad_batch(batch, length), reference.SpecialTokenizer().pad_batch(batch, length),
                 f"pad_batch({batch!r}, {length})")


# --------------------------------------------------------------------------- bad input


@points(1)
def test_bad_argument_types_raise_type_errors_by_the_shared_rules(student, course):
    ("""Every graded method, on every parameter, follows the type rules of exercises/__init__.py: True is not an """
     """int, 0 and 1 are not a bool (add_eos), a tuple is not a list, one item of the wrong type is a TypeError """
     """too (5 in allowed_special), each naming the argument; and a frozenset is a set.""")
    expect_bad_input_rules(student, graded_functions(course, "ex2_special_tokens"),
                           values={"allowed_special": {"<eos>"}})

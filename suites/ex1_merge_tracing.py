"""Exercise 1: merge tracing. Properties of get_pair_counts, merge_pair, trace_merges,
token_tree, render_trace and trace_word_merges, graded against the docstrings' rules."""

import re
from typing import NamedTuple

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from autograder.signatures import graded_functions
from autograder.suite import expect, expect_bad_input_rules, expect_equal, expect_error, say, show, together
from tokcourse.grading import strategies as S

points = pytest.mark.points
hidden = pytest.mark.hidden
docstring_examples = pytest.mark.examples  # the stub's >>> examples a property checks (autograder.engine.examples)


# what the docstring's trace_merges("the then there", 2) gives: its examples of token_tree and
# render_trace run on these, so that they test those functions alone
class MergeStep(NamedTuple):
    rank: int
    pair: tuple[int, int]
    new_id: int
    count: int
    token: bytes
    length: int


EXAMPLE_STEPS = [MergeStep(0, (116, 104), 256, 3, b"th", 11), MergeStep(1, (256, 101), 257, 3, b"the", 8)]


def _whole_number(n: int, line: str) -> bool:
    return re.search(rf"(?<!\d){n}(?!\d)", line) is not None


def _renderings(token: bytes) -> set[str]:
    """Acceptable ways to show a token: ``repr`` of its text (bytes decoded with
    ``errors="replace"``), or the same text quoted with non-printing characters escaped."""
    text = bytes(token).decode("utf-8", errors="replace")
    escaped = "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)
    return {repr(text), f"'{escaped}'", f'"{escaped}"'}


def _check_rendered(rendered, steps, what, numbers=True):
    """Each line of ``rendered`` shows its merge's parts and new token as escaped text, and (``numbers``)
    its count and length."""
    expect(type(rendered) is str, say("{what}: expected a str, got {got}", what=what, got=show(rendered)))
    if not steps:
        expect_equal(rendered, "", what)
        return
    lines = rendered.split("\n")
    expect(len(lines) == len(steps),
           say("{what}: expected one line per merge ({lines} lines), got {got}: {shown}", what=what,
               lines=len(steps), got=len(lines), shown=show(rendered)))
    vocab = {i: bytes([i]) for i in range(256)}
    for line, step in zip(lines, steps, strict=True):
        vocab[step.new_id] = step.token
        bad = [ch for ch in line if not ch.isprintable()]
        expect(not bad, say("{what}: the line of merge {rank} holds the raw character {char!r}; "
                            "control characters must be escaped: {line!r}", what=what, rank=step.rank,
                            char=bad[:1], line=line))
        for role, token in ((say("left part"), vocab[step.pair[0]]), (say("right part"), vocab[step.pair[1]]),
                            (say("new token"), step.token)):
            expect(any(s in line for s in _renderings(token)),
                   say("{what}: the line of merge {rank} should show the {role} as {token!r}: {line!r}",
                       what=what, rank=step.rank, role=role, token=token.decode('utf-8', errors='replace'),
                       line=line))
        expect(not numbers or _whole_number(step.count, line),
               say("{what}: the line of merge {rank} should show the count {count}: {line!r}", what=what,
                   rank=step.rank, count=step.count, line=line))
        expect(not numbers or _whole_number(step.length, line),
               say("{what}: the line of merge {rank} should show the length {length}: {line!r}", what=what,
                   rank=step.rank, length=step.length, line=line))


def _replayed(text: str, steps) -> list:
    """The text's bytes after the steps' merges, each applied left to right without overlap."""
    ids: list = list(text.encode("utf-8"))
    for step in steps:
        ids = _merged(ids, tuple(step[1]), step[2])
    return ids


def _merged(ids: list, pair: tuple, new_id) -> list:
    """``ids`` with ``pair`` replaced by ``new_id``, left to right without overlap."""
    merged, i = [], 0
    while i < len(ids):
        if tuple(ids[i:i + 2]) == pair:
            merged.append(new_id)
            i += 2
        else:
            merged.append(ids[i])
            i += 1
    return merged


def _is_step(step) -> bool:
    """A MergeStep-shaped value: six fields, the pair a tuple of two ints."""
    return (isinstance(step, tuple) and len(step) == 6 and isinstance(step[1], tuple) and len(step[1]) == 2
            and all(type(x) is int for x in (*step[1], step[0], step[2], step[3], step[5])))


# --------------------------------------------------------------------------- get_pair_counts


@points(1)
@given(ids=S.id_lists())
@example(ids=[5, 5, 5, 7])
@example(ids=[5, 5, 5, 5])
@example(ids=[3, 1, 2, 3, 1, 0])
@example(ids=[])
def test_pair_counts_overlapping_in_first_occurrence_order(student, reference, ids):
    """get_pair_counts counts every adjacent pair, overlapping ones included, keys in order of first occurrence."""
    got = student.get_pair_counts(ids)  # a Counter arrives as a plain dict
    expected = reference.get_pair_counts(ids)
    expect_equal(got, expected, f"get_pair_counts({ids!r})")
    expect_equal(list(got), list(expected), say("the keys of {call}, in order", call=f"get_pair_counts({ids!r})"))


# --------------------------------------------------------------------------- merge_pair


@points(1)
@given(ids=S.id_lists(), pair=st.tuples(st.integers(0, 3), st.integers(0, 3)))
@example(ids=[5, 5, 5], pair=(5, 5))
@example(ids=[1, 2, 3, 1, 2], pair=(1, 2))
@example(ids=[5, 5, 5, 5, 5], pair=(5, 5))
def test_merge_pair_replaces_left_to_right_without_overlap(student, reference, ids, pair):
    """merge_pair replaces the pair left to right, never reusing an id of the previous match."""
    expect_equal(student.merge_pair(ids, pair, 999), reference.merge_pair(ids, pair, 999),
                 f"merge_pair({ids!r}, {pair!r}, 999)")


@hidden
@points(1)
@given(ids=st.lists(st.integers(0, 3), max_size=30), pair=st.tuples(st.integers(0, 3), st.integers(0, 3)))
@example(ids=[0, 1, 2, 0, 1, 0], pair=(0, 1))
@example(ids=[3, 3, 3, 3, 3], pair=(3, 3))
def test_merge_pair_shortens_by_number_of_replacements(student, reference, ids, pair):
    """After merge_pair, the sequence is shorter by exactly the number of new ids in it, one per replaced pair."""
    what = f"merge_pair({ids!r}, {pair!r}, 256)"
    merged = student.merge_pair(ids, pair, 256)
    expect(type(merged) is list, say("{what}: expected a list, got {got}", what=what, got=show(merged)))
    replaced = merged.count(256)
    expect(len(merged) == len(ids) - replaced,
           say("{what} has {replaced} new ids, so its length should be {length}, got {got}", what=what,
               replaced=replaced, length=len(ids) - replaced, got=len(merged)))
    expect(pair not in zip(merged, merged[1:], strict=False) or pair[0] == pair[1],
           say("{what} still holds the pair {pair!r}: {merged!r}", what=what, pair=pair, merged=merged))
    expected = reference.merge_pair(ids, pair, 256)
    expect(replaced == expected.count(256),
           say("{what} should replace the pair {times} times, it made {replaced} new ids: {merged!r}", what=what,
               times=expected.count(256), replaced=replaced, merged=merged))


# --------------------------------------------------------------------------- trace_merges


@points(1)
@docstring_examples("steps[0]", "steps[1]")
@given(text=S.texts(), num_merges=S.merges())
@example(text="the then there", num_merges=2)
@example(text="", num_merges=3)
def test_trace_merges_matches_reference(student, reference, text, num_merges):
    """trace_merges records every merge (rank, pair, new id, count, token bytes, length) as the reference does."""
    expect_equal(student.trace_merges(text, num_merges), reference.trace_merges(text, num_merges),
                 f"trace_merges({text!r}, {num_merges})")


@hidden
@points(2)
@given(text=st.one_of(S.tie_texts(), S.overlap_tie_texts()), num_merges=st.integers(1, 12))
@example(text="the then there", num_merges=2)
@example(text="abcdcdab", num_merges=1)
@example(text="badcab", num_merges=3)
def test_ties_break_to_leftmost_first_occurrence(student, reference, text, num_merges):
    """Among equally frequent pairs, trace_merges merges the one whose first occurrence is leftmost."""
    what = f"trace_merges({text!r}, {num_merges})"
    got = _checked_steps(student.trace_merges(text, num_merges), what)
    expect_equal(_merged_bytes(got), _merged_bytes(reference.trace_merges(text, num_merges)),
                 say("the merged pairs of {what}, as the bytes of their two parts", what=what))


def _checked_steps(steps, what):
    expect(type(steps) is list and all(_is_step(step) for step in steps),
           say("{what}: expected a list of MergeStep values, got {got}", what=what, got=show(steps)))
    return steps


def _merged_bytes(steps) -> list[tuple[bytes, bytes]]:
    """Each step's pair as the bytes of its two parts, whatever ids the steps gave the merged tokens."""
    vocab = {i: bytes([i]) for i in range(256)}
    merged = []
    for step in steps:
        left, right = (vocab.get(i, b"?") for i in step[1])
        merged.append((left, right))
        vocab[step[2]] = left + right
    return merged


@points(1)
@given(text=S.runs(), num_merges=st.integers(1, 8))
@example(text="aaa", num_merges=1)
@example(text="aaaa", num_merges=3)
@example(text="aaaaab", num_merges=2)
def test_overlapping_runs_merge_without_overlap(student, text, num_merges):
    """On runs like 'aaaa' the count includes overlapping pairs but the merge does not overlap (the length shows it)."""
    what = f"trace_merges({text!r}, {num_merges})"
    steps = _checked_steps(student.trace_merges(text, num_merges), what)
    ids: list = list(text.encode("utf-8"))
    expect(bool(steps) or len(ids) < 2, say("{what}: expected at least one merge, got none", what=what))
    for step in steps:  # the merges the student chose, counted and made by the rules
        pair = tuple(step[1])
        counts = [(ids[i], ids[i + 1]) for i in range(len(ids) - 1)]
        ids = _merged(ids, pair, step[2])
        expect_equal((step[3], step[5]), (counts.count(pair), len(ids)),
                     say("{what}: (count, length) of the merge of {pair} (every overlapping occurrence counts, "
                         "the merge replaces left to right without overlap)", what=f"{what}[{step[0]}]", pair=pair))
        expect(step[3] == max(map(counts.count, counts)),
               say("{what}: {pair} occurs {count} times, not the most of any pair", what=f"{what}[{step[0]}]",
                   pair=pair, count=step[3]))


@points(1)
@given(text=S.nonempty_texts(), num_merges=S.merges())
@example(text="the then there", num_merges=2)
@example(text="abcabcabc", num_merges=4)
@example(text=" ".join(a + b for a in "abcdefghijklmnopqrstuvwxyz" for b in "abcdefghijklmnop"), num_merges=300)
def test_new_ids_are_256_plus_rank(student, text, num_merges):
    """Merge k has rank k and creates id 256 + k, for every merge the text allows."""
    steps = student.trace_merges(text, num_merges)
    what = f"trace_merges({text!r}, {num_merges})"
    expect(type(steps) is list and len(steps) <= num_merges,
           say("{what}: expected a list of at most {most} merges, got {got}", what=what, most=num_merges,
               got=show(steps)))
    for k, step in enumerate(steps):
        expect(_is_step(step), say("{what}: expected a MergeStep, got {got}", what=f"{what}[{k}]", got=show(step)))
        expect_equal((step[0], step[2]), (k, 256 + k), f"{what}[{k}]: (rank, new_id)")
    left = len(_replayed(text, steps))  # not the student's own lengths: those are another property's
    expect(len(steps) == num_merges or left < 2,
           say("{what}: {merges} merges instead of {wanted}, with {left} ids left (a pair was still there)",
               what=what, merges=len(steps), wanted=num_merges, left=left))


@hidden
@points(1)
@given(text=S.texts(), num_merges=S.merges())
def test_trace_tokens_lengths_and_early_stop(student, text, num_merges):
    ("""Each token is the bytes of its two parts, lengths fall every merge, and training stops early only when no """
     """pair is left.""")
    steps = student.trace_merges(text, num_merges)
    what = f"trace_merges({text!r}, {num_merges})"
    expect(type(steps) is list and len(steps) <= num_merges,
           say("{what}: expected at most {most} steps, got {got}", what=what, most=num_merges, got=show(steps)))
    vocab = {i: bytes([i]) for i in range(256)}
    length = len(text.encode("utf-8"))
    for step in steps:
        expect(_is_step(step) and type(step[4]) is bytes,
               say("{what}: expected MergeStep values, got {got}", what=what, got=show(step)))
        _rank, (left, right), new_id, count, token, new_length = step
        expect(left in vocab and right in vocab,
               say("{what}: step {step} merges an id that does not exist yet", what=what, step=show(step)))
        expect_equal(token, vocab[left] + vocab[right],
                     say("{what}: the token of step {rank}", what=what, rank=step[0]))
        expect(count >= 1 and new_length < length,
               say("{what}: step {step} should have a positive count and shorten {length}", what=what,
                   step=show(step), length=length))
        vocab[new_id], length = token, new_length
    if len(steps) < num_merges:
        expect(length < 2, say("{what}: stopped after {merges} merges with {left} ids left (a pair was still there)",
                               what=what, merges=len(steps), left=length))


# --------------------------------------------------------------------------- token_tree


@points(2)
@docstring_examples("token_tree(steps, 257)", given={"steps": EXAMPLE_STEPS})
@given(text=S.texts(), num_merges=S.merges(20))
@example(text="the then there", num_merges=2)
def test_token_tree_of_the_is_nested_pairs(student, reference, text, num_merges):
    """token_tree builds nested (left, right) pairs down to byte ids: the tree of 'the' is ((116, 104), 101)."""
    steps = reference.trace_merges(text, num_merges)
    together([lambda token_id=token_id: expect_equal(student.token_tree(steps, token_id),
                                                     reference.token_tree(steps, token_id),
                                                     f"token_tree(trace_merges({text!r}, {num_merges}), {token_id})")
              for token_id in [step.new_id for step in steps] + [ord("a"), 0, 255]])
    if steps:  # plain 6-tuples work as well as MergeStep values
        plain = [tuple(step) for step in steps]
        last = steps[-1].new_id
        expect_equal(student.token_tree(plain, last), reference.token_tree(steps, last),
                     f"token_tree([tuple(step) for step in trace_merges({text!r}, {num_merges})], {last})")


@points(1)
@given(text=S.texts(), num_merges=S.merges(10), extra=st.integers(0, 5))
def test_token_tree_rejects_unknown_id(student, reference, text, num_merges, extra):
    """token_tree raises ValueError naming token_id for an id that is neither a byte nor made by the steps."""
    steps = reference.trace_merges(text, num_merges)
    for token_id in (256 + len(steps) + extra, -1 - extra):
        expect_error(lambda token_id=token_id: student.token_tree(steps, token_id), ("ValueError",),
                     f"token_tree(trace_merges({text!r}, {num_merges}), {token_id})", naming=("token_id",))


# --------------------------------------------------------------------------- render_trace


def _check_example_trace(rendered, names):
    """The docstring's trace, checked for what it shows, as any trace is (its layout is only suggested)."""
    _check_rendered(rendered, names["steps"], say("{call}, the docstring's example", call="render_trace(steps)"))


@points(2)
@docstring_examples("print(render_trace(steps))", check=_check_example_trace, given={"steps": EXAMPLE_STEPS})
@given(text=S.texts(), num_merges=S.merges(15))
@example(text="the then there", num_merges=2)
@example(text="", num_merges=0)
@example(text="low lower lowest 1234 12", num_merges=12)
def test_render_trace_shows_parts_token_count_and_length(student, reference, text, num_merges):
    """render_trace writes one line per merge showing both parts and the new token as text, the count and the length."""
    steps = reference.trace_merges(text, num_merges)
    _check_rendered(student.render_trace(steps), steps, f"render_trace(trace_merges({text!r}, {num_merges}))")


@hidden
@points(1)
@given(text=st.one_of(S.fragment_texts(15, ("\n", "\n\n", "\t", "\r\n", "\x00", "é", "中文", "😀", "a", " ", "\x1b[")),
                      S.world_texts(20)),
       num_merges=S.merges(12))
@example(text="é\n\né\n\n", num_merges=2)
@example(text="中中中中", num_merges=1)
def test_render_trace_escapes_control_chars_and_partial_utf8(student, reference, text, num_merges):
    """render_trace escapes control characters and shows partial UTF-8 as the replacement character."""
    steps = reference.trace_merges(text, num_merges)
    _check_rendered(student.render_trace(steps), steps, f"render_trace(trace_merges({text!r}, {num_merges}))",
                    numbers=False)


# --------------------------------------------------------------------------- trace_word_merges


TEXTBOOK = {"lower": 5, "lowest": 2, "newest": 6}
TEXTBOOK_MERGES = [(("w", "e"), 13), (("we", "s"), 8), (("wes", "t"), 8)]


def _scaled_textbook(n: int) -> dict[str, int]:
    return {word: count * n for word, count in TEXTBOOK.items()}


# the textbook's table with every count times n (the same merges, their counts times n), or one
# word of distinct letters with any count (every pair counts the same, so the leftmost wins)
_textbook_tables = st.one_of(
    st.integers(1, 4).map(_scaled_textbook),
    st.builds(lambda word, count: {word: count},
              st.lists(st.sampled_from("abcdefghijklmnopqrstuvwxyz"), min_size=2, max_size=8, unique=True).map("".join),
              st.integers(1, 9)),
)


@points(1)
@given(table=_textbook_tables, num_merges=st.integers(3, 12))
@example(table=TEXTBOOK, num_merges=3)
@example(table=_scaled_textbook(3), num_merges=3)
@example(table={"low": 2}, num_merges=3)
def test_trace_word_merges_textbook_example(student, table, num_merges):
    ("""trace_word_merges on {'lower': 5, 'lowest': 2, 'newest': 6} starts with ('w','e') 13, ('we','s') 8, """
     """('wes','t') 8; other tables alike.""")
    got = student.trace_word_merges(table, num_merges)
    what = f"trace_word_merges({table!r}, {num_merges})"
    if table.keys() == TEXTBOOK.keys():
        n = table["lower"] // TEXTBOOK["lower"]
        expect(isinstance(got, list) and 3 <= len(got) <= num_merges,
               say("{what}: expected a list of 3 to {most} merges, got {got}", what=what, most=num_merges,
                   got=show(got)))
        expect_equal(got[:3], [(pair, count * n) for pair, count in TEXTBOOK_MERGES],
                     say("the first three merges of {what}", what=what))
    else:
        (word, count), = table.items()
        expect_equal(got, [((word[:k], word[k]), count) for k in range(1, min(num_merges + 1, len(word)))], what)


@points(1)
@given(table=S.word_counts(), num_merges=S.merges(20))
@example(table={"ab": 3, "ba": 1}, num_merges=2)
@example(table={"ab": 1, "ab" * 3: 1}, num_merges=3)
def test_word_merges_never_cross_words_and_weight_by_count(student, table, num_merges):
    ("""trace_word_merges counts pairs only inside words, each weighted by the word's count: each merge is of a most """
     """frequent pair so counted, with that count, until no word has two symbols.""")
    merges = student.trace_word_merges(table, num_merges)
    what = f"trace_word_merges({table!r}, {num_merges})"
    expect(type(merges) is list and len(merges) <= num_merges,
           say("{what}: expected at most {most} merges, got {got}", what=what, most=num_merges, got=show(merges)))
    words = {word: list(word) for word in table}
    for k, merge in enumerate(merges):  # the merges the student chose, each counted by the rules
        counts = _word_pair_counts(words, table)
        expect(isinstance(merge, tuple) and len(merge) == 2 and merge[0] in counts,
               say("{what} is {merge}, not a pair of symbols inside a word with its count (the pairs are {pairs})",
                   what=f"{what}[{k}]", merge=show(merge), pairs=show(counts)))
        pair, count = merge
        expect_equal(count, counts[pair], say("{what}: the count of {pair!r}, weighted by each word's count",
                                              what=f"{what}[{k}]", pair=pair))
        expect(count == max(counts.values()),
               say("{what} merges {pair!r}, counted {count}, but {other!r} counts {most}", what=f"{what}[{k}]",
                   pair=pair, count=count, other=max(counts, key=counts.get), most=max(counts.values())))
        words = {word: _merged(symbols, pair, pair[0] + pair[1]) for word, symbols in words.items()}
    expect(len(merges) == num_merges or not _word_pair_counts(words, table),
           say("{what}: stopped after {merges} merges, though a word still has two symbols", what=what,
               merges=len(merges)))


def _word_pair_counts(words: dict[str, list[str]], table: dict[str, int]) -> dict[tuple[str, str], int]:
    counts: dict[tuple[str, str], int] = {}
    for word, symbols in words.items():
        for pair in zip(symbols, symbols[1:], strict=False):
            counts[pair] = counts.get(pair, 0) + table[word]
    return counts


@hidden
@points(1)
@given(words=st.lists(st.text("abcd", min_size=2, max_size=4), min_size=2, max_size=5, unique=True),
       num_merges=st.integers(1, 6))
@example(words=["cd", "ab"], num_merges=1)
def test_word_merge_ties_follow_dict_order(student, reference, words, num_merges):
    """With equal counts, trace_word_merges merges the pair met first walking the words in the dict's order."""
    table = dict.fromkeys(words, 1)
    got = student.trace_word_merges(table, num_merges)
    expect(isinstance(got, list) and got and isinstance(got[0], tuple) and len(got[0]) == 2,
           say("{what}: expected a list of (pair, count), got {got}",
               what=f"trace_word_merges({table!r}, {num_merges})", got=show(got)))
    counts = _word_pair_counts({word: list(word) for word in table}, table)
    tied = [pair for pair, count in counts.items() if count == max(counts.values())]
    expect_equal(got[0][0], tied[0], say("the first merged pair of {what}, among the most frequent {tied!r}",
                                         what=f"trace_word_merges({table!r}, {num_merges})", tied=tied))


# --------------------------------------------------------------------------- bad input


@points(1)
def test_bad_argument_types_raise_type_errors_by_the_shared_rules(student, course):
    ("""Every graded function, on every parameter, follows the type rules of exercises/__init__.py: True is not an """
     """int, a tuple is not a list (pair is the one tuple), one item of the wrong type in a list or dict is a """
     """TypeError too, each naming the argument.""")
    expect_bad_input_rules(student, graded_functions(course, "ex1_merge_tracing"))


@hidden
@points(1)
@given(num_merges=st.integers(-5, -1))
def test_bad_arguments_raise_errors_naming_them(student, num_merges):
    ("""Negative num_merges, word counts below 1 and steps using an unknown id are ValueErrors naming the argument; """
     """arguments are checked in signature order, and within one argument its types before its values.""")
    expect_error(lambda: student.trace_merges("abc", num_merges), ("ValueError",), f"trace_merges('abc', {num_merges})",
                 naming=("num_merges",))
    expect_error(lambda: student.trace_word_merges({"ab": 2}, num_merges), ("ValueError",),
                 f"trace_word_merges({{'ab': 2}}, {num_merges})", naming=("num_merges",))
    expect_error(lambda: student.trace_word_merges({"ab": 0}, 2), ("ValueError",), "trace_word_merges({'ab': 0}, 2)",
                 naming=("word_counts",))
    expect_error(lambda: student.trace_word_merges({"ab": 2, "cd": num_merges}, 2), ("ValueError",),
                 f"trace_word_merges({{'ab': 2, 'cd': {num_merges}}}, 2)", naming=("word_counts",))
    # the first bad argument is reported, and a wrong type within one argument before a bad value
    expect_error(lambda: student.trace_word_merges({"ab": 0}, num_merges), ("ValueError",),
                 f"trace_word_merges({{'ab': 0}}, {num_merges})", naming=("word_counts",))
    expect_error(lambda: student.trace_word_merges({"ab": 0, "cd": "2"}, 2), ("TypeError",),
                 "trace_word_merges({'ab': 0, 'cd': '2'}, 2)", naming=("word_counts",))
    for pair in ((300, 97), (97, 300)):  # one id of the pair made by no earlier step
        steps = [(0, (97, 98), 256, 2, b"ab", 3), (1, pair, 257, 1, b"?", 2)]
        expect_error(lambda steps=steps: student.render_trace(steps), ("ValueError",), f"render_trace({steps!r})",
                     naming=("steps",))

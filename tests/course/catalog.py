"""A catalog of plausible wrong implementations, as mutations of the reference solutions, and
of correct alternative implementations; ``tests/course/test_mutant_catalog.py`` grades every one of them.

A :class:`Mutant` is a copy of ``solutions/`` with a few textual replacements: one mistake a
student could make. It names the property of the exercise's suite whose name describes that
mistake: grading the mutated copy must fail that property and lose points on the exercise.
Each ``old`` text must occur exactly once in its file, so a mutation that has gone stale
after an edit of the reference fails loudly instead of silently testing nothing.

An alternative (``tests/course/alternatives/<name>/exercises/*.py``, without ``__init__.py`` and
the lesson's ``lesson*.py``, which are added from ``exercises/``) is a whole submission written differently
from the reference; it must get full marks, which shows that the suites grade the rules of the
docstrings and not the reference's incidental choices:

- ``naive_recount``: the lesson's naive algorithm everywhere (recount every pair with a
  ``Counter`` before every merge, ``max`` for the tie rule), as a student would write it;
  ``get_pair_counts`` returns a ``Counter``, which the docstring allows;
- ``restructured``: explicit first-occurrence scans for ties, a tokenizer that stores its
  merges as a ranked list and encodes by applying them one after the other, one trainer with
  a pluggable choice of pair for WordPiece and BPE, an aligned Markdown table with colon
  separators, a merge trace laid out differently from the suggested one, and a Unigram
  lattice object with push-style Viterbi and pairwise log-add-exp;
- ``from_docstrings``: all six exercises written from the student release's docstrings alone
  (a reader who never saw the reference), the base of the one-bug variants in
  :data:`BLIND_VARIANTS`.

This module also holds the helpers that build a submission folder and grade it, so that
``tests/course/test_mutant_catalog.py`` can run gradings in worker processes.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path

from tests.conftest import ROOT

SOLUTIONS = ROOT / "solutions"
STUBS = ROOT / "exercises"
ALTERNATIVES_DIR = Path(__file__).resolve().parent / "alternatives"
ALTERNATIVES = {
    "from_docstrings": ["ex1_merge_tracing", "ex2_special_tokens", "ex3_wordpiece", "ex4_multilingual", "ex5_parity",
                        "ex6_unigram"],
    "naive_recount": ["ex1_merge_tracing", "ex2_special_tokens", "ex3_wordpiece", "ex4_multilingual", "ex5_parity"],
    "restructured": ["ex1_merge_tracing", "ex2_special_tokens", "ex3_wordpiece", "ex4_multilingual", "ex5_parity",
                     "ex6_unigram"],
}


@dataclass(frozen=True)
class Mutant:
    """One plausible mistake: ``replace`` holds ``(old, new)`` texts applied to ``file`` (a
    file of ``solutions/``, or of the alternative ``base``); grading must fail the property
    ``fails`` of ``exercise``."""

    exercise: str
    name: str
    file: str
    replace: list[tuple[str, str]] = field(hash=False)
    fails: str
    base: str | None = None  # None: the reference; else the name of an alternative
    # the other properties it may fail, each of which names a rule the mistake breaks too: a worked
    # example it changes, or a comparison with the reference that covers the rule (the measure of
    # "one bug, one reason": tests/course/failure_spread.py prints how many properties each mutant fails)
    also: tuple[str, ...] = ()


# A student's naive trainer whose ties go to the pair that occurs LAST (max over the pairs in
# reverse first-occurrence order). Inserted into a module that imports ``_bpe``.
_RECOUNT_TIES_TO_LAST = '''
def _recount_train(ids, num_merges, first_id):
    """Naive BPE whose ties go to the last pair (the mistake)."""
    from collections import Counter

    for k in range(num_merges):
        counts = Counter(zip(ids, ids[1:]))
        if not counts:
            return
        pair = max(reversed(list(counts)), key=counts.get)
        ids = _bpe.replace_pair(ids, pair, first_id + k)
        yield _bpe.Merge(pair, first_id + k, counts[pair], len(ids))


'''

_BPE_PIECES_TIES_ALPHABETICAL = '''    vocab = _initial_vocab(words)
    for _ in range(num_merges):
        counts = {}
        for units, n in words:
            for pair in zip(units, units[1:]):
                counts[pair] = counts.get(pair, 0) + n
        if not counts:
            break
        pair = max(sorted(counts), key=counts.get)
        vocab.append(_join(*pair))
        words = [(_bpe.replace_pair(units, pair, _join(*pair)), n) for units, n in words]
    return vocab
'''

SHARED_RULES = "test_bad_argument_types_raise_type_errors_by_the_shared_rules"  # every suite's, from the signatures

# A student's own copies of the reference's shared checks, each with one mistake of the bad-input rules.
_LAX_CHECK_INT = '''

def check_int(value, name, minimum=0):
    """An int check that takes True for an int (the mistake)."""
    if not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}")
    return value
'''
_LAX_CHECK_IDS = '''

def check_ids(value, name, container=list):
    """A list-of-ints check that takes a tuple for a list (the mistake)."""
    if not isinstance(value, (container, tuple)):
        raise TypeError(f"{name} must be a {container.__name__} of ints, got {type(value).__name__}")
    for item in value:
        if isinstance(item, bool) or not isinstance(item, int):
            raise TypeError(f"{name} must hold only ints, found {type(item).__name__}")
    return list(value)
'''

EX1, EX2, EX3, EX4, EX5 = "ex1_merge_tracing", "ex2_special_tokens", "ex3_wordpiece", "ex4_multilingual", "ex5_parity"
EX6 = "ex6_unigram"

MUTANTS: list[Mutant] = [
    # ------------------------------------------------------------------ exercise 1
    Mutant(EX1, "ties_go_to_last_pair", "ex1_merge_tracing.py", [
        ("    merges = _bpe.train([(ids, 1)], num_merges, lambda k, _pair: FIRST_MERGE_ID + k)\n",
         "    merges = _recount_train(ids, num_merges, FIRST_MERGE_ID)\n"),
        ("\ndef _check_steps(", _RECOUNT_TIES_TO_LAST + "def _check_steps("),
    ], fails="test_ties_break_to_leftmost_first_occurrence",
        also=("test_trace_merges_matches_reference",)),
    Mutant(EX1, "merge_pair_scans_right_to_left", "ex1_merge_tracing.py", [
        ("    return _bpe.replace_pair(ids, pair, new_id)\n",
         "    return _bpe.replace_pair(ids[::-1], pair[::-1], new_id)[::-1]\n"),
    ], fails="test_merge_pair_replaces_left_to_right_without_overlap"),
    Mutant(EX1, "overlapping_aaa_counted_as_replacements", "ex1_merge_tracing.py", [
        # length = previous length - count: as if every counted occurrence were replaced
        ("    steps = []\n", "    steps = []\n    shrinking = len(ids)\n"),
        ("        steps.append(MergeStep(rank, pair, new_id, count, vocab[new_id], length))\n",
         "        shrinking -= count\n"
         "        steps.append(MergeStep(rank, pair, new_id, count, vocab[new_id], shrinking))\n"),
    ], fails="test_overlapping_runs_merge_without_overlap",
        also=("test_trace_merges_matches_reference",)),
    Mutant(EX1, "new_ids_255_plus_k", "ex1_merge_tracing.py", [
        ("lambda k, _pair: FIRST_MERGE_ID + k)", "lambda k, _pair: FIRST_MERGE_ID - 1 + k)"),
    ], fails="test_new_ids_are_256_plus_rank",
        also=("test_trace_merges_matches_reference",)),
    Mutant(EX1, "pair_counts_sorted_by_pair", "ex1_merge_tracing.py", [
        ("    return counts\n", "    return dict(sorted(counts.items()))\n"),
    ], fails="test_pair_counts_overlapping_in_first_occurrence_order"),
    Mutant(EX1, "token_tree_unknown_id_is_a_leaf", "ex1_merge_tracing.py", [
        ('            raise ValueError(f"token_id {i} is neither a byte nor made by the given steps")\n',
         "            return i\n"),
    ], fails="test_token_tree_rejects_unknown_id"),
    Mutant(EX1, "render_trace_omits_length", "ex1_merge_tracing.py", [
        (", count {count}, length {length})", ", count {count})"),
    ], fails="test_render_trace_shows_parts_token_count_and_length"),
    Mutant(EX1, "render_trace_raw_control_chars", "ex1_merge_tracing.py", [
        ('"".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)', "text"),
    ], fails="test_render_trace_escapes_control_chars_and_partial_utf8",
        also=("test_render_trace_shows_parts_token_count_and_length",)),
    Mutant(EX1, "render_trace_drops_partial_utf8", "ex1_merge_tracing.py", [
        ('    text = token.decode("utf-8", errors="replace")\n', '    text = token.decode("utf-8", errors="ignore")\n'),
    ], fails="test_render_trace_escapes_control_chars_and_partial_utf8",
        also=("test_render_trace_shows_parts_token_count_and_length",)),
    Mutant(EX1, "word_pairs_cross_word_boundaries", "ex1_merge_tracing.py", [
        ("    words = [(list(word), count) for word, count in word_counts.items()]\n",
         '    words = [(list("".join(word * count for word, count in word_counts.items())), 1)]\n'),
    ], fails="test_word_merges_never_cross_words_and_weight_by_count",
        also=("test_word_merge_ties_follow_dict_order", "test_trace_word_merges_textbook_example",)),
    Mutant(EX1, "word_pairs_not_weighted_by_count", "ex1_merge_tracing.py", [
        ("    words = [(list(word), count) for word, count in word_counts.items()]\n",
         "    words = [(list(word), 1) for word, count in word_counts.items()]\n"),
    ], fails="test_word_merges_never_cross_words_and_weight_by_count",
        also=("test_trace_word_merges_textbook_example",)),
    Mutant(EX1, "words_walked_in_sorted_order", "ex1_merge_tracing.py", [
        ("    words = [(list(word), count) for word, count in word_counts.items()]\n",
         "    words = [(list(word), count) for word, count in sorted(word_counts.items())]\n"),
    ], fails="test_word_merge_ties_follow_dict_order"),
    # ------------------------------------------------------------------ exercise 2
    Mutant(EX2, "special_ids_not_offset_by_3", "ex2_special_tokens.py", [
        ("BYTE_OFFSET = 3  #", "BYTE_OFFSET = 0  #"),
    ], fails="test_untrained_ids_specials_0_2_and_bytes_offset_by_3",
        also=("test_allowed_special_all_none_or_subset",
              "test_encode_applies_learned_merges_in_rank_order",
              "test_invalid_utf8_decodes_to_replacement_char",
              "test_merge_ids_259_plus_k_and_vocab_size",
              "test_merges_never_cross_pretoken_boundaries",
              "test_special_token_strings_are_cut_out_of_training",
              "test_token_to_id_inverts_id_to_token",
              "test_training_learns_reference_merges_weighted_by_pretoken_frequency",
              "test_worked_example_low_lower_lowest")),
    Mutant(EX2, "merge_ids_start_at_256", "ex2_special_tokens.py", [
        ("FIRST_MERGE_ID = BYTE_OFFSET + 256\n", "FIRST_MERGE_ID = 256\n"),
    ], fails="test_merge_ids_259_plus_k_and_vocab_size",
        also=("test_merges_never_cross_pretoken_boundaries", "test_decode_encode_round_trips",
              "test_encode_applies_learned_merges_in_rank_order",
              "test_special_token_strings_are_cut_out_of_training",
              "test_training_learns_reference_merges_weighted_by_pretoken_frequency",
              "test_worked_example_low_lower_lowest")),
    Mutant(EX2, "pretokenize_without_lookahead", "ex2_special_tokens.py", [
        ("    return re.findall(PRETOKEN_PATTERN, check_str(text, \"text\"))\n",
         "    return re.findall(r\" ?\\S+|\\s+\", check_str(text, \"text\"))\n"),
    ], fails="test_pretokenize_matches_pattern_and_joins_back",
        also=("test_encode_applies_learned_merges_in_rank_order",
              "test_merge_ids_259_plus_k_and_vocab_size",
              "test_training_learns_reference_merges_weighted_by_pretoken_frequency")),
    Mutant(EX2, "pairs_cross_pretoken_boundaries", "ex2_special_tokens.py", [
        ("        freq = Counter(piece for part in ordinary for piece in pretokenize(part))\n",
         "        freq = Counter(part for part in ordinary if part)\n"),
    ], fails="test_merges_never_cross_pretoken_boundaries",
        also=("test_decode_encode_round_trips",
              "test_encode_applies_learned_merges_in_rank_order",
              "test_merge_ids_259_plus_k_and_vocab_size",
              "test_special_token_strings_are_cut_out_of_training",
              "test_training_learns_reference_merges_weighted_by_pretoken_frequency")),
    Mutant(EX2, "special_strings_not_cut_from_training", "ex2_special_tokens.py", [
        ("        ordinary = _split_specials(text, SPECIAL_TOKENS)[::2]\n", "        ordinary = [text]\n"),
    ], fails="test_special_token_strings_are_cut_out_of_training",
        also=("test_training_learns_reference_merges_weighted_by_pretoken_frequency",)),
    Mutant(EX2, "pretokens_not_weighted_by_frequency", "ex2_special_tokens.py", [
        ("piece.encode(\"utf-8\")], n) for piece, n in freq.items()]",
         "piece.encode(\"utf-8\")], 1) for piece, n in freq.items()]"),
    ], fails="test_training_learns_reference_merges_weighted_by_pretoken_frequency"),
    Mutant(EX2, "encode_merges_leftmost_pair_not_lowest_rank", "ex2_special_tokens.py", [
        ('            pair = min(pairwise(ids), key=lambda p: self.merges.get(p, float("inf")))\n',
         "            pair = next((p for p in pairwise(ids) if p in self.merges), None)\n"),
    ], fails="test_encode_applies_learned_merges_in_rank_order"),
    Mutant(EX2, "allowed_none_still_encodes_specials", "ex2_special_tokens.py", [
        ("            return set()\n", "            return set(SPECIAL_TOKENS)\n"),
    ], fails="test_allowed_special_all_none_or_subset",
        also=("test_untrained_ids_specials_0_2_and_bytes_offset_by_3", "test_worked_example_low_lower_lowest")),
    Mutant(EX2, "eos_prepended", "ex2_special_tokens.py", [
        ("            ids.append(EOS_ID)\n", "            ids.insert(0, EOS_ID)\n"),
    ], fails="test_add_eos_appends_eos_id",
        also=("test_worked_example_low_lower_lowest",)),
    Mutant(EX2, "decode_each_token_on_its_own", "ex2_special_tokens.py", [
        ('        return b"".join(self._token_bytes(i) for i in ids).decode("utf-8", errors="replace")\n',
         '        return "".join(self._token_bytes(i).decode("utf-8", errors="replace") for i in ids)\n'),
    ], fails="test_decode_encode_round_trips",
        also=("test_invalid_utf8_decodes_to_replacement_char",)),
    Mutant(EX2, "decode_unknown_id_silently_empty", "ex2_special_tokens.py", [
        ('            raise ValueError(f"ids holds {i}, which is outside the vocabulary (size {self.vocab_size})")\n',
         '            return b""\n'),
    ], fails="test_bad_ids_and_lengths_raise_value_error"),
    Mutant(EX2, "token_to_id_unknown_raises_key_error", "ex2_special_tokens.py", [
        ('        return self._ids_by_bytes.get(piece.encode("utf-8"), UNK_ID)\n',
         '        return self._ids_by_bytes[piece.encode("utf-8")]\n'),
    ], fails="test_token_to_id_inverts_id_to_token"),
    Mutant(EX2, "pad_batch_pads_left", "ex2_special_tokens.py", [
        ("        ids = [row + [PAD_ID] * (length - len(row)) for row in rows]\n",
         "        ids = [[PAD_ID] * (length - len(row)) + row for row in rows]\n"),
        ("        mask = [[1] * len(row) + [0] * (length - len(row)) for row in rows]\n",
         "        mask = [[0] * (length - len(row)) + [1] * len(row) for row in rows]\n"),
    ], fails="test_pad_batch_right_pads_with_attention_mask"),
    Mutant(EX2, "pad_batch_keeps_rows_longer_than_length", "ex2_special_tokens.py", [
        ("        if too_long:\n", "        if too_long and length < 0:\n"),
    ], fails="test_bad_ids_and_lengths_raise_value_error"),
    # ------------------------------------------------------------------ exercise 3
    Mutant(EX3, "score_float_product_division", "ex3_wordpiece.py", [
        ("    return pair_count / (left_count * right_count)\n", "    return pair_count / left_count / right_count\n"),
    ], fails="test_wordpiece_score_divides_integer_product_once",
        also=("test_wordpiece_ties_break_by_pair_count_then_first_occurrence",)),
    Mutant(EX3, "score_zero_count_divides_by_zero", "ex3_wordpiece.py", [
        ('    check_int(left_count, "left_count", minimum=1)\n', '    check_int(left_count, "left_count")\n'),
    ], fails="test_bad_counts_raise_value_error_naming_them"),
    Mutant(EX3, "wordpiece_uses_raw_count", "ex3_wordpiece.py", [
        ("        return wordpiece_score(count, unit_counts[pair[0]], unit_counts[pair[1]]), count\n",
         "        return count, count\n"),
    ], fails="test_train_wordpiece_picks_highest_score_like_reference",
        also=("test_train_wordpiece_worked_example",
              "test_unit_counts_include_one_unit_words",
              "test_wordpiece_ties_break_by_pair_count_then_first_occurrence")),
    Mutant(EX3, "wordpiece_ties_skip_pair_count", "ex3_wordpiece.py", [
        ("        return wordpiece_score(count, unit_counts[pair[0]], unit_counts[pair[1]]), count\n",
         "        return wordpiece_score(count, unit_counts[pair[0]], unit_counts[pair[1]])\n"),
    ], fails="test_wordpiece_ties_break_by_pair_count_then_first_occurrence",
        also=("test_train_wordpiece_picks_highest_score_like_reference",)),
    Mutant(EX3, "continuation_prefix_lost", "ex3_wordpiece.py", [
        ("    return [ch if i == 0 else CONTINUATION + ch for i, ch in enumerate(word)]\n", "    return list(word)\n"),
    ], fails="test_word_units_prefix_continuations_with_hashes",
        also=("test_merged_unit_drops_right_continuation_prefix",
              "test_train_bpe_pieces_picks_highest_count_like_reference",
              "test_train_wordpiece_picks_highest_score_like_reference",
              "test_train_wordpiece_worked_example",
              "test_unit_counts_include_one_unit_words",
              "test_wordpiece_ties_break_by_pair_count_then_first_occurrence")),
    Mutant(EX3, "merge_keeps_right_continuation_prefix", "ex3_wordpiece.py", [
        ("    return left + right.removeprefix(CONTINUATION)\n", "    return left + right\n"),
    ], fails="test_merged_unit_drops_right_continuation_prefix",
        also=("test_train_bpe_pieces_picks_highest_count_like_reference",
              "test_train_wordpiece_picks_highest_score_like_reference",
              "test_train_wordpiece_worked_example",
              "test_unit_counts_include_one_unit_words",
              "test_wordpiece_ties_break_by_pair_count_then_first_occurrence")),
    Mutant(EX3, "unit_counts_skip_one_unit_words", "ex3_wordpiece.py", [
        ("        for unit in units:\n            unit_counts[unit] += n\n",
         "        for unit in (units if len(units) > 1 else []):\n            unit_counts[unit] += n\n"),
    ], fails="test_unit_counts_include_one_unit_words",
        also=("test_train_wordpiece_picks_highest_score_like_reference",
              "test_wordpiece_ties_break_by_pair_count_then_first_occurrence")),
    Mutant(EX3, "bpe_pieces_ties_alphabetical", "ex3_wordpiece.py", [
        ("    merges = _bpe.train(words, num_merges, lambda _k, pair: _join(*pair))\n"
         "    return _initial_vocab(words) + [merge.symbol for merge in merges]\n", _BPE_PIECES_TIES_ALPHABETICAL),
    ], fails="test_train_bpe_pieces_picks_highest_count_like_reference",
        also=("test_train_wordpiece_worked_example",)),
    Mutant(EX3, "tokenize_shortest_match_first", "ex3_wordpiece.py", [
        ("        end = len(word)\n        while end > start and prefix + word[start:end] not in vocab:\n"
         "            end -= 1\n",
         "        end = start + 1\n        while end <= len(word) and prefix + word[start:end] not in vocab:\n"
         "            end += 1\n        if end > len(word):\n            return None\n"),
    ], fails="test_tokenize_wordpiece_greedy_longest_match_first",
        also=("test_unknown_and_too_long_words_become_one_unk",)),
    Mutant(EX3, "unk_keeps_pieces_found_so_far", "ex3_wordpiece.py", [
        ("        if end == start:\n            return None\n",
         "        if end == start:\n            return pieces + [\"[UNK]\"]\n"),
    ], fails="test_unknown_and_too_long_words_become_one_unk",
        also=("test_tokenize_wordpiece_greedy_longest_match_first",)),
    Mutant(EX3, "max_chars_off_by_one", "ex3_wordpiece.py", [
        ("if len(word) <= max_chars else None", "if len(word) < max_chars else None"),
    ], fails="test_unknown_and_too_long_words_become_one_unk"),
    Mutant(EX3, "jaccard_counts_duplicates", "ex3_wordpiece.py", [
        ('        "jaccard": len(set_a & set_b) / len(union) if union else 0.0,\n',
         '        "jaccard": len(set_a & set_b) / (len(a) + len(b) - len(set_a & set_b)) if union else 0.0,\n'),
    ], fails="test_compare_vocabularies_as_sets_with_jaccard"),
    Mutant(EX3, "mean_length_counts_hashes", "ex3_wordpiece.py", [
        ("len(token.removeprefix(CONTINUATION)) for token in vocab", "len(token) for token in vocab"),
    ], fails="test_mean_length_per_distinct_token_ignores_continuation_prefix"),
    Mutant(EX3, "mean_length_counts_duplicates", "ex3_wordpiece.py", [
        ('        "mean_len_a": _mean_len(set_a),\n', '        "mean_len_a": _mean_len(a),\n'),
    ], fails="test_mean_length_per_distinct_token_ignores_continuation_prefix"),
    # ------------------------------------------------------------------ exercise 4
    Mutant(EX4, "tokens_per_byte_instead_of_char", "ex4_multilingual.py", [
        ("    chars = sum(len(text) for text in texts)\n",
         '    chars = sum(len(text.encode("utf-8")) for text in texts)\n'),
    ], fails="test_tokens_per_char_is_total_tokens_over_total_chars"),
    Mutant(EX4, "tokens_per_char_mean_of_text_ratios", "ex4_multilingual.py", [
        ("    return _count_tokens(encode, texts) / chars\n",
         "    return sum(len(encode(t)) / len(t) for t in texts if t) / len([t for t in texts if t])\n"),
    ], fails="test_tokens_per_char_is_total_tokens_over_total_chars"),
    Mutant(EX4, "premium_inverted_baseline_over_language", "ex4_multilingual.py", [
        ("    return {lang: n / tokens[baseline] for lang, n in tokens.items()}\n",
         "    return {lang: tokens[baseline] / n for lang, n in tokens.items()}\n"),
    ], fails="test_premium_is_language_tokens_over_baseline_tokens",
        also=("test_baseline_premium_is_exactly_one_and_languages_keep_order",
              "test_premium_sums_tokens_not_mean_of_sentence_ratios")),
    Mutant(EX4, "premium_mean_of_sentence_ratios", "ex4_multilingual.py", [
        ("    return _premiums({lang: _count_tokens(encode, s) for lang, s in parallel.items()}, baseline)\n",
         "    base = [len(encode(t)) for t in parallel[baseline]]\n"
         "    return {lang: sum(len(encode(t)) / b for t, b in zip(s, base)) / len(base) "
         "for lang, s in parallel.items()}\n"),
    ], fails="test_premium_sums_tokens_not_mean_of_sentence_ratios",
        also=("test_bad_parallel_or_baseline_raises",
              "test_baseline_premium_is_exactly_one_and_languages_keep_order",
              "test_premium_is_language_tokens_over_baseline_tokens")),
    Mutant(EX4, "unequal_sentence_counts_accepted", "ex4_multilingual.py", [
        ("    if len(set(sizes.values())) > 1:\n", "    if False:\n"),
    ], fails="test_bad_parallel_or_baseline_raises"),
    Mutant(EX4, "benchmark_rows_unsorted", "ex4_multilingual.py", [
        ("    for name in sorted(encoders):\n", "    for name in encoders:\n"),
        ("        for lang in sorted(parallel):\n", "        for lang in parallel:\n"),
    ], fails="test_benchmark_rows_sorted_by_encoder_then_language",
        also=("test_benchmark_on_course_parallel_data_with_cl100k",)),
    Mutant(EX4, "render_table_floats_unformatted", "ex4_multilingual.py", [
        ('    text = f"{value:.3f}" if isinstance(value, float) else str(value)\n', "    text = str(value)\n"),
    ], fails="test_render_table_contains_header_and_every_cell",
        also=("test_render_table_escapes_pipes",)),
    Mutant(EX4, "render_table_pipes_unescaped", "ex4_multilingual.py", [
        ('    return text.replace("|", "\\\\|").replace("\\n", " ")\n', '    return text.replace("\\n", " ")\n'),
    ], fails="test_render_table_escapes_pipes"),
    # ------------------------------------------------------------------ exercise 5
    Mutant(EX5, "compression_ratio_per_char", "ex5_parity.py", [
        ("    return len(encode(text)) / len(data)\n", "    return len(encode(text)) / len(text)\n"),
    ], fails="test_compression_ratio_is_tokens_over_utf8_bytes"),
    Mutant(EX5, "ratio_curve_not_starting_at_one", "ex5_parity.py", [
        ("    yield 1.0\n", ""),
    ], fails="test_ratio_curve_starts_at_one_and_never_increases",
        also=("test_parity_returns_smallest_qualifying_k",
              "test_unreachable_target_raises_value_error_naming_target_and_max_merges",
              "test_merges_for_parity_worked_example",
              "test_ratio_curve_matches_reference",
              "test_ratio_curve_stops_early_only_when_no_pair_left",
              "test_ratio_curve_ties_break_to_leftmost_first_occurrence",
              "test_ratio_curve_worked_example_aaaa",
              "test_real_corpus_ratio_curve_matches_reference")),
    Mutant(EX5, "training_stops_when_best_count_is_one", "ex5_parity.py", [
        ("    for merge in merges:\n        yield merge.length / len(data)\n",
         "    for merge in merges:\n        if merge.count < 2:\n            return\n"
         "        yield merge.length / len(data)\n"),
    ], fails="test_ratio_curve_stops_early_only_when_no_pair_left",
        also=("test_ratio_curve_matches_reference",
              "test_ratio_curve_starts_at_one_and_never_increases",
              "test_ratio_curve_ties_break_to_leftmost_first_occurrence",
              "test_ratio_curve_worked_example_aaaa")),
    Mutant(EX5, "ties_go_to_last_pair", "ex5_parity.py", [
        ("    merges = _bpe.train([(list(data), 1)], max_merges, lambda k, _pair: FIRST_MERGE_ID + k)\n",
         "    merges = _recount_train(list(data), max_merges, FIRST_MERGE_ID)\n"),
        ("\ndef ratio_curve(", _RECOUNT_TIES_TO_LAST + "def ratio_curve("),
    ], fails="test_ratio_curve_ties_break_to_leftmost_first_occurrence",
        also=("test_ratio_curve_matches_reference", "test_real_corpus_ratio_curve_matches_reference")),
    Mutant(EX5, "parity_returns_k_plus_1", "ex5_parity.py", [
        ("            return k\n", "            return k + 1\n"),
    ], fails="test_parity_returns_smallest_qualifying_k",
        also=("test_merges_for_parity_worked_example", "test_parity_threshold_is_target_times_one_plus_tolerance")),
    Mutant(EX5, "tolerance_applied_as_one_minus", "ex5_parity.py", [
        ("    threshold = target_ratio * (1 + tolerance)\n", "    threshold = target_ratio * (1 - tolerance)\n"),
    ], fails="test_parity_threshold_is_target_times_one_plus_tolerance",
        also=("test_merges_for_parity_worked_example", "test_parity_returns_smallest_qualifying_k")),
    Mutant(EX5, "threshold_compared_strictly", "ex5_parity.py", [
        ("        if ratio <= threshold:\n", "        if ratio < threshold:\n"),
    ], fails="test_parity_threshold_is_target_times_one_plus_tolerance"),
    Mutant(EX5, "unreachable_target_returns_last_k", "ex5_parity.py", [
        ("        best = min(best, ratio)\n", "        best = min(best, ratio)\n    return k\n"),
    ], fails="test_unreachable_target_raises_value_error_naming_target_and_max_merges",
        also=("test_merges_for_parity_worked_example",
              "test_parity_returns_smallest_qualifying_k",
              "test_parity_threshold_is_target_times_one_plus_tolerance")),
    # exercise 6 (bonus): Unigram
    Mutant(EX6, "viterbi_ties_to_shortest_last_piece", "ex6_unigram.py", [
        ("            if best[end] is None or score > best[end]:",
         "            if best[end] is None or score >= best[end]:"),
    ], fails="test_viterbi_ties_go_to_the_longest_last_piece"),
    Mutant(EX6, "viterbi_pieces_not_reversed", "ex6_unigram.py", [
        ("    return pieces[::-1], best[n]\n", "    return pieces, best[n]\n"),
    ], fails="test_viterbi_segment_is_the_best_of_every_segmentation",
        also=("test_viterbi_ties_go_to_the_longest_last_piece",)),
    Mutant(EX6, "marginal_is_the_viterbi_score", "ex6_unigram.py", [
        ("    total = _forward(text, logprobs, _longest(logprobs))[-1]\n",
         "    found = _viterbi(text, logprobs, _longest(logprobs))\n    total = found[1] if found else -math.inf\n"),
    ], fails="test_marginal_logprob_sums_every_segmentation"),
    Mutant(EX6, "expected_counts_ignore_word_counts", "ex6_unigram.py", [
        ("                counts[word[start:end]] += count * posterior\n",
         "                counts[word[start:end]] += posterior\n"),
    ], fails="test_expected_counts_are_posterior_piece_counts",
        also=("test_em_step_normalises_expected_counts_and_never_lowers_the_likelihood",
              "test_train_unigram_prunes_smallest_losses_like_reference")),
    Mutant(EX6, "expected_counts_leave_out_unused_pieces", "ex6_unigram.py", [
        ("    return _expected(word_counts, logprobs)\n",
         "    return {p: c for p, c in _expected(word_counts, logprobs).items() if c > 0}\n"),
    ], fails="test_expected_counts_are_posterior_piece_counts"),
    Mutant(EX6, "em_step_not_normalised", "ex6_unigram.py", [
        ("math.log(c) - math.log(total) for piece, c in counts.items() if c > 0}",
         "math.log(c) for piece, c in counts.items() if c > 0}"),
    ], fails="test_em_step_normalises_expected_counts_and_never_lowers_the_likelihood",
        also=("test_train_unigram_keeps_every_character_and_a_distribution_of_the_pinned_size",
              "test_train_unigram_prunes_smallest_losses_like_reference")),
    Mutant(EX6, "em_step_keeps_pieces_never_expected", "ex6_unigram.py", [
        ("math.log(c) - math.log(total) for piece, c in counts.items() if c > 0}",
         "math.log(max(c, 1e-300)) - math.log(total) for piece, c in counts.items()}"),
    ], fails="test_em_step_normalises_expected_counts_and_never_lowers_the_likelihood"),
    Mutant(EX6, "removal_loss_ignores_word_counts", "ex6_unigram.py", [
        ("else count * (score - other[1])", "else score - other[1]"),
    ], fails="test_removal_loss_is_the_fall_of_the_viterbi_likelihood",
        also=("test_train_unigram_prunes_smallest_losses_like_reference",)),
    Mutant(EX6, "removal_loss_zero_for_an_uncoverable_word", "ex6_unigram.py", [
        ("math.inf if other is None else", "0.0 if other is None else"),
    ], fails="test_removal_loss_is_the_fall_of_the_viterbi_likelihood"),
    Mutant(EX6, "prune_largest_losses", "ex6_unigram.py", [
        ("(round(losses[c[1]], 9), c[0]))", "(-round(losses[c[1]], 9), c[0]))"),
    ], fails="test_train_unigram_prunes_smallest_losses_like_reference"),
    Mutant(EX6, "prune_single_characters_too", "ex6_unigram.py", [
        ("        candidates = [(i, piece) for i, piece in enumerate(logprobs) if len(piece) > 1]\n",
         "        candidates = [(i, piece) for i, piece in enumerate(logprobs)]\n"),
        ("(round(losses[c[1]], 9), c[0]))", "(round(losses.get(c[1], 0.0), 9), c[0]))"),
    ], fails="test_train_unigram_keeps_every_character_and_a_distribution_of_the_pinned_size",
        also=("test_train_unigram_prunes_smallest_losses_like_reference",)),
    Mutant(EX6, "seed_keeps_substrings_seen_once", "ex6_unigram.py", [
        ("for s, n in substrings.items() if n >= 2)", "for s, n in substrings.items() if n >= 1)"),
    ], fails="test_train_unigram_keeps_every_character_and_a_distribution_of_the_pinned_size",
        also=("test_train_unigram_prunes_smallest_losses_like_reference",)),
    Mutant(EX6, "no_final_em_step", "ex6_unigram.py", [
        ("    return _em_keeping_pieces(words, logprobs)\n", "    return logprobs\n"),
    ], fails="test_train_unigram_prunes_smallest_losses_like_reference"),
    # the rules of ex6's docstrings that no property checked until these mistakes were planted
    Mutant(EX6, "seed_counts_substrings_without_overlap", "ex6_unigram.py", [
        ("            for j in range(i + 2, min(len(word), i + max_piece_len) + 1):\n"
         "                substrings[word[i:j]] += count\n", ""),
        ("    frequent = sorted(",
         "    for word, count in word_counts.items():  # str.count skips overlapping occurrences\n"
         "        for s in {word[i:j] for i in range(len(word))\n"
         "                  for j in range(i + 2, min(len(word), i + max_piece_len) + 1)}:\n"
         "            substrings[s] += count * word.count(s)\n"
         "    frequent = sorted("),
    ], fails="test_train_unigram_keeps_every_character_and_a_distribution_of_the_pinned_size",
        also=("test_train_unigram_prunes_smallest_losses_like_reference",)),
    Mutant(EX6, "words_split_on_whitespace", "ex6_unigram.py", [
        ("    words = dict(Counter(re.findall(WORD_PATTERN, text)))", "    words = dict(Counter(text.split()))"),
    ], fails="test_train_unigram_keeps_every_character_and_a_distribution_of_the_pinned_size"),
    Mutant(EX6, "seed_size_default_1000", "ex6_unigram.py", [
        ("def train_unigram(text: str, vocab_size: int, *, max_piece_len: int = 16, seed_size: int = 10_000,",
         "def train_unigram(text: str, vocab_size: int, *, max_piece_len: int = 16, seed_size: int = 1_000,"),
    ], fails="test_train_unigram_keeps_every_character_and_a_distribution_of_the_pinned_size"),
    Mutant(EX6, "starved_piece_put_back_at_the_end", "ex6_unigram.py", [
        ("    return {p: new.get(p, LOST_PIECE) for p in logprobs}",
         "    return {**new, **{p: LOST_PIECE for p in logprobs if p not in new}}"),
    ], fails="test_train_unigram_prunes_smallest_losses_like_reference"),
    Mutant(EX6, "em_step_divides_before_the_log", "ex6_unigram.py", [
        ("math.log(c) - math.log(total) for piece, c in counts.items() if c > 0}",
         "math.log(c / total) for piece, c in counts.items() if c > 0}"),
    ], fails="test_em_step_normalises_expected_counts_and_never_lowers_the_likelihood"),
    Mutant(EX6, "em_step_skips_uncoverable_words", "ex6_unigram.py", [
        ("    _check_logprobs(logprobs)\n    return _em(word_counts, logprobs)\n",
         "    _check_logprobs(logprobs)\n    longest = _longest(logprobs)\n"
         "    return _em({w: n for w, n in word_counts.items() if _viterbi(w, logprobs, longest)}, logprobs)\n"),
    ], fails="test_bad_unigram_arguments_raise_errors_naming_them"),
    Mutant(EX6, "removal_loss_skips_uncoverable_words", "ex6_unigram.py", [
        ("        if found is None:\n            raise ValueError(f\"word_counts: the word {word!r} has no "
         "segmentation into the vocabulary's pieces\")\n        pieces, score = found\n",
         "        if found is None:\n            continue\n        pieces, score = found\n"),
    ], fails="test_bad_unigram_arguments_raise_errors_naming_them"),
    Mutant(EX6, "seed_size_below_zero_accepted", "ex6_unigram.py", [
        ('    check_int(seed_size, "seed_size")\n', '    check_int(seed_size, "seed_size", minimum=None)\n'),
    ], fails="test_bad_unigram_arguments_raise_errors_naming_them"),
    Mutant(EX6, "train_unigram_text_unchecked", "ex6_unigram.py", [
        ('    check_str(text, "text")\n    check_int(vocab_size', "    check_int(vocab_size"),
    ], fails=SHARED_RULES),
    # the bad-input rules of exercises/__init__.py: a bool is no number, a tuple no list, a frozenset a set;
    # each mistake made in the exercise's own module (a lax copy of a shared check), so it is that exercise's alone
    Mutant(EX1, "bool_taken_for_an_int", "ex1_merge_tracing.py", [
        ("from ._checks import check_ids, check_int, check_str\n", "from ._checks import check_ids, check_str\n"
         + _LAX_CHECK_INT),
    ], fails=SHARED_RULES),
    Mutant(EX1, "tuple_taken_for_a_list", "ex1_merge_tracing.py", [
        ("from ._checks import check_ids, check_int, check_str\n", "from ._checks import check_int, check_str\n"
         + _LAX_CHECK_IDS),
    ], fails=SHARED_RULES),
    Mutant(EX2, "bool_taken_for_an_id", "ex2_special_tokens.py", [
        ("from ._checks import check_ids, check_int, check_str\n", "from ._checks import check_ids, check_str\n"
         + _LAX_CHECK_INT),
    ], fails=SHARED_RULES),
    Mutant(EX2, "frozenset_refused_as_allowed_special", "ex2_special_tokens.py", [
        ("    if not isinstance(allowed_special, (set, frozenset, list, tuple)):\n",
         "    if not isinstance(allowed_special, (set, list, tuple)):\n"),
    ], fails=SHARED_RULES,
        also=("test_allowed_special_all_none_or_subset",)),
    Mutant(EX3, "bool_taken_for_a_count", "ex3_wordpiece.py", [
        ("from ._checks import check_int, check_str\n", "from ._checks import check_str\n" + _LAX_CHECK_INT),
    ], fails=SHARED_RULES),
    Mutant(EX5, "bool_taken_for_a_number", "ex5_parity.py", [
        ("    if isinstance(value, bool) or not isinstance(value, (int, float)):\n",
         "    if not isinstance(value, (int, float)):\n"),
    ], fails=SHARED_RULES),
    Mutant(EX6, "bool_taken_for_vocab_size", "ex6_unigram.py", [
        ("from ._checks import check_int, check_str\n", "from ._checks import check_str\n" + _LAX_CHECK_INT),
    ], fails=SHARED_RULES),
]


# One-bug variants of ``from_docstrings``, written from the student release's docstrings alone
# (what a student who misread one sentence would hand in): each must lose points on its own
# exercise, on the property whose description names the rule it breaks.
_BLIND = "from_docstrings"
BLIND_VARIANTS: list[Mutant] = [
    Mutant(EX1, "blind_merge_pair_does_not_skip_the_matched_pair", "ex1_merge_tracing.py", [
        ('    need_int(new_id, "new_id")\n    return _merge(ids, pair, new_id)\n',
         '    need_int(new_id, "new_id")\n    out = []\n    for i, item in enumerate(ids):\n'
         '        out.append(new_id if tuple(ids[i:i + 2]) == pair else item)\n    return out\n'),
    ], fails="test_merge_pair_replaces_left_to_right_without_overlap", base=_BLIND,
        also=("test_merge_pair_shortens_by_number_of_replacements",)),
    Mutant(EX1, "blind_token_tree_negative_id_is_a_leaf", "ex1_merge_tracing.py", [
        ("        if 0 <= i < 256:\n", "        if i < 256:\n"),
    ], fails="test_token_tree_rejects_unknown_id", base=_BLIND),
    Mutant(EX1, "blind_word_merge_ties_go_to_the_last_pair", "ex1_merge_tracing.py", [
        ("        best = max(counts, key=counts.get)\n",
         "        best = max(reversed(list(counts)), key=counts.get)\n"),
    ], fails="test_word_merge_ties_follow_dict_order", base=_BLIND,
        also=("test_trace_word_merges_textbook_example",)),
    Mutant(EX1, "blind_new_id_true_taken_for_an_int", "ex1_merge_tracing.py", [
        ('    need_int(new_id, "new_id")\n',
         '    if not isinstance(new_id, int):\n        raise TypeError("new_id must be an int")\n'),
    ], fails=SHARED_RULES, base=_BLIND),
    Mutant(EX2, "blind_add_eos_one_taken_for_true", "ex2_special_tokens.py", [
        ("        if type(add_eos) is not bool:\n", "        if not isinstance(add_eos, int):\n"),
    ], fails=SHARED_RULES, base=_BLIND),
    Mutant(EX2, "blind_training_again_keeps_old_merges", "ex2_special_tokens.py", [
        ("        self.__init__()\n", ""),
    ], fails="test_merge_ids_259_plus_k_and_vocab_size", base=_BLIND),
    Mutant(EX2, "blind_eos_only_where_eos_is_allowed", "ex2_special_tokens.py", [
        ("        if add_eos:\n", '        if add_eos and "<eos>" in allowed:\n'),
    ], fails="test_add_eos_appends_eos_id", base=_BLIND),
    Mutant(EX2, "blind_pad_batch_pads_the_callers_rows", "ex2_special_tokens.py", [
        ("        ids = [row + [0] * (length - len(row)) for row in batch]\n",
         "        ids = batch\n"),
        ("        return ids, mask\n",
         "        for row in batch:\n            row.extend([0] * (length - len(row)))\n        return ids, mask\n"),
    ], fails="test_pad_batch_right_pads_with_attention_mask", base=_BLIND),
    Mutant(EX3, "blind_unit_counts_not_weighted_by_word_count", "ex3_wordpiece.py", [
        ("                units_seen[unit] = units_seen.get(unit, 0) + n\n",
         "                units_seen[unit] = units_seen.get(unit, 0) + 1\n"),
    ], fails="test_train_wordpiece_picks_highest_score_like_reference", base=_BLIND,
        also=("test_unit_counts_include_one_unit_words",
              "test_wordpiece_ties_break_by_pair_count_then_first_occurrence")),
    Mutant(EX3, "blind_max_chars_counts_bytes", "ex3_wordpiece.py", [
        ("    if len(word) > max_chars:\n", '    if len(word.encode("utf-8")) > max_chars:\n'),
    ], fails="test_unknown_and_too_long_words_become_one_unk", base=_BLIND),
    Mutant(EX3, "blind_mean_length_strips_every_leading_hash", "ex3_wordpiece.py", [
        ('    return sum(len(t.removeprefix("##")) for t in tokens)',
         '    return sum(len(t.lstrip("#")) for t in tokens)'),
    ], fails="test_mean_length_per_distinct_token_ignores_continuation_prefix", base=_BLIND),
    Mutant(EX3, "blind_vocab_tuple_taken_for_a_list", "ex3_wordpiece.py", [
        ('    known = set(need_list(vocab, "vocab", str))\n',
         '    if not isinstance(vocab, (list, tuple)) or any(type(v) is not str for v in vocab):\n'
         '        raise TypeError("vocab must be a list of str")\n    known = set(vocab)\n'),
    ], fails=SHARED_RULES, base=_BLIND),
    Mutant(EX4, "blind_premium_languages_sorted", "ex4_multilingual.py", [
        ("    return {lang: n / tokens[baseline] for lang, n in tokens.items()}\n",
         "    return {lang: n / tokens[baseline] for lang, n in sorted(tokens.items())}\n"),
    ], fails="test_baseline_premium_is_exactly_one_and_languages_keep_order", base=_BLIND),
    Mutant(EX4, "blind_column_names_pipes_unescaped", "ex4_multilingual.py", [
        ('    lines = ["| " + " | ".join(_cell(c) for c in columns) + " |",\n',
         '    lines = ["| " + " | ".join(str(c) for c in columns) + " |",\n'),
    ], fails="test_render_table_escapes_pipes", base=_BLIND),
    Mutant(EX4, "blind_bytes_column_counts_characters", "ex4_multilingual.py", [
        ('                         "bytes": sum(len(s.encode("utf-8")) for s in sentences),\n',
         '                         "bytes": chars,\n'),
    ], fails="test_benchmark_rows_sorted_by_encoder_then_language", base=_BLIND,
        also=("test_benchmark_on_course_parallel_data_with_cl100k",)),
    Mutant(EX5, "blind_ratio_curve_per_character", "ex5_parity.py", [
        ("    size = len(ids)\n", "    size = len(text)\n"),
    ], fails="test_ratio_curve_matches_reference", base=_BLIND,
        also=("test_ratio_curve_starts_at_one_and_never_increases",
              "test_ratio_curve_stops_early_only_when_no_pair_left",
              "test_ratio_curve_ties_break_to_leftmost_first_occurrence")),
    Mutant(EX5, "blind_tolerance_of_one_accepted", "ex5_parity.py", [
        ('    if not 0 < need_number(tolerance, "tolerance") < 1:\n',
         '    if not 0 < need_number(tolerance, "tolerance") <= 1:\n'),
    ], fails="test_parity_rejects_bad_tolerance_and_target", base=_BLIND),
    Mutant(EX6, "blind_removal_loss_reorders_the_callers_logprobs", "ex6_unigram.py", [
        ("    for piece in logprobs:\n        if len(piece) > 1:\n"
         "            without = _likelihood(word_counts, {p: v for p, v in logprobs.items() if p != piece})\n",
         "    for piece in list(logprobs):\n        if len(piece) > 1:\n"
         "            value = logprobs.pop(piece)  # put back below\n"
         "            without = _likelihood(word_counts, logprobs)\n            logprobs[piece] = value\n"),
    ], fails="test_removal_loss_is_the_fall_of_the_viterbi_likelihood", base=_BLIND,
        also=("test_train_unigram_prunes_smallest_losses_like_reference",)),
    Mutant(EX6, "blind_viterbi_tries_starts_from_the_right", "ex6_unigram.py", [
        ("        for start in range(end):\n            piece = text[start:end]\n",
         "        for start in reversed(range(end)):\n            piece = text[start:end]\n"),
    ], fails="test_viterbi_ties_go_to_the_longest_last_piece", base=_BLIND),
    Mutant(EX6, "blind_seed_ties_in_first_appearance_order", "ex6_unigram.py", [
        ("    pieces.sort(key=lambda c: (-c[0], c[1]))\n", "    pieces.sort(key=lambda c: -c[0])\n"),
    ], fails="test_train_unigram_prunes_smallest_losses_like_reference", base=_BLIND),
]

MUTANTS += BLIND_VARIANTS

# --------------------------------------------------------------------------- building submissions

_ABSOLUTE_IMPORT = re.compile(r"^from solutions(\.| import )", re.MULTILINE)


def _relative_imports(source: str) -> str:
    """``from solutions import x`` / ``from solutions.y import z`` as relative imports, so
    the reference works as the package ``exercises`` (a no-op once it uses relative ones)."""
    return _ABSOLUTE_IMPORT.sub(lambda m: "from ." if m.group(1) == "." else "from . import ", source)


def _readable(path: Path) -> None:
    """chmod a+rX: the sandbox runs student code as an unprivileged user."""
    for item in [path, *path.rglob("*")]:
        mode = item.stat().st_mode
        extra = stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH
        if item.is_dir():
            extra |= stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH
        item.chmod(mode | extra)


def _finish(submission: Path) -> Path:
    package = submission / "exercises"
    for provided in ["__init__.py", *(p.name for p in sorted(STUBS.glob("lesson*.py")))]:
        if not (package / provided).exists():
            shutil.copy2(STUBS / provided, package / provided)
    shutil.rmtree(package / "__pycache__", ignore_errors=True)
    _readable(submission)
    return submission


def _copy_solutions(submission: Path) -> Path:
    package = submission / "exercises"
    shutil.copytree(SOLUTIONS, package, ignore=shutil.ignore_patterns("__pycache__"))
    for module in package.glob("*.py"):
        module.write_text(_relative_imports(module.read_text(encoding="utf-8")), encoding="utf-8")
    return package


def build_reference(submission: Path) -> Path:
    """The reference solutions as a submission."""
    _copy_solutions(submission)
    return _finish(submission)


def build_stubs(submission: Path) -> Path:
    """The exercise stubs as they are."""
    shutil.copytree(STUBS, submission / "exercises", ignore=shutil.ignore_patterns("__pycache__"))
    return _finish(submission)


def build_mutant(submission: Path, mutant: Mutant) -> Path:
    """The reference (or the alternative ``mutant.base``) with ``mutant``'s replacements; each
    ``old`` text must occur exactly once."""
    if mutant.base is None:
        package, where = _copy_solutions(submission), f"solutions/{mutant.file}"
    else:
        package = _copy_alternative(submission, mutant.base)
        where = f"tests/course/alternatives/{mutant.base}/exercises/{mutant.file}"
    target = package / mutant.file
    source = target.read_text(encoding="utf-8")
    for old, new in mutant.replace:
        found = source.count(old)
        if found != 1:
            raise AssertionError(f"mutant {mutant.name}: {old!r} occurs {found} times in {where}, "
                                 "not once (the code it mutates changed: update the mutation)")
        source = source.replace(old, new)
    target.write_text(source, encoding="utf-8")
    return _finish(submission)


def _copy_alternative(submission: Path, name: str) -> Path:
    package = submission / "exercises"
    shutil.copytree(ALTERNATIVES_DIR / name / "exercises", package, ignore=shutil.ignore_patterns("__pycache__"))
    return package


def build_alternative(submission: Path, name: str) -> Path:
    """A correct alternative implementation from ``tests/course/alternatives/<name>``."""
    _copy_alternative(submission, name)
    return _finish(submission)


# --------------------------------------------------------------------------- grading


def grade(submission: str, exercises: list[str] | None = None) -> tuple[list[dict], float]:
    """Grade ``submission`` on ``exercises`` (all when None) with the course's suites; returns
    the results as plain dicts and the seconds taken. Meant to run in a worker process."""
    from autograder.config import load_course
    from autograder.engine.run import run_suites

    course = load_course(ROOT / "course.yaml")
    if exercises is not None:
        # Grade only the chosen exercises with a course restricted to them (run_suites'
        # ``exercises=`` still checks the points of the suites it did not collect).
        course = course.model_copy(update={"exercises": [e for e in course.exercises if e.module in exercises]})
    results, seconds = run_suites(course, Path(submission))
    return [dataclasses.asdict(result) for result in results], seconds

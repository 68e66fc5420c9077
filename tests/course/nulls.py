"""A catalog of "null" submissions: answers with no tokenizer logic at all, built the way
``tests/course/catalog.py`` builds its submissions; ``tests/course/test_nulls.py`` grades every one.

A null submission answers every public function and method of every exercise with one kind
of degenerate value:

- ``empty``: an empty value of the right type (``[]``, ``{}``, ``""``, ``0``, ``0.0``);
- ``constant``: one plausible constant (``1.0``, ``259``, ``[0]``, ...);
- ``echo``: its first argument (or something built from it) where the types allow;
- ``examples``: the docstrings' worked examples answered right, empty everywhere else;
- ``fake``: self-consistent fakes: an ``encode`` that ``decode`` inverts but that never
  merges (ids are the raw bytes), premiums of ``1.0`` everywhere, a decreasing ratio curve
  made up from the text's length, and so on. A property that judges one function on another's
  answer (``merges_for_parity`` on the submission's own ``ratio_curve``, ``add_eos`` on its own
  encoding: one bug, one reason) would rightly pass a fake that gets that one rule right, so
  the fakes do not: their ``merges_for_parity`` is the last merge tried and their ``encode``
  leaves ``<eos>`` out;
- ``every_error``: no answer at all: every function and method raises one exception class
  that derives from ``ValueError``, ``TypeError``, ``KeyError`` and ``IndexError``, with a
  message naming every parameter, whatever the arguments.

Each null but ``every_error`` still checks its arguments exactly like the reference: the
submission carries a private copy of ``solutions/`` (``exercises/_ref/``) and every null
function first calls the reference with the same arguments, letting its ``TypeError`` /
``ValueError`` through and throwing its answer away. So the points for argument checking are
earned honestly and everything else must be lost; ``every_error`` checks nothing, so it must
earn nothing, the points for argument checking included. The signatures are the stubs' (``exercises/``), read with
``ast``; the worked examples' answers are the reference's, computed on exactly those inputs.
"""

from __future__ import annotations

import ast
import shutil
import textwrap
from pathlib import Path

from tests.course.catalog import SOLUTIONS, STUBS, _finish, _relative_imports

EX1, EX2, EX3, EX4, EX5 = "ex1_merge_tracing", "ex2_special_tokens", "ex3_wordpiece", "ex4_multilingual", "ex5_parity"
EX6 = "ex6_unigram"
EXERCISES = [EX1, EX2, EX3, EX4, EX5, EX6]
KINDS = ["empty", "constant", "echo", "examples", "fake", "every_error"]
EVERY_ERROR = "every_error"

# The one exception class of the ``every_error`` null: every built-in error a bad input raises.
_EVERY_ERROR_CLASS = [
    "class _EveryError(ValueError, TypeError, KeyError, IndexError):",
    '    """Whatever error a property expects, this is one."""',
]

# Names every module re-exports from the reference (given constants and types, not graded).
EXPORTS = {
    EX1: ["MergeStep"],
    EX2: ["SPECIAL_TOKENS", "PRETOKEN_PATTERN"],
    EX3: ["WORD_PATTERN"],
    EX4: [],
    EX5: [],
    EX6: ["WORD_PATTERN"],
}

# The answer of each public function (``name``) or method (``Class.name``): a Python
# expression over the arguments. ``empty`` is the fallback of every other kind. A class's
# ``__init__`` needs no entry; a method returning the instance (``train``) returns ``self``.
EMPTY = {
    EX1: {
        "get_pair_counts": "{}",
        "merge_pair": "[]",
        "trace_merges": "[]",
        "token_tree": "0",
        "render_trace": '""',
        "trace_word_merges": "[]",
    },
    EX2: {
        "pretokenize": "[]",
        "SpecialTokenizer.train": "self",
        "SpecialTokenizer.encode": "[]",
        "SpecialTokenizer.decode": '""',
        "SpecialTokenizer.vocab_size": "0",
        "SpecialTokenizer.token_to_id": "0",
        "SpecialTokenizer.id_to_token": '""',
        "SpecialTokenizer.pad_batch": "([], [])",
    },
    EX3: {
        "wordpiece_score": "0.0",
        "word_units": "[]",
        "train_wordpiece": "[]",
        "train_bpe_pieces": "[]",
        "tokenize_wordpiece": "[]",
        "compare_vocabularies": "{}",
    },
    EX4: {
        "tokens_per_char": "0.0",
        "tokenization_premium": "{}",
        "benchmark": "[]",
        "render_table": '""',
    },
    EX5: {
        "compression_ratio": "0.0",
        "ratio_curve": "[]",
        "merges_for_parity": "0",
    },
    EX6: {
        "viterbi_segment": "([], 0.0)",
        "marginal_logprob": "0.0",
        "expected_counts": "{}",
        "em_step": "{}",
        "removal_loss": "{}",
        "train_unigram": "{}",
    },
}

CONSTANT = {
    EX1: {
        "get_pair_counts": "{(0, 0): 1}",
        "merge_pair": "[256]",
        "trace_merges": "[MergeStep(0, (116, 104), 256, 3, b'th', 11)]",
        "token_tree": "((116, 104), 101)",
        "render_trace": "\"0: 't' + 'h' -> 'th'  count=3  length=11\"",
        "trace_word_merges": "[(('w', 'e'), 13), (('we', 's'), 8), (('wes', 't'), 8)]",
    },
    EX2: {
        "pretokenize": "['a']",
        "SpecialTokenizer.train": "self",
        "SpecialTokenizer.encode": "[1]",
        "SpecialTokenizer.decode": '"a"',
        "SpecialTokenizer.vocab_size": "259",
        "SpecialTokenizer.token_to_id": "2",
        "SpecialTokenizer.id_to_token": '"<unk>"',
        "SpecialTokenizer.pad_batch": "([[0]], [[1]])",
    },
    EX3: {
        "wordpiece_score": "0.1",
        "word_units": "['h', '##u', '##g']",
        "train_wordpiece": "['a']",
        "train_bpe_pieces": "['a']",
        "tokenize_wordpiece": "['[UNK]']",
        "compare_vocabularies": "{'shared': 0, 'only_a': [], 'only_b': [], 'jaccard': 0.0, "
                                "'mean_len_a': 0.0, 'mean_len_b': 0.0}",
    },
    EX4: {
        "tokens_per_char": "1.0",
        "tokenization_premium": "{'en': 1.0}",
        "benchmark": "[{'encoder': 'a', 'language': 'en', 'tokens': 1, 'chars': 1, 'bytes': 1, "
                     "'tokens_per_char': 1.0, 'premium': 1.0}]",
        "render_table": '"| a |\\n| --- |"',
    },
    EX5: {
        "compression_ratio": "1.0",
        "ratio_curve": "[1.0]",
        "merges_for_parity": "1",
    },
    EX6: {
        "viterbi_segment": "(['a'], -1.0)",
        "marginal_logprob": "-1.0",
        "expected_counts": "{p: 1.0 for p in logprobs}",
        "em_step": "{p: -1.0 for p in logprobs}",
        "removal_loss": "{p: 1.0 for p in logprobs if len(p) > 1}",
        "train_unigram": "{'a': 0.0}",
    },
}

ECHO = {
    EX1: {
        "get_pair_counts": "{(i, i): 1 for i in ids}",
        "merge_pair": "list(ids)",
        "trace_merges": "[]",
        "token_tree": "token_id",
        "render_trace": '"\\n".join(str(step) for step in steps)',
        "trace_word_merges": "[((w, w), n) for w, n in word_counts.items()][:num_merges]",
    },
    EX2: {
        "pretokenize": "[text] if text else []",
        "SpecialTokenizer.train": "self",
        "SpecialTokenizer.encode": "[len(text)]",
        "SpecialTokenizer.decode": '"".join(map(str, ids))',
        "SpecialTokenizer.vocab_size": "259",
        "SpecialTokenizer.token_to_id": "len(piece)",
        "SpecialTokenizer.id_to_token": "str(i)",
        "SpecialTokenizer.pad_batch": "([list(row) for row in batch], [[1] * len(row) for row in batch])",
    },
    EX3: {
        "wordpiece_score": "float(pair_count)",
        "word_units": "[word] if word else []",
        "train_wordpiece": "text.split()",
        "train_bpe_pieces": "text.split()",
        "tokenize_wordpiece": "text.split()",
        "compare_vocabularies": "{'shared': 0, 'only_a': sorted(set(a)), 'only_b': sorted(set(b)), 'jaccard': 0.0, "
                                "'mean_len_a': 0.0, 'mean_len_b': 0.0}",
    },
    EX4: {
        "tokens_per_char": "float(len(texts))",
        "tokenization_premium": "{lang: 1.0 for lang in parallel}",
        "benchmark": "[]",
        "render_table": '"\\n".join(str(row) for row in rows)',
    },
    EX5: {
        "compression_ratio": "float(len(text))",
        "ratio_curve": "[1.0] * (max_merges + 1)",
        "merges_for_parity": "max_merges",
    },
    EX6: {
        "viterbi_segment": "([text] if text else [], 0.0)",
        "marginal_logprob": "-float(len(text))",
        "expected_counts": "{p: float(word_counts.get(p, 0)) for p in logprobs}",
        "em_step": "dict(logprobs)",
        "removal_loss": "{p: -v for p, v in logprobs.items() if len(p) > 1}",
        "train_unigram": "{c: 0.0 for c in text if not c.isspace()}",
    },
}

# The worked examples hard-coded: the right answer whenever the arguments look like a
# docstring's example (mostly the first argument alone is compared, so the example's text
# with any other number of merges is answered right too), the empty answer otherwise.
# ``_EX`` is the reference's call with the same arguments.
_UTF8 = "(lambda: encode('\\u00e9') == [195, 169])()"
EXAMPLES = {
    EX1: {
        "get_pair_counts": "_EX() if list(ids) == [5, 5, 5, 7] else {}",
        "merge_pair": "_EX() if (list(ids), tuple(pair)) in ([[1, 2, 3, 1, 2], (1, 2)], [[5, 5, 5], (5, 5)]) else []",
        "trace_merges": "_EX() if text == 'the then there' else []",
        "token_tree": "_EX() if token_id in (257, 104) and len(steps) == 2 else 0",
        "render_trace": "_EX() if len(steps) == 2 and tuple(steps[0])[4] == b'th' else ''",
        "trace_word_merges": "_EX() if word_counts == {'lower': 5, 'lowest': 2, 'newest': 6} else []",
    },
    EX2: {
        "pretokenize": "_EX() if text == 'Hi  there,\\n  you!' else []",
        "SpecialTokenizer.train": "self",
        "SpecialTokenizer.encode": "_EX() if self._example or text == 'low' else []",
        "SpecialTokenizer.decode": "_EX() if self._example else ''",
        "SpecialTokenizer.vocab_size": "_EX() if self._example else 259",
        "SpecialTokenizer.token_to_id": "_EX() if self._example else 0",
        "SpecialTokenizer.id_to_token": "_EX() if self._example else ''",
        "SpecialTokenizer.pad_batch": "_EX() if batch in ([[5, 6], [7]], [[260, 1], [7]]) else ([], [])",
    },
    EX3: {
        "wordpiece_score": "_EX() if (pair_count, left_count, right_count) == (2, 4, 5) else 0.0",
        "word_units": "_EX() if word == 'hug' else []",
        "train_wordpiece": "_EX() if text == 'hug hugs pug pun bun' else []",
        "train_bpe_pieces": "_EX() if text == 'hug hugs pug pun bun' else []",
        "tokenize_wordpiece": "_EX() if (vocab, text) == (['h', '##u', '##g', 'hu', '##gs'], 'hugs hug bug') else []",
        "compare_vocabularies": "_EX() if (a, b) == (['a', '##b', 'ab'], ['ab', 'c']) else {}",
    },
    EX4: {
        "tokens_per_char": f"_EX() if texts == ['h\\u00e9llo'] and {_UTF8} else 0.0",
        "tokenization_premium": f"_EX() if set(parallel) == {{'en', 'ru'}} and len(parallel['en']) <= 2 "
                                f"and {_UTF8} else {{}}",
        "benchmark": "_EX() if sorted(encoders) == ['chars', 'utf8'] and set(parallel) == {'en', 'ru'} else []",
        "render_table": "_EX() if [r.get('encoder') for r in rows] == ['utf8', 'utf8'] else ''",
    },
    EX5: {
        "compression_ratio": "_EX() if text == 'h\\u00e9llo' else 0.0",
        "ratio_curve": "_EX() if text in ('aaaa', 'the then there') else []",
        "merges_for_parity": "_EX() if text == 'aaaa' else 0",
    },
    EX6: {
        "viterbi_segment": "_EX() if logprobs == {'a': -2.0, 'b': -2.0, 'ab': -4.0, 'ba': -3.0} else ([], 0.0)",
        "marginal_logprob": "_EX() if text == 'ab' else 0.0",
        "expected_counts": "_EX() if word_counts == {'ab': 3} else {}",
        "em_step": "_EX() if word_counts == {'ab': 3} else {}",
        "removal_loss": "_EX() if word_counts == {'ab': 1, 'aba': 1} else {}",
        "train_unigram": "_EX() if text == 'hug hugs pug pun bun hug' else {}",
    },
}

FAKE = {
    EX1: {  # never merges: nothing to count, nothing to merge, every id a leaf
        "get_pair_counts": "{}",
        "merge_pair": "list(ids)",
        "trace_merges": "[]",
        "token_tree": "token_id",
        "render_trace": "'\\n'.join(f'{s[0]}: {s[1][0]} + {s[1][1]} -> {s[2]}  count={s[3]}  length={s[5]}' "
                        "for s in steps)",
        "trace_word_merges": "[]",
    },
    EX2: {  # ids are the raw bytes and decode inverts them; nothing is ever merged
        "pretokenize": "text.split(' ')",
        "SpecialTokenizer.train": "self",
        "SpecialTokenizer.encode": "list(text.encode('utf-8'))",
        "SpecialTokenizer.decode": "bytes(ids).decode('utf-8', errors='replace')",
        "SpecialTokenizer.vocab_size": "256",
        "SpecialTokenizer.token_to_id": "piece.encode('utf-8')[0] if len(piece.encode('utf-8')) == 1 else 2",
        "SpecialTokenizer.id_to_token": "bytes([i]).decode('utf-8', errors='replace')",
        "SpecialTokenizer.pad_batch": "([list(row) for row in batch], [[1] * len(row) for row in batch])",
    },
    EX3: {  # whole words as units, nothing merged
        "wordpiece_score": "pair_count / (left_count + right_count)",
        "word_units": "[word] if word else []",
        "train_wordpiece": "sorted(set(text.split()))",
        "train_bpe_pieces": "sorted(set(text.split()))",
        "tokenize_wordpiece": "[w if w in vocab else unk for w in text.split()]",
        "compare_vocabularies": "{'shared': len(set(a) & set(b)), 'only_a': sorted(set(a) - set(b)), "
                                "'only_b': sorted(set(b) - set(a)), 'jaccard': 1.0 if set(a) == set(b) else 0.5, "
                                "'mean_len_a': 1.0, 'mean_len_b': 1.0}",
    },
    EX4: {  # every language costs as much as the baseline
        "tokens_per_char": "1.0",
        "tokenization_premium": "{lang: 1.0 for lang in parallel}",
        "benchmark": "[{'encoder': e, 'language': l, 'tokens': sum(map(len, parallel[l])), "
                     "'chars': sum(map(len, parallel[l])), "
                     "'bytes': sum(len(t.encode('utf-8')) for t in parallel[l]), "
                     "'tokens_per_char': 1.0, 'premium': 1.0} "
                     "for e in sorted(encoders) for l in sorted(parallel)]",
        "render_table": "'\\n'.join(['| ' + ' | '.join(rows[0]) + ' |', "
                        "'| ' + ' | '.join('---' for _ in rows[0]) + ' |'] + "
                        "['| ' + ' | '.join(f'{v:.3f}' if isinstance(v, float) else str(v) for v in r.values()) + ' |' "
                        "for r in rows])",
    },
    EX5: {  # a plausible curve: one token fewer with every merge, until one token is left
        "compression_ratio": "1.0",
        "ratio_curve": "[(n - k) / n for n in [len(text.encode('utf-8'))] for k in range(min(max_merges, n - 1) + 1)]",
        "merges_for_parity": "min(max_merges, len(text.encode('utf-8')) - 1)",
    },
    EX6: {  # characters only: each word spelled out, every other piece never used
        "viterbi_segment": "(list(text), sum(logprobs[c] for c in text))",
        "marginal_logprob": "sum(logprobs[c] for c in text)",
        "expected_counts": "{p: float(sum(n * w.count(p) for w, n in word_counts.items())) if len(p) == 1 else 0.0 "
                           "for p in logprobs}",
        "em_step": "{p: -__import__('math').log(len(logprobs)) for p in logprobs}",
        "removal_loss": "{p: 0.0 for p in logprobs if len(p) > 1}",
        "train_unigram": "{c: __import__('math').log(text.count(c) / len(''.join(text.split()))) "
                         "for c in dict.fromkeys(''.join(text.split()))}",
    },
}

BODIES = {"empty": EMPTY, "constant": CONSTANT, "echo": ECHO, "examples": EXAMPLES, "fake": FAKE}


def _public(module: ast.Module):
    """``(qualified name, FunctionDef, class name or None)`` of every public function and
    method of a stub, ``__init__`` included."""
    for node in module.body:
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
            yield node.name, node, None
        elif isinstance(node, ast.ClassDef) and node.name not in ("MergeStep",):
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and (item.name == "__init__" or not item.name.startswith("_")):
                    yield f"{node.name}.{item.name}", item, node.name


def _call_args(fn: ast.FunctionDef) -> str:
    """The arguments of ``fn`` passed on as they came (positional, then keyword-only)."""
    positional = [a.arg for a in fn.args.args if a.arg != "self"]
    keyword = [f"{a.arg}={a.arg}" for a in fn.args.kwonlyargs]
    return ", ".join(positional + keyword)


def null_source(exercise: str, kind: str) -> str:
    """The source of ``exercise``'s module in the null submission of ``kind``."""
    stub = ast.parse((STUBS / f"{exercise}.py").read_text(encoding="utf-8"))
    answers = {**EMPTY[exercise], **BODIES.get(kind, {}).get(exercise, {})}
    checks = "no argument is checked" if kind == EVERY_ERROR else "the reference checks the arguments"
    lines = [f'"""Null submission ({kind}) of {exercise}: {checks}, no logic answers."""', "",
             "from __future__ import annotations", "", f"from ._ref import {exercise} as _ref"]
    if EXPORTS[exercise]:
        lines.append(f"from ._ref.{exercise} import {', '.join(EXPORTS[exercise])}  # noqa: F401")
    if kind == EVERY_ERROR:
        lines += ["", "", *_EVERY_ERROR_CLASS]
    classes: dict[str, list[str]] = {}
    for name, fn, cls in _public(stub):
        signature = ast.unparse(fn.args)
        args = _call_args(fn)
        decorators = [f"@{ast.unparse(d)}" for d in fn.decorator_list]
        is_property = "@property" in decorators
        if cls is None:
            call = f"_ref.{fn.name}({args})"
        elif fn.name == "__init__":
            call = f"_ref.{cls}()"
        else:
            call = f"self._r.{fn.name}" if is_property else f"self._r.{fn.name}({args})"
        if fn.name == "__init__":
            body = ["self._r = " + call + "  # the reference, for its argument checks only", "self._example = False"]
        elif kind == EVERY_ERROR and not is_property and answers[name] != "self":
            named = [a.arg for a in (*fn.args.args, *fn.args.kwonlyargs) if a.arg != "self"]
            body = [f"raise _EveryError({', '.join(named)!r})"]
        elif kind == EVERY_ERROR:  # a tokenizer's train and vocab_size answer, so its other methods are reached
            body = [f"return {CONSTANT[exercise][name]}"]
        else:
            body = [f"_EX = lambda: {call}  # noqa: E731",
                    "_EX()  # the reference's argument checks; its answer is dropped"]
            if fn.name == "train":
                body.append("self._example = (text, num_merges) == ('low lower lowest<eos>', 3)")
            body.append(f"return {answers[name]}")
        code = decorators + [f"def {fn.name}({signature}):"] + ["    " + line for line in body]
        if cls is None:
            lines += ["", ""] + code
        else:
            classes.setdefault(cls, []).extend([""] + ["    " + line for line in code])
    for cls, members in classes.items():
        lines += ["", "", f"class {cls}:"] + members[1:]
    return "\n".join(lines) + "\n"


def build_null(submission: Path, kind: str) -> Path:
    """The null submission of ``kind``: every exercise module answers with that kind of
    degenerate value, after the reference (a private copy in ``exercises/_ref/``) has checked
    the arguments."""
    package = submission / "exercises"
    package.mkdir(parents=True)
    private = package / "_ref"
    shutil.copytree(SOLUTIONS, private, ignore=shutil.ignore_patterns("__pycache__"))
    for module in private.glob("*.py"):
        module.write_text(_relative_imports(module.read_text(encoding="utf-8")), encoding="utf-8")
    for exercise in EXERCISES:
        source = null_source(exercise, kind)
        compile(source, f"{kind}/{exercise}.py", "exec")
        (package / f"{exercise}.py").write_text(source, encoding="utf-8")
    return _finish(submission)


def show(kind: str, exercise: str) -> None:
    """Print one null module (``python -m tests.course.nulls KIND EXERCISE``)."""
    print(textwrap.dedent(null_source(exercise, kind)))


if __name__ == "__main__":
    import sys

    show(*sys.argv[1:3])

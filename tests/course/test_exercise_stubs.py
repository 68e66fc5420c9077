"""The exercise stubs: the spec's graded names and signatures, raising, documented."""

import doctest
import importlib
import inspect

import pytest

from exercises.ex1_merge_tracing import MergeStep
from exercises.ex2_special_tokens import SpecialTokenizer

MODULES = [
    "exercises.ex1_merge_tracing",
    "exercises.ex2_special_tokens",
    "exercises.ex3_wordpiece",
    "exercises.ex4_multilingual",
    "exercises.ex5_parity",
    "exercises.ex6_unigram",
]

# Every graded name, with its parameters as "name" or "name=default" (the spec's signatures).
SIGNATURES = {
    "exercises.ex1_merge_tracing": {
        "get_pair_counts": "ids",
        "merge_pair": "ids, pair, new_id",
        "trace_merges": "text, num_merges",
        "token_tree": "steps, token_id",
        "render_trace": "steps",
        "trace_word_merges": "word_counts, num_merges",
    },
    "exercises.ex2_special_tokens": {
        "pretokenize": "text",
        "SpecialTokenizer.__init__": "self",
        "SpecialTokenizer.train": "self, text, num_merges",
        "SpecialTokenizer.encode": "self, text, allowed_special='all', add_eos=False",
        "SpecialTokenizer.decode": "self, ids",
        "SpecialTokenizer.token_to_id": "self, piece",
        "SpecialTokenizer.id_to_token": "self, i",
        "SpecialTokenizer.pad_batch": "self, batch, length=None",
    },
    "exercises.ex3_wordpiece": {
        "wordpiece_score": "pair_count, left_count, right_count",
        "word_units": "word",
        "train_wordpiece": "text, num_merges",
        "train_bpe_pieces": "text, num_merges",
        "tokenize_wordpiece": "vocab, text, unk='[UNK]', max_chars=100",
        "compare_vocabularies": "a, b",
    },
    "exercises.ex4_multilingual": {
        "tokens_per_char": "encode, texts",
        "tokenization_premium": "encode, parallel, baseline='en'",
        "benchmark": "encoders, parallel, baseline='en'",
        "render_table": "rows",
    },
    "exercises.ex5_parity": {
        "compression_ratio": "encode, text",
        "ratio_curve": "text, max_merges",
        "merges_for_parity": "text, target_ratio, tolerance=0.1, max_merges=20000",
    },
    "exercises.ex6_unigram": {
        "viterbi_segment": "text, logprobs",
        "marginal_logprob": "text, logprobs",
        "expected_counts": "word_counts, logprobs",
        "em_step": "word_counts, logprobs",
        "removal_loss": "word_counts, logprobs",
        "train_unigram": "text, vocab_size, max_piece_len=16, seed_size=10000, em_iterations=2, shrink_factor=0.75",
    },
}


def utf8(text):
    return list(text.encode("utf-8"))


STEPS = [MergeStep(0, (116, 104), 256, 3, b"th", 11)]
PARALLEL = {"en": ["cat"], "ru": ["кот"]}
ROW = {"encoder": "utf8", "language": "en", "tokens": 3, "chars": 3, "bytes": 3,
       "tokens_per_char": 1.0, "premium": 1.0}

# A valid call of every graded function: (module, name, args).
CALLS = [
    ("exercises.ex1_merge_tracing", "get_pair_counts", ([5, 5, 5],)),
    ("exercises.ex1_merge_tracing", "merge_pair", ([5, 5, 5], (5, 5), 256)),
    ("exercises.ex1_merge_tracing", "trace_merges", ("the then there", 2)),
    ("exercises.ex1_merge_tracing", "token_tree", (STEPS, 256)),
    ("exercises.ex1_merge_tracing", "render_trace", (STEPS,)),
    ("exercises.ex1_merge_tracing", "trace_word_merges", ({"lower": 5, "newest": 6}, 2)),
    ("exercises.ex2_special_tokens", "pretokenize", ("Hi  there",)),
    ("exercises.ex3_wordpiece", "wordpiece_score", (2, 4, 5)),
    ("exercises.ex3_wordpiece", "word_units", ("hug",)),
    ("exercises.ex3_wordpiece", "train_wordpiece", ("hug hugs pug", 3)),
    ("exercises.ex3_wordpiece", "train_bpe_pieces", ("hug hugs pug", 3)),
    ("exercises.ex3_wordpiece", "tokenize_wordpiece", (["h", "##u", "##g"], "hug")),
    ("exercises.ex3_wordpiece", "compare_vocabularies", (["a", "##b"], ["a"])),
    ("exercises.ex4_multilingual", "tokens_per_char", (utf8, ["héllo"])),
    ("exercises.ex4_multilingual", "tokenization_premium", (utf8, PARALLEL)),
    ("exercises.ex4_multilingual", "benchmark", ({"utf8": utf8}, PARALLEL)),
    ("exercises.ex4_multilingual", "render_table", ([ROW],)),
    ("exercises.ex5_parity", "compression_ratio", (utf8, "héllo")),
    ("exercises.ex5_parity", "ratio_curve", ("aaaa", 5)),
    ("exercises.ex5_parity", "merges_for_parity", ("aaaa", 0.5)),
    ("exercises.ex6_unigram", "viterbi_segment", ("ab", {"a": -1.0, "b": -1.0})),
    ("exercises.ex6_unigram", "marginal_logprob", ("ab", {"a": -1.0, "b": -1.0})),
    ("exercises.ex6_unigram", "expected_counts", ({"ab": 1}, {"a": -1.0, "b": -1.0})),
    ("exercises.ex6_unigram", "em_step", ({"ab": 1}, {"a": -1.0, "b": -1.0})),
    ("exercises.ex6_unigram", "removal_loss", ({"ab": 1}, {"a": -1.0, "b": -1.0, "ab": -1.0})),
    ("exercises.ex6_unigram", "train_unigram", ("hug hugs", 5)),
]

# Valid calls of SpecialTokenizer's methods, on an instance made without __init__.
METHOD_CALLS = [
    ("train", ("low lower<eos>", 3)),
    ("encode", ("low<eos>",)),
    ("decode", ([111, 114, 1],)),
    ("token_to_id", ("<eos>",)),
    ("id_to_token", (1,)),
    ("pad_batch", ([[5, 6], [7]],)),
]


def resolve(module_name, dotted):
    obj = importlib.import_module(module_name)
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


def described(func):
    """The signature written like the table: parameter names with their defaults."""
    params = inspect.signature(func).parameters.values()
    return ", ".join(
        p.name if p.default is p.empty else f"{p.name}={p.default!r}" for p in params
    )


GRADED = [(module, name) for module, names in SIGNATURES.items() for name in names]


@pytest.mark.parametrize("module, name", GRADED)
def test_signature_matches_spec(module, name):
    assert described(resolve(module, name)) == SIGNATURES[module][name]


def test_every_graded_function_has_a_call():
    called = {(module, name) for module, name, _ in CALLS}
    methods = [name for name, _ in METHOD_CALLS] + ["__init__"]
    called |= {("exercises.ex2_special_tokens", f"SpecialTokenizer.{m}") for m in methods}
    assert called == set(GRADED)


@pytest.mark.parametrize("module, name, args", CALLS)
def test_function_stub_raises(module, name, args):
    with pytest.raises(NotImplementedError, match=f"{name} is not implemented yet"):
        resolve(module, name)(*args)


def test_constructor_stub_raises():
    with pytest.raises(NotImplementedError, match="__init__ is not implemented yet"):
        SpecialTokenizer()


@pytest.mark.parametrize("method, args", METHOD_CALLS)
def test_method_stub_raises(method, args):
    tokenizer = object.__new__(SpecialTokenizer)  # __init__ raises too
    with pytest.raises(NotImplementedError, match=f"{method} is not implemented yet"):
        getattr(tokenizer, method)(*args)


def test_vocab_size_property_stub_raises():
    assert isinstance(inspect.getattr_static(SpecialTokenizer, "vocab_size"), property)
    tokenizer = object.__new__(SpecialTokenizer)
    with pytest.raises(NotImplementedError, match="vocab_size is not implemented yet"):
        _ = tokenizer.vocab_size


def test_given_names():
    from exercises.ex2_special_tokens import PRETOKEN_PATTERN, SPECIAL_TOKENS
    from exercises.ex3_wordpiece import WORD_PATTERN

    assert MergeStep._fields == ("rank", "pair", "new_id", "count", "token", "length")
    assert SPECIAL_TOKENS == {"<pad>": 0, "<eos>": 1, "<unk>": 2}
    assert PRETOKEN_PATTERN == r" ?\S+|\s+(?!\S)|\s+"
    assert WORD_PATTERN == r"\w+|[^\w\s]"


@pytest.mark.parametrize("module", MODULES)
def test_module_docstring_explains_the_exercise(module):
    doc = importlib.import_module(module).__doc__
    for section in ("Task", "Rules", "Example::", "Hint", "ValueError", "TypeError"):
        assert section in doc, f"{module} docstring lacks {section!r}"


@pytest.mark.parametrize("module, name", GRADED)
def test_graded_docstring_mentions_every_parameter(module, name):
    func = resolve(module, name)
    doc = inspect.getdoc(func)
    assert doc, f"{name} has no docstring"
    for param in inspect.signature(func).parameters:
        if param != "self" and not name.endswith("__init__"):
            assert f"``{param}``" in doc, f"{name} docstring does not mention {param}"


@pytest.mark.parametrize("module, name", GRADED)
def test_graded_docstring_states_its_errors(module, name):
    doc = inspect.getdoc(resolve(module, name))
    if "__init__" not in name:
        assert "TypeError" in doc, f"{name} does not say what a wrong type raises"


class Failures(doctest.DocTestRunner):
    """A doctest runner that keeps each failing example, with what it gave."""

    def __init__(self):
        super().__init__()
        self.failed: list[str] = []

    def report_failure(self, out, test, example, got):
        self.failed.append(f"{test.name}: {example.source.strip()} gave {got.strip()}")

    def report_unexpected_exception(self, out, test, example, exc_info):
        self.failed.append(f"{test.name}: {example.source.strip()} raised {exc_info[1]!r}")


def run_doctests(module, names: dict) -> list[str]:
    """The stub module's doctests run with ``names`` in their globals: the examples that failed."""
    runner = Failures()
    for test in doctest.DocTestFinder(exclude_empty=True).find(module):
        test.globs = {**vars(module), **names}
        runner.run(test, out=lambda _report: None)
    return runner.failed


@pytest.mark.parametrize("module", MODULES)
def test_stub_examples_run_as_doctests_on_the_student_s_code(module):
    """A student runs ``python -m doctest exercises/exN.py`` on their own code: with the reference's
    names every example passes (the skipped ones show a layout or a float the rules leave free),
    and on the untouched stub they fail."""
    stub = importlib.import_module(module)
    reference = importlib.import_module(module.replace("exercises.", "solutions.", 1))
    assert run_doctests(stub, {k: v for k, v in vars(reference).items() if not k.startswith("__")}) == []
    assert doctest.testmod(stub, report=False).failed > 0

"""Exercise 6 with a different structure: a Lattice object built once per word (edges listed
by start position), push-style Viterbi, log-add-exp folded pair by pair instead of a
shifted sum, removal loss as the literal difference of two corpus totals, and a training
loop written as a generator of rounds."""

import math
import re

WORD_PATTERN = r"\w+|[^\w\s]"
NEG = float("-inf")


def _fail(kind, name, what):
    raise kind(f"{name}: {what}")


def _logprobs(table):
    if type(table) is not dict or any(type(k) is not str or type(v) not in (int, float) for k, v in table.items()):
        _fail(TypeError, "logprobs", "must be a dict of str to float")
    for key, value in table.items():
        if key == "" or value != value or value in (math.inf, -math.inf) or value > 0:
            _fail(ValueError, "logprobs", f"bad entry {key!r}: {value!r}")
    return table


def _counts(table):
    if type(table) is not dict or any(type(k) is not str or type(v) is not int for k, v in table.items()):
        _fail(TypeError, "word_counts", "must be a dict of str to int")
    for key, value in table.items():
        if value < 1:
            _fail(ValueError, "word_counts", f"count of {key!r} is {value}")
    return table


def _add(a, b):
    """log(exp(a) + exp(b)), one pair at a time."""
    if a == NEG:
        return b
    if b == NEG:
        return a
    high, low = (a, b) if a >= b else (b, a)
    return high + math.log1p(math.exp(low - high))


class Lattice:
    """Every vocabulary piece inside ``text``, as edges ``(start, end, piece, logprob)``."""

    def __init__(self, text, logprobs):
        self.text, self.n = text, len(text)
        width = max((len(p) for p in logprobs), default=0)
        self.edges = [(i, j, text[i:j], logprobs[text[i:j]]) for i in range(self.n)
                      for j in range(i + 1, min(self.n, i + width) + 1) if text[i:j] in logprobs]

    def best(self):
        score = [0.0] + [None] * self.n
        came = [None] * (self.n + 1)
        # edges are sorted by start, so a strictly better score is needed to replace an
        # earlier start: the longest last piece wins ties
        for i, j, _piece, lp in self.edges:
            if score[i] is not None and (score[j] is None or score[i] + lp > score[j]):
                score[j], came[j] = score[i] + lp, i
        if score[self.n] is None:
            return None
        cut, pieces = self.n, []
        while cut:
            pieces.insert(0, self.text[came[cut]:cut])
            cut = came[cut]
        return pieces, score[self.n]

    def forward(self):
        alpha = [0.0] + [NEG] * self.n
        for i, j, _piece, lp in self.edges:
            alpha[j] = _add(alpha[j], alpha[i] + lp)
        return alpha

    def backward(self):
        beta = [NEG] * self.n + [0.0]
        for i, j, _piece, lp in reversed(self.edges):
            beta[i] = _add(beta[i], lp + beta[j])
        return beta


def viterbi_segment(text, logprobs):
    if type(text) is not str:
        _fail(TypeError, "text", "must be a str")
    found = Lattice(text, _logprobs(logprobs)).best()
    if found is None:
        _fail(ValueError, "text", f"{text!r} cannot be segmented")
    return found


def marginal_logprob(text, logprobs):
    if type(text) is not str:
        _fail(TypeError, "text", "must be a str")
    total = Lattice(text, _logprobs(logprobs)).forward()[-1]
    if total == NEG:
        _fail(ValueError, "text", f"{text!r} cannot be segmented")
    return total


def expected_counts(word_counts, logprobs):
    _counts(word_counts)
    _logprobs(logprobs)
    out = {piece: 0.0 for piece in logprobs}
    for word in word_counts:
        lattice = Lattice(word, logprobs)
        alpha, beta = lattice.forward(), lattice.backward()
        if alpha[-1] == NEG:
            _fail(ValueError, "word_counts", f"{word!r} cannot be segmented")
        for i, j, piece, lp in lattice.edges:
            out[piece] += word_counts[word] * math.exp(alpha[i] + lp + beta[j] - alpha[-1])
    return out


def em_step(word_counts, logprobs):
    counts = expected_counts(word_counts, logprobs)
    total = math.fsum(counts.values())
    return {piece: math.log(c) - math.log(total) for piece, c in counts.items() if c != 0}


def _viterbi_total(word_counts, logprobs):
    total = 0.0
    for word, n in word_counts.items():
        found = Lattice(word, logprobs).best()
        if found is None:
            return NEG
        total += n * found[1]
    return total


def removal_loss(word_counts, logprobs):
    _counts(word_counts)
    _logprobs(logprobs)
    full = _viterbi_total(word_counts, logprobs)
    if full == NEG:
        _fail(ValueError, "word_counts", "a word cannot be segmented")
    losses = {}
    for piece in logprobs:
        if len(piece) < 2:
            continue
        used = [w for w in word_counts if piece in Lattice(w, logprobs).best()[0]]
        if not used:  # every word keeps its best segmentation
            losses[piece] = 0.0
            continue
        rest = {p: v for p, v in logprobs.items() if p != piece}
        without = _viterbi_total(word_counts, rest)
        losses[piece] = math.inf if without == NEG else full - without
    return losses


def _seed(words, longest, keep):
    single, multi = {}, {}
    for word, n in words.items():
        for i in range(len(word)):
            single[word[i]] = single.get(word[i], 0) + n
            for j in range(i + 2, min(len(word), i + longest) + 1):
                multi[word[i:j]] = multi.get(word[i:j], 0) + n
    ranked = sorted((-n * len(s), s) for s, n in multi.items() if n > 1)[:keep]
    everything = sorted([(-n, c) for c, n in single.items()] + ranked)
    total = sum(-score for score, _ in everything)
    return {piece: math.log(-score) - math.log(total) for score, piece in everything}


def _rounds(words, vocab, size, steps, shrink):
    """Each round's vocabulary after its EM steps, pruning between rounds."""
    while True:
        for _ in range(steps):
            vocab = _refit(words, vocab)
        yield vocab
        prunable = [p for p in vocab if len(p) > 1]
        if len(vocab) <= size or not prunable:
            return
        loss = removal_loss(words, vocab)
        keep = max(size, int(len(vocab) * shrink))
        order = list(vocab)
        prunable.sort(key=lambda p: (round(loss[p], 9), order.index(p)))
        gone = set(prunable[:len(vocab) - keep])
        vocab = {p: v for p, v in vocab.items() if p not in gone}


def _refit(words, vocab):
    fitted = em_step(words, vocab)
    return {p: fitted.get(p, -1000.0) for p in vocab}


def train_unigram(text, vocab_size, *, max_piece_len=16, seed_size=10_000, em_iterations=2, shrink_factor=0.75):
    if type(text) is not str:
        _fail(TypeError, "text", "must be a str")
    for name, value, low in (("vocab_size", vocab_size, 1), ("max_piece_len", max_piece_len, 1),
                             ("seed_size", seed_size, 0), ("em_iterations", em_iterations, 0)):
        if type(value) is not int:
            _fail(TypeError, name, "must be an int")
        if value < low:
            _fail(ValueError, name, f"must be >= {low}")
    if type(shrink_factor) not in (int, float):
        _fail(TypeError, "shrink_factor", "must be a number")
    if not 0 < shrink_factor < 1:
        _fail(ValueError, "shrink_factor", "must be strictly between 0 and 1")
    words = {}
    for word in re.findall(WORD_PATTERN, text):
        words[word] = words.get(word, 0) + 1
    *_, last = _rounds(words, _seed(words, max_piece_len, seed_size), vocab_size, em_iterations, shrink_factor)
    return _refit(words, last)

"""Step 1 of the lesson: one token per character.

The simplest tokenizer there is, and its weakness: a character it has never seen has no id.
Byte-level BPE (``lesson_pairs``, then ``lesson_bpe``) starts from bytes instead.
"""


class CharTokenizer:
    """A tokenizer whose vocabulary is the set of characters of its training text.

    Ids are given in sorted character order.

    >>> tok = CharTokenizer().train("hello")
    >>> tok.vocab
    {0: 'e', 1: 'h', 2: 'l', 3: 'o'}
    >>> tok.encode("hell")
    [1, 0, 2, 2]
    >>> tok.decode([1, 0, 2, 2, 3])
    'hello'

    Its weakness: a character that was not in the training text has no id.

    >>> tok.encode("help")
    Traceback (most recent call last):
    ...
    ValueError: text: character 'p' is not in the vocabulary
    """

    def __init__(self):
        self.vocab = {}  # id -> character
        self.ids = {}  # character -> id

    def train(self, text):
        """Give each distinct character of ``text`` an id; return the tokenizer."""
        self.vocab = dict(enumerate(sorted(set(text))))
        self.ids = {char: i for i, char in self.vocab.items()}
        return self

    def encode(self, text):
        """The id of every character of ``text``."""
        for char in text:
            if char not in self.ids:
                raise ValueError(f"text: character {char!r} is not in the vocabulary")
        return [self.ids[char] for char in text]

    def decode(self, ids):
        """The text spelled by ``ids``."""
        return "".join(self.vocab[i] for i in ids)

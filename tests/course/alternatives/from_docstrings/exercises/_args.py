"""Argument checks by the bad-input rules of ``exercises/__init__.py``, shared by my exercises."""

import math


def need_int(value, name, low=None):
    """``value`` must be an int (a bool is not one), at least ``low`` when given."""
    if type(value) is not int:
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if low is not None and value < low:
        raise ValueError(f"{name} must be >= {low}, got {value}")
    return value


def need_number(value, name):
    """``value`` must be an int or a float, not a bool."""
    if type(value) not in (int, float):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    return value


def need_str(value, name, empty_ok=True):
    if type(value) is not str:
        raise TypeError(f"{name} must be a str, got {type(value).__name__}")
    if not empty_ok and not value:
        raise ValueError(f"{name} must not be empty")
    return value


def need_list(value, name, item_type=None):
    """A list (not a tuple) whose items are all of ``item_type`` (exactly, so no bool for int)."""
    if type(value) is not list:
        raise TypeError(f"{name} must be a list, got {type(value).__name__}")
    if item_type is not None:
        for item in value:
            if type(item) is not item_type:
                raise TypeError(f"{name} must hold only {item_type.__name__}, found {type(item).__name__}")
    return value


def need_dict(value, name, key_type, value_types):
    if type(value) is not dict:
        raise TypeError(f"{name} must be a dict, got {type(value).__name__}")
    for key, item in value.items():
        if type(key) is not key_type or type(item) not in value_types:
            raise TypeError(f"{name} must map {key_type.__name__} to "
                            f"{'/'.join(t.__name__ for t in value_types)}, found {key!r}: {item!r}")
    return value


def need_callable(value, name):
    if not callable(value):
        raise TypeError(f"{name} must be callable, got {type(value).__name__}")
    return value


def need_logprobs(logprobs, name="logprobs"):
    """A Unigram vocabulary: non-empty str pieces to finite log-probabilities at most 0."""
    need_dict(logprobs, name, str, (int, float))
    for piece, value in logprobs.items():
        if not piece:
            raise ValueError(f"{name} holds an empty piece")
        if not math.isfinite(value) or value > 0:
            raise ValueError(f"{name}[{piece!r}] must be finite and <= 0, got {value!r}")
    return logprobs

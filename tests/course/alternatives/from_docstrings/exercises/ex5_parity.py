"""Exercise 5 written from the docstrings alone: the lesson's naive loop."""

from ._args import need_callable, need_int, need_number, need_str


def compression_ratio(encode, text):
    need_callable(encode, "encode")
    need_str(text, "text", empty_ok=False)
    return len(encode(text)) / len(text.encode("utf-8"))


def _merge(ids, pair, new_id):
    out, i = [], 0
    while i < len(ids):
        if i + 1 < len(ids) and ids[i] == pair[0] and ids[i + 1] == pair[1]:
            out.append(new_id)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


def ratio_curve(text, max_merges):
    need_str(text, "text", empty_ok=False)
    need_int(max_merges, "max_merges", 0)
    ids = list(text.encode("utf-8"))
    size = len(ids)
    curve = [1.0]
    for k in range(max_merges):
        counts = {}
        for pair in zip(ids, ids[1:], strict=False):
            counts[pair] = counts.get(pair, 0) + 1
        if not counts:
            break
        ids = _merge(ids, max(counts, key=counts.get), 256 + k)
        curve.append(len(ids) / size)
    return curve


def merges_for_parity(text, target_ratio, tolerance=0.10, max_merges=20000):
    need_str(text, "text", empty_ok=False)
    if need_number(target_ratio, "target_ratio") <= 0:
        raise ValueError(f"target_ratio must be > 0, got {target_ratio!r}")
    if not 0 < need_number(tolerance, "tolerance") < 1:
        raise ValueError(f"tolerance must be strictly between 0 and 1, got {tolerance!r}")
    need_int(max_merges, "max_merges", 0)
    threshold = target_ratio * (1 + tolerance)
    for k, ratio in enumerate(ratio_curve(text, max_merges)):
        if ratio <= threshold:
            return k
    raise ValueError(f"no k up to max_merges={max_merges} reaches target_ratio={target_ratio!r}")

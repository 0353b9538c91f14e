"""Which state fields a trace shows, made consistent over its steps.

An implementation's state getters may answer at some steps only: a state created lazily at the
first applied step (ZeRO-3's Adam moments), or linked only after a checkpoint load (ZeRO-1/2's
Adam moments). A field shown at some steps only would read as "not exported" at the others, a
failure of the adapter, not of the implementation. Values are the trace's flat lists.
"""


def zero_before_created(initial, steps):
    """A state DeepSpeed creates lazily, at the first applied step (ZeRO-3's Adam moments), is absent
    from the initial state and from the skipped steps before it; those change nothing, so there the
    state is a fresh optimizer's zeros, as the semantics has it. Fills them in; leaves any other gap."""
    records = [initial] + [st["params"] for st in steps]
    for i in range(len(initial)):
        for field in ("momentum", "adam_m", "adam_v"):
            have = [field in rec[i] for rec in records[1:]]
            first = have.index(True) if any(have) else len(have)
            if 0 < first < len(have) and all(have[first:]) and all(st["skipped"] for st in steps[:first]):
                zeros = [0.0] * len(records[first + 1][i][field])
                for rec in records[:first + 1]:
                    rec[i].setdefault(field, zeros)


def exported_alike(initial, steps):
    """Keeps a state field of a param only where every step (and the initial state) has it.

    The rule for any engine (module docstring); applied to every engine plugin's trace."""
    zero_before_created(initial, steps)
    records = [initial] + [st["params"] for st in steps]
    for i in range(len(initial)):
        for field in ("momentum", "adam_m", "adam_v"):
            if not all(field in rec[i] for rec in records[1:]):
                for rec in records:
                    rec[i].pop(field, None)

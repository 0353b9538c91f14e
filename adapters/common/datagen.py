"""The data generator of docs/semantics.md §1, vectorized in numpy, bit for bit the same as core/datagen.cpp.

mix / splitmix64 / h(w0..w5) on uint64 arrays (numpy wraps uint64 arithmetic mod 2^64),
v = ((h >> 40) mod 33 − 16) / 16. Every value is a dyadic rational, exact in fp16, bf16
and fp32. tests/trace/datagen_match.py checks this file against muoncheck's own dump.
"""
import numpy as np

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
INIT, INPUT, TARGET = 1, 2, 3


def _u64(x):
    return np.asarray(x, dtype=np.uint64)


def mix(z):
    z = _u64(z)
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * _M1
        z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def splitmix64(x):
    with np.errstate(over="ignore"):
        return mix(_u64(x) + _GOLDEN)


def hash6(w0, w1, w2, w3, w4, w5):
    """x = 0; x = splitmix64(x ^ w) for each word; words broadcast against each other."""
    words = np.broadcast_arrays(*[_u64(w) for w in (w0, w1, w2, w3, w4, w5)])
    x = np.zeros(words[0].shape, dtype=np.uint64)
    for w in words:
        x = splitmix64(x ^ w)
    return x


def unit_value(h):
    return ((_u64(h) >> np.uint64(40)) % np.uint64(33)).astype(np.int64).astype(np.float64) / 16.0 - 1.0


def _init_exponent(cols):
    k = 0
    while (1 << (2 * k)) < cols:
        k += 1
    return k


def initial_weight(seed, param):
    """Param p's initial weight in its layer shape (float64, exact)."""
    n = int(np.prod(param.shape))
    v = unit_value(hash6(seed, INIT, param.index, np.arange(n, dtype=np.uint64), 0, 0))
    w = 1.0 + v / 4.0 if len(param.shape) < 2 else np.ldexp(v, -_init_exponent(param.cols))
    return w.reshape(param.shape)


def inputs(seed, param, step, samples):
    """x of each sample: (len(samples), cols)."""
    j = _u64(samples)[:, None]
    e = np.arange(param.cols, dtype=np.uint64)[None, :]
    return unit_value(hash6(seed, INPUT, param.index, step, j, e))


def targets(seed, param, step, samples):
    """y of each sample: (len(samples), rows), or (len(samples), n) for a vector."""
    m = param.cols if len(param.shape) == 1 else param.rows
    j = _u64(samples)[:, None]
    e = np.arange(m, dtype=np.uint64)[None, :]
    return unit_value(hash6(seed, TARGET, param.index, step, j, e))

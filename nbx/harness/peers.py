"""Peers: other libraries' ops measured beside nbx's on the same inputs (`nbx run --target torch`).

A peer target runs the op of the same name in another library on exactly the inputs nbx's target
gets (the same seed, suites and cases: runner.batches, the bank, the device sweeps) and is scored
the same way (measure.score against the oracles). Peers are reported beside nbx, never gated: the
gate and the budgets read target "nbx" only.

The torch table below maps each nbx op to a callable on torch tensors with the same semantics and
parameters. COMPOSED lists the ops torch has no single op for and how they are composed here;
LACKING the ops with no torch counterpart at all (no peer measurement is made for them). Only the
value suites are measured for peers (STRUCTURAL_SKIPPED: layout and intdiv test nbx's own
strided and integer-division paths, not a value contract).

torch is optional (`pip install -e .[torch]`) and imported only when a peer is asked for
(`load`). It runs where nbx runs: on CUDA tensors of nbx's device when nbx's backend is cuda, on
CPU tensors under the interpreter; operands and results cross by DLPack, with no copy.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from .targets import Target

NBX = "nbx"
PEERS = ("torch",)                 # the targets `nbx run --target` takes besides nbx
TARGETS = (NBX,) + PEERS
STRUCTURAL_SKIPPED = ("layout", "intdiv")
INSTALL = {"torch": "pip install -e .[torch], then pip install mpmath==1.4.1 (torch's sympy asks for an "
                    "older mpmath than constraints.txt pins; README.md)"}


class PeerUnavailable(Exception):
    """The peer's library cannot be imported: a usage error of `nbx run --target`."""


# ---------------------------------------------------------------------- the torch op table
def _F():
    import torch.nn.functional as F
    return F


def _to(T, x, dtype=None):
    return x.to(getattr(T, str(dtype)))


def _silu_and_mul(T, x):
    d = x.shape[-1] // 2
    return _F().silu(x[..., :d]) * x[..., d:]


def _bf16_to_fp16(T, x):
    return (x.view(T.bfloat16) if x.dtype == T.int16 else x).to(T.float16)


def _dropout(T, x, p=0.5, train=False):
    return _F().dropout(x, p=p, training=bool(train))


def _masked_fill(T, x, mask, value=None):
    return x.masked_fill(mask, value)


def _clamp(T, x, min=None, max=None):
    return T.clamp(x, min=min, max=max)


def _threshold(T, x, threshold=None, value=None):
    return _F().threshold(x, threshold, value)


# keyword arguments, not string keys: nbx/harness names no op in a string (tests/test_meta.py); the
# table is a fact about torch, kept here beside the harness that runs it
TORCH = dict(
    # activations
    relu=lambda T, x: T.relu(x),
    sigmoid=lambda T, x: T.sigmoid(x),
    silu=lambda T, x: _F().silu(x),
    gelu=lambda T, x, approximate="none": _F().gelu(x, approximate=approximate),
    tanh=lambda T, x: T.tanh(x),
    hardsigmoid=lambda T, x: _F().hardsigmoid(x),
    hardswish=lambda T, x: _F().hardswish(x),
    leaky_relu=lambda T, x, negative_slope=0.01: _F().leaky_relu(x, negative_slope),
    elu=lambda T, x, alpha=1.0: _F().elu(x, alpha=alpha),
    celu=lambda T, x, alpha=1.0: _F().celu(x, alpha=alpha),
    selu=lambda T, x: _F().selu(x),
    mish=lambda T, x: _F().mish(x),
    softplus=lambda T, x, beta=1.0, threshold=20.0: _F().softplus(x, beta=beta, threshold=threshold),
    log_sigmoid=lambda T, x: _F().logsigmoid(x),
    threshold=_threshold,
    glu=lambda T, x, dim=-1: _F().glu(x, dim),
    silu_and_mul=_silu_and_mul,                                       # COMPOSED
    swiglu=lambda T, a, b: _F().silu(a) * b,                          # COMPOSED
    dropout=_dropout,
    # arithmetic
    add=lambda T, a, b, alpha=1: T.add(a, b, alpha=alpha),
    sub=lambda T, a, b, alpha=1: T.sub(a, b, alpha=alpha),
    rsub=lambda T, a, b, alpha=1: T.rsub(a, b, alpha=alpha),
    mul=lambda T, a, b: T.mul(a, b),
    div=lambda T, a, b, rounding_mode=None: T.div(a, b, rounding_mode=rounding_mode),
    floor_divide=lambda T, a, b: T.floor_divide(a, b),
    remainder=lambda T, a, b: T.remainder(a, b),
    maximum=lambda T, a, b: T.maximum(a, b),
    minimum=lambda T, a, b: T.minimum(a, b),
    fmod=lambda T, a, b: T.fmod(a, b),
    fmax=lambda T, a, b: T.fmax(a, b),
    fmin=lambda T, a, b: T.fmin(a, b),
    atan2=lambda T, a, b: T.atan2(a, b),
    hypot=lambda T, a, b: T.hypot(a, b),
    copysign=lambda T, a, b: T.copysign(a, b),
    pow=lambda T, a, b: T.pow(a, b),
    bitwise_and=lambda T, a, b: T.bitwise_and(a, b),
    bitwise_or=lambda T, a, b: T.bitwise_or(a, b),
    bitwise_xor=lambda T, a, b: T.bitwise_xor(a, b),
    bitwise_not=lambda T, x: T.bitwise_not(x),
    bitwise_left_shift=lambda T, a, b: T.bitwise_left_shift(a, b),
    bitwise_right_shift=lambda T, a, b: T.bitwise_right_shift(a, b),
    # comparisons and logic
    eq=lambda T, a, b: T.eq(a, b),
    ne=lambda T, a, b: T.ne(a, b),
    lt=lambda T, a, b: T.lt(a, b),
    le=lambda T, a, b: T.le(a, b),
    gt=lambda T, a, b: T.gt(a, b),
    ge=lambda T, a, b: T.ge(a, b),
    logical_and=lambda T, a, b: T.logical_and(a, b),
    logical_or=lambda T, a, b: T.logical_or(a, b),
    logical_xor=lambda T, a, b: T.logical_xor(a, b),
    logical_not=lambda T, x: T.logical_not(x),
    isfinite=lambda T, x: T.isfinite(x),
    isinf=lambda T, x: T.isinf(x),
    isnan=lambda T, x: T.isnan(x),
    signbit=lambda T, x: T.signbit(x),
    # copies, casts, selection
    copy=lambda T, x: x.clone(),
    to=_to,
    bf16_to_fp16=_bf16_to_fp16,                                       # COMPOSED
    nan_to_num=lambda T, x, nan=0.0, posinf=None, neginf=None: T.nan_to_num(x, nan=nan, posinf=posinf,
                                                                             neginf=neginf),
    angle=lambda T, x: T.angle(x),
    clamp=_clamp,
    clamp_min=lambda T, a, b: T.clamp_min(a, b),
    where=lambda T, c, a, b: T.where(c, a, b),
    masked_fill=_masked_fill,
    lerp=lambda T, a, b, w: T.lerp(a, b, w),
    addcmul=lambda T, a, b, c, value=1: T.addcmul(a, b, c, value=value),
    addcdiv=lambda T, a, b, c, value=1: T.addcdiv(a, b, c, value=value),
    # math
    neg=lambda T, x: T.neg(x),
    abs=lambda T, x: T.abs(x),
    exp=lambda T, x: T.exp(x),
    exp2=lambda T, x: T.exp2(x),
    log=lambda T, x: T.log(x),
    sin=lambda T, x: T.sin(x),
    cos=lambda T, x: T.cos(x),
    tan=lambda T, x: T.tan(x),
    sqrt=lambda T, x: T.sqrt(x),
    rsqrt=lambda T, x: T.rsqrt(x),
    reciprocal=lambda T, x: T.reciprocal(x),
    erf=lambda T, x: T.erf(x),
    floor=lambda T, x: T.floor(x),
    ceil=lambda T, x: T.ceil(x),
    trunc=lambda T, x: T.trunc(x),
    round=lambda T, x: T.round(x),
    expm1=lambda T, x: T.expm1(x),
    log1p=lambda T, x: T.log1p(x),
    log2=lambda T, x: T.log2(x),
    log10=lambda T, x: T.log10(x),
    sinh=lambda T, x: T.sinh(x),
    cosh=lambda T, x: T.cosh(x),
    asin=lambda T, x: T.asin(x),
    acos=lambda T, x: T.acos(x),
    atan=lambda T, x: T.atan(x),
    asinh=lambda T, x: T.asinh(x),
    acosh=lambda T, x: T.acosh(x),
    atanh=lambda T, x: T.atanh(x),
    erfc=lambda T, x: T.erfc(x),
    sign=lambda T, x: T.sign(x),
    square=lambda T, x: T.square(x),
    frac=lambda T, x: T.frac(x),
)

COMPOSED = {
    "torch": dict(
        swiglu="no single torch op: composed as F.silu(gate) * up (two roundings)",
        silu_and_mul="no single torch op: composed as F.silu(x[..., :d]) * x[..., d:] (two roundings)",
        bf16_to_fp16="no single torch op: composed as x.view(torch.bfloat16).to(torch.float16) "
                     "(an int16 operand holds the bit patterns)",
    ),
}

LACKING = {
    "torch": dict(
        cbrt="torch has no cube root (torch.pow(x, 1/3) is another function: NaN for x < 0, 1/3 rounded)",
    ),
}

TABLES = {"torch": TORCH}


def has_peer(peer: str, op: str) -> bool:
    return op in TABLES[peer]


# ---------------------------------------------------------------------- a peer's target
@dataclass(frozen=True)
class PeerTarget(Target):
    """A row of the precision table measured with a peer library's op of the same name: the same
    label, dtype, operands and oracle, so the same inputs and the same scoring; `run` runs the
    peer's op instead of nbx's."""
    peer: str = "torch"

    def run(self, arrays: list[np.ndarray]) -> np.ndarray:
        return run_host(self, arrays)


def peer_of(t: Target, peer: str) -> PeerTarget:
    return PeerTarget(t.op, t.params, t.dtype, peer)


# ---------------------------------------------------------------------- loading a peer
@dataclass(frozen=True)
class PeerInfo:
    name: str
    version: str
    device: str               # where it runs: "cpu", or "cuda:0 (NVIDIA H200)"

    @property
    def describe(self) -> str:
        return f"{self.name} {self.version} on {self.device}"


_LOADED: dict = {}


def load(peer: str) -> PeerInfo:
    """Import the peer's library (lazily, once) and say what it is and where it runs; raises
    PeerUnavailable (the option and how to install it) when it cannot be imported."""
    if peer not in PEERS:
        raise PeerUnavailable(f"--target {peer}: unknown target; allowed: {', '.join(TARGETS)}")
    if peer in _LOADED:
        return _LOADED[peer]
    try:
        import torch
    except ImportError as e:
        raise PeerUnavailable(f"--target {peer} needs torch, which cannot be imported here ({e}); install "
                              f"the optional extra: {INSTALL[peer]}") from None
    from .. import backend
    if backend.IS_CUDA:
        if not torch.cuda.is_available():
            raise PeerUnavailable(f"--target {peer}: nbx runs on CUDA, but this torch ({torch.__version__}) "
                                  f"has no CUDA; install a CUDA build of torch")
        i = torch.cuda.current_device()
        device = f"cuda:{i} ({torch.cuda.get_device_name(i)})"
    else:
        device = "cpu"
    info = PeerInfo(peer, str(torch.__version__), device)
    _LOADED[peer] = info
    return info


# ---------------------------------------------------------------------- running a peer's op
def run_device(t, xs):
    """The peer's op of target t (a targets.PeerTarget) on nbx tensors xs (1-D, the oracle's
    operands, as exhaustive.run_op gets them): a split op gets one tensor holding both halves, as
    nbx's does. Returns an nbx tensor, flat, viewing torch's result (DLPack both ways)."""
    import torch

    from ..tensor import from_dlpack
    from . import device_score as DS
    fn = TABLES[t.peer][t.op]
    split = t.verify.split
    if split is not None:
        packed = DS.pack(xs[0], xs[1], split.dim_param is None)
        kw = {split.dim_param: 0} if split.dim_param is not None else {}
        y = fn(torch, torch.from_dlpack(packed), **kw, **t.params)
    else:
        y = fn(torch, *[torch.from_dlpack(x) for x in xs], **t.params)
    return _back(t, y.reshape(-1).contiguous(), from_dlpack)


def run_host(t, arrays: list[np.ndarray]) -> np.ndarray:
    """The peer's op of target t on 1-D numpy operands, as Target.run runs nbx's: returns numpy."""
    import torch

    from ..tensor import from_dlpack, from_numpy
    fn = TABLES[t.peer][t.op]
    split = t.verify.split
    if split is None:
        y = fn(torch, *[torch.from_dlpack(from_numpy(a)) for a in arrays], **t.params)
    else:
        a, b = arrays
        if split.dim_param is not None:                         # (2, n): halves along dim 0
            x, kw = np.stack([a, b], axis=0), {split.dim_param: 0}
        else:                                                   # (n, 2): the last dim
            x, kw = np.stack([a, b], axis=1), {}
        y = fn(torch, torch.from_dlpack(from_numpy(x)), **kw, **t.params)
    return _back(t, y.reshape(-1).contiguous(), from_dlpack).numpy()


def _back(t, y, from_dlpack):
    """torch's result as an nbx tensor; its dtype must be nbx's result dtype for the target (the
    oracle and the bank are of that dtype): a different one is the measurement's error."""
    got = from_dlpack(y)
    want = t.out_dtype
    if got.dtype is not want:
        raise TypeError(f"{t.peer} returns {got.dtype.name} for {t.label} on {t.dtype.name}; nbx returns "
                        f"{want.name} (the results are not comparable)")
    return got


# ---------------------------------------------------------------------- the device-decided jobs
def sweep(t, lo: int, hi: int, acc, chunk: int | None = None) -> None:
    """exhaustive.sweep with the peer's op: bit patterns (or 16-bit operand pairs) lo .. hi - 1."""
    from . import device_score as DS
    from . import exhaustive as X
    d = X.device_oracle(t)
    if d is None or t.oracle_arity > 2 or t.oracle_arity == 2 and t.dtype.itemsize != 2:
        raise ValueError(f"peers.sweep: {t.label} {t.dtype.name} has no device oracle over bit patterns")
    chunk = chunk or X.CHUNK
    for start in range(lo, hi, chunk):
        n = min(chunk, hi - start)
        xs_dev = [DS.bit_patterns(t.dtype.name, start, n)] if d.arity == 1 else \
            list(DS.pair_patterns(t.dtype.name, start, n))
        got = run_device(t, xs_dev)
        s = X._score_chunk(t, d, xs_dev, got, acc, f"[{start:#x}, {start + n:#x})")
        X._to_host(t, acc, got, s, lambda at: [DS.take(x, at) for x in xs_dev])


def sample(t, lo: int, hi: int, acc, seed: int = 0, chunk: int | None = None,
           max_host: int | None = None) -> int:
    """exhaustive.sample with the peer's op: tuples lo .. hi - 1 of the stratified float32 sample of
    (t, seed), the tuples nbx's target gets. Returns how many undecided tuples were left out."""
    from . import device_score as DS
    from . import exhaustive as X
    if not X.sampled(t):
        raise ValueError(f"peers.sample: {t.label} {t.dtype.name} is no float32 binary or ternary target "
                         f"with a device oracle")
    d = X.device_oracle(t)
    arity, key = t.oracle_arity, X.tuple_key(t, seed)
    chunk = chunk or X.CHUNK
    index: dict = {}
    left_out = 0
    for start in range(lo, hi, chunk):
        n = min(chunk, hi - start)
        xs_dev = DS.stratified_tuples(arity, key, start, n)
        got = run_device(t, xs_dev)
        s = X._score_chunk(t, d, xs_dev, got, acc, f"tuples [{start:#x}, {start + n:#x})")

        def operands_at(at, start=start):
            return DS.tuples_host(arity, key, start + np.asarray(at, np.int64))

        quota = None if max_host is None else -(-max_host * n // (hi - lo))
        if quota is not None:
            left_out += max(0, len(s.undecided_at) - quota)
        back = X._to_host(t, acc, got, s, operands_at, quota)
        if len(back):
            arrays = operands_at(back)
            for k, i in enumerate(back):
                index[tuple(X.hexes(arrays, k))] = start + int(i)
    acc.worst = [(k, q, dataclasses.replace(w, note=f"{w.note}; stratified tuple {index[tuple(w.inputs)]:#x} "
                                                  f"of seed {seed}".lstrip("; "))
                  if tuple(w.inputs) in index else w) for k, q, w in acc.worst]
    return left_out


# ---------------------------------------------------------------------- reading reports
def target_of(m) -> str:
    """A measurement's target ("nbx" for reports made before peers existed)."""
    return getattr(m, "target", NBX) or NBX


def is_nbx(m) -> bool:
    return target_of(m) == NBX

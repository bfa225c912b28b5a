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

from dataclasses import dataclass


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

    def invoke(self, tensors: list, kw: dict):
        """The peer's op on nbx tensors, through DLPack both ways (no copy); its result must have
        nbx's result dtype for the target (the oracle and the bank are of that dtype): a different
        one is the measurement's error."""
        import torch

        from ..tensor import from_dlpack
        y = TABLES[self.peer][self.op](torch, *[torch.from_dlpack(x) for x in tensors], **kw, **self.params)
        got = from_dlpack(y.contiguous())
        if got.dtype is not self.out_dtype:
            raise TypeError(f"{self.peer} returns {got.dtype.name} for {self.label} on {self.dtype.name}; nbx "
                            f"returns {self.out_dtype.name} (the results are not comparable)")
        return got


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


# ---------------------------------------------------------------------- reading reports
def target_of(m) -> str:
    """A measurement's target ("nbx" for reports made before peers existed)."""
    return getattr(m, "target", NBX) or NBX


def is_nbx(m) -> bool:
    return target_of(m) == NBX

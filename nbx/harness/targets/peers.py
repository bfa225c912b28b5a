"""Peers: other libraries' ops measured beside nbx's on the same inputs (`nbx run --target torch`).

A peer target runs the op of the same name in another library on exactly the inputs nbx's target
gets (the same seed, suites and cases: values.batches, the bank, the device sweeps) and is scored
the same way (host.score against the oracles). Peers are reported beside nbx, never gated: the
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

import sys

from dataclasses import dataclass


from nbx.harness.targets import callables
from nbx.harness.targets.target import Target

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


# Ops that are torch's function of the same name, called with nbx's operands and parameters as they
# are (alpha=, rounding_mode=, value=, approximate= ... are the same keywords in torch)
SAME_NAME = (
    "relu", "sigmoid", "tanh", "add", "sub", "rsub", "mul", "div", "floor_divide", "remainder",
    "maximum", "minimum", "fmod", "fmax", "fmin", "atan2", "hypot", "copysign", "pow",
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift",
    "bitwise_right_shift", "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or",
    "logical_xor", "logical_not", "isfinite", "isinf", "isnan", "signbit", "angle", "clamp_min",
    "where", "lerp", "addcmul", "addcdiv", "neg", "abs", "exp", "exp2", "log", "sin", "cos",
    "tan", "sqrt", "rsqrt", "reciprocal", "erf", "floor", "ceil", "trunc", "round", "expm1",
    "log1p", "log2", "log10", "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh",
    "erfc", "sign", "square", "frac",
)
SAME_NAME_F = (                    # torch.nn.functional
    "silu", "gelu", "hardsigmoid", "hardswish", "leaky_relu", "elu", "celu", "selu", "mish",
    "softplus", "glu",
)


def _same(module, name):
    return lambda T, *xs, **kw: getattr(module(T), name)(*xs, **kw)


TORCH = {
    **{name: _same(lambda T: T, name) for name in SAME_NAME},
    **{name: _same(lambda T: _F(), name) for name in SAME_NAME_F},
    **dict(
        log_sigmoid=lambda T, x: _F().logsigmoid(x),
        threshold=_threshold,
        silu_and_mul=_silu_and_mul,                                       # COMPOSED
        swiglu=lambda T, a, b: _F().silu(a) * b,                          # COMPOSED
        dropout=_dropout,
        copy=lambda T, x: x.clone(),
        to=_to,
        bf16_to_fp16=_bf16_to_fp16,                                       # COMPOSED
        nan_to_num=lambda T, x, nan=0.0, posinf=None, neginf=None: T.nan_to_num(x, nan=nan, posinf=posinf,
                                                                                 neginf=neginf),
        clamp=_clamp,
        masked_fill=_masked_fill,
    ),
}

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

    @property
    def name(self) -> str:
        return self.peer

    @property
    def describe(self) -> str:
        return load(self.peer).describe

    def invoke(self, tensors: list, kw: dict):
        """The peer's op on nbx tensors, through DLPack both ways (no copy); its result must have
        nbx's result dtype for the target (the oracle and the bank are of that dtype): a different
        one is the measurement's error."""
        import torch

        from nbx.tensor import from_dlpack
        y = TABLES[self.peer][self.op](torch, *[torch.from_dlpack(x) for x in tensors], **kw, **self.params)
        got = from_dlpack(y.contiguous())
        if got.dtype is not self.out_dtype:
            raise TypeError(f"{self.peer} returns {got.dtype.name} for {self.label} on {self.dtype.name}; nbx "
                            f"returns {self.out_dtype.name} (the results are not comparable)")
        return got

    def release(self) -> None:
        """Give the peer's cached device memory back (exhaustive.release): torch's caching allocator
        keeps freed blocks for its own process, away from the other shards sharing the GPU."""
        torch = sys.modules.get("torch")
        if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
            torch.cuda.empty_cache()


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
    PeerUnavailable (the option and how to install it) when it cannot be imported. A callable's
    name (`pkg.module:function=op`, targets/callables.py) imports its function instead."""
    if callables.is_callable_name(peer):
        loaded = callables.load(peer)
        return PeerInfo(loaded.path, f"as {loaded.template.op}", f"{loaded.arrays} arrays through DLPack")
    if peer not in PEERS:
        raise PeerUnavailable(f"--target {peer}: unknown target; allowed: {', '.join(TARGETS)}")
    if peer in _LOADED:
        return _LOADED[peer]
    try:
        import torch
    except ImportError as e:
        raise PeerUnavailable(f"--target {peer} needs torch, which cannot be imported here ({e}); install "
                              f"the optional extra: {INSTALL[peer]}") from None
    from nbx import backend
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

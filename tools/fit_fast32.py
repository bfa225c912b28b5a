"""Fit the coefficients of the float32 fast paths (nbx/kernels/fast32/) and write them as data.

Usage: python3 tools/fit_fast32.py [--write | --check] [NAME=DEGREE ... | TAN=m/k ERF=m/k ERFC=m/k]
Prints every fit; --write replaces nbx/kernels/fast32/coefficients.json (atomically), --check exits
1 when the committed file differs from this program's output (tests/test_fit.py runs it).

Each fast path evaluates a float32 function in float64 with a few terms, aiming at a relative error
near 2^-50 (a window of E = 2^-45 then flags about one input in 2^20; keys.py). The coefficients are
near-minimax: weighted least squares on Chebyshev nodes in mpmath at 60 digits, reweighted by
Lawson's rule toward equal ripple, then rounded to float64; the rationals by Loeb's linearized least
squares. The error printed and stored is that of the rounded coefficients (evaluation rounding is
measured on the GPU over every float32 input, bench/fast32_exhaustive.py).
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

import mpmath as mp

OUT = Path(__file__).resolve().parents[1] / "nbx" / "kernels" / "fast32" / "coefficients.json"

mp.mp.dps = 60


def fit(g, weight, lo, hi, degree, nodes=240, lawson=30):
    """Coefficients c0..c_degree of P(z) minimizing max |weight(z) * (P(z) - g(z))| on [lo, hi]."""
    zs = [lo + (hi - lo) * (1 - mp.cos(mp.pi * (i + mp.mpf(1) / 2) / nodes)) / 2 for i in range(nodes)]
    gs = [g(z) for z in zs]
    ws = [weight(z) for z in zs]
    lam = [mp.mpf(1) / nodes] * nodes
    coef = None
    for _ in range(lawson):
        rows = [[ws[i] * mp.sqrt(lam[i]) * zs[i] ** j for j in range(degree + 1)] for i in range(nodes)]
        rhs = [ws[i] * mp.sqrt(lam[i]) * gs[i] for i in range(nodes)]
        coef = mp.qr_solve(mp.matrix(rows), mp.matrix(rhs))[0]
        err = [abs(ws[i] * (mp.polyval(list(reversed(coef)), zs[i]) - gs[i])) for i in range(nodes)]
        tot = sum(lam[i] * err[i] for i in range(nodes))
        lam = [lam[i] * err[i] / tot for i in range(nodes)]
    return [float(c) for c in coef]


def max_error(coef, g, weight, lo, hi, samples=4000):
    worst = 0
    for i in range(samples + 1):
        z = lo + (hi - lo) * mp.mpf(i) / samples
        p = mp.polyval([mp.mpf(c) for c in reversed(coef)], z)
        worst = max(worst, abs(weight(z) * (p - g(z))))
    return float(worst)


def _series_quotient(f, z0, z):
    """(f(z) - f(0)) / z without the cancellation at z -> 0 (a Taylor tail below z0)."""
    return f(z) if z > z0 else None


# sin(r) = r + r z S(z), z = r^2, |r| <= pi/4 (+ rounding of the quadrant)
TRIG_Z = (mp.pi / 4) ** 2 * mp.mpf("1.0001")


def sin_s(z):
    if z < mp.mpf("1e-30"):
        return -mp.mpf(1) / 6
    r = mp.sqrt(z)
    return (mp.sin(r) - r) / (r * z)


# log(x) = e log 2 - log(k/128) + log1p(r), r = z k/128 - 1: log1p(r) = r + r^2 P(r) for
# |r| <= LOG1P_R, the bound that |k - 128/z| <= 0.54 gives on z < sqrt(2); error relative to log1p(r)
LOG1P_R = mp.sqrt(2) * mp.mpf("0.54") / 128


def log1p_p(r):
    if abs(r) < mp.mpf("1e-25"):
        return -mp.mpf(1) / 2 + r / 3
    return (mp.log1p(r) - r) / r ** 2


# atan(r) = r + r z P(z), z = r^2: fast32/atan.py reduces u in [0, 1] by c = k/128 (k = 128 u
# rounded, u from the hardware's ~2^-20 reciprocal: |u - c| <= 1/256 + 2^-18) to r = (u - c)/(1 + u c)
ATAN_R = mp.mpf(1) / 256 + mp.mpf(2) ** -18


def atan_p(z):
    if z < mp.mpf("1e-40"):
        return -mp.mpf(1) / 3 + z / 5
    r = mp.sqrt(z)
    return (mp.atan(r) - r) / (r * z)


# name: (g, weight (error of the final result per unit error of P), lo, hi, degree, form, interval,
# what the error is relative to)
TABLES = {
    "LOG1P_P": (log1p_p, abs, -LOG1P_R, LOG1P_R, 4, "log1p(r) = r + r^2 P(r)", "|r| <= sqrt(2) 0.54/128",
                "relative to log1p(r)"),
    # k/128 from 1/z, evaluated in float32 (0.04/128 measured)
    "LOG_RCP": (lambda z: 1 / z, lambda z: 1, 1 / mp.sqrt(2), mp.sqrt(2), 4, "1/z", "z in [sqrt(1/2), sqrt(2)]",
                "absolute"),
    "SIN_S": (sin_s, lambda z: z, 0, TRIG_Z, 5, "sin(r) = r + r z S(z), z = r^2", "|r| <= pi/4 (1.0001 in z)",
              "absolute times z"),
    "ATAN_P": (atan_p, lambda z: z, 0, ATAN_R ** 2, 1, "atan(r) = r + r z P(z), z = r^2", "|r| <= 1/256 + 2^-18",
               "absolute times z"),
}


def tan_over_r(z):
    if z == 0:
        return mp.mpf(1)
    r = mp.sqrt(z)
    return mp.tan(r) / r


# rationals: tan(r) = r P(z) / Q(z), z = r^2 <= TRIG_Z; erf(x) = x P(t) / Q(t), t = x^2 <= ERF_T,
# x clamped to [-3.921875, 3.921875] (fast32/erf.py ERF_CLAMP: erf rounds to 1.0f from 3.9192 on)
ERF_T = mp.mpf(3.921875) ** 2


def erf_over_x(t):
    if t == 0:
        return 2 / mp.sqrt(mp.pi)
    x = mp.sqrt(t)
    return mp.erf(x) / x


# erfc(x) = exp(-x^2) P(x) / Q(x) for x in [0, ERFC_X], degrees 8/9: P/Q is erfcx(x) = exp(x^2)
# erfc(x), which falls from 1 to ~1/(sqrt(pi) x) (so deg Q = deg P + 1); ERFC_X covers erfc's
# clamp and gelu's |x|/sqrt(2) up to 14.4375/sqrt(2) (fast32/erfc.py). gelu's pair is the same
# rational in a = sqrt(2) x with its 1/2: 0.5 P(a/sqrt2) / Q(a/sqrt2), the scaled coefficients
# rounded again. 120 nodes and 8 reweightings (1.7 s) reach 2^-51.95 where 300 and 12 reach 2^-52.0.
ERFC_X = mp.mpf(10.25)


def erfcx(x):
    return mp.erfc(x) * mp.exp(x * x)


def gelu_erfcx(a):
    """erfc(a / sqrt2) exp(a^2 / 2) / 2: gelu(-a) = -a exp(-a^2 / 2) gelu_erfcx(a)."""
    return erfcx(a / mp.sqrt(2)) / 2


def rational_error(g, hi, p, q, samples=2000):
    """The maximum relative error of float64 coefficients p, q (lowest degree first) against g on a
    grid of [0, hi]."""
    worst = 0
    for i in range(samples + 1):
        t = hi * mp.mpf(i) / samples
        worst = max(worst, abs(mp.polyval([mp.mpf(c) for c in p[::-1]], t)
                               / mp.polyval([mp.mpf(c) for c in q[::-1]], t) / g(t) - 1))
    return worst


def fit_rational(g, hi, m, k, nodes=300, iters=12):
    """P (degree m) and Q (degree k, Q(0) = 1) in t on [0, hi] with P/Q near-minimax in relative
    error to g: Loeb's linearized least squares (weights 1/Q of the last iterate) on Chebyshev nodes,
    reweighted by Lawson's rule. Returns (max relative error, P, Q), coefficients in t."""
    ss = [(mp.cos(mp.pi * (i + mp.mpf(1) / 2) / nodes) + 1) / 2 for i in range(nodes)]   # s = t / hi
    gs = [g(hi * s) for s in ss]
    qprev, lam, best = [mp.mpf(1)] * nodes, [mp.mpf(1)] * nodes, None
    for _ in range(iters):
        rows, rhs = [], []
        for i in range(nodes):
            w = mp.sqrt(lam[i]) / (qprev[i] * gs[i])
            rows.append([w * ss[i] ** j for j in range(m + 1)] + [-w * gs[i] * ss[i] ** j for j in range(1, k + 1)])
            rhs.append(w * gs[i])
        sol = mp.qr_solve(mp.matrix(rows), mp.matrix(rhs))[0]
        p, q = [sol[j] for j in range(m + 1)], [mp.mpf(1)] + [sol[m + j] for j in range(1, k + 1)]
        errs = []
        for i in range(nodes):
            qprev[i] = mp.polyval(q[::-1], ss[i])
            errs.append(abs(mp.polyval(p[::-1], ss[i]) / qprev[i] / gs[i] - 1))
        tot = sum(lam[i] * errs[i] for i in range(nodes))
        lam = [lam[i] * errs[i] / tot * nodes for i in range(nodes)]
        if best is None or max(errs) < best[0]:
            best = (max(errs), p, q)
    _, p, q = best
    p, q = [float(c / hi ** j) for j, c in enumerate(p)], [float(c / hi ** j) for j, c in enumerate(q)]
    return rational_error(g, hi, p, q), p, q                # the rounded coefficients, a finer grid


def fits(degrees: dict) -> dict:
    """name -> {coefficients (lowest degree first), error_log2, form, interval, error}."""
    out = {}
    for name, (g, w, lo, hi, deg, form, interval, kind) in TABLES.items():
        deg = int(degrees.get(name, deg))
        coef = fit(g, w, mp.mpf(lo), hi, deg)
        err = max_error(coef, g, w, mp.mpf(lo), hi)
        out[name] = dict(coefficients=coef, error_log2=round(float(mp.log(err, 2)), 2), form=form,
                         interval=interval, error=kind)
    # erf: 400 nodes and 24 reweightings
    for name, g, hi, default, kw, form, interval in [
            ("TAN", tan_over_r, TRIG_Z, "3/3", {}, "tan(r) = r P(z) / Q(z), z = r^2", "z in [0, 0.616912]"),
            ("ERF", erf_over_x, ERF_T, "7/8", dict(nodes=400, iters=24), "erf(x) = x P(t) / Q(t), t = x^2",
             "t in [0, 3.921875^2]"),
            ("ERFC", erfcx, ERFC_X, "8/9", dict(nodes=120, iters=8), "erfc(x) = exp(-x^2) P(x) / Q(x)",
             "x in [0, 10.25]")]:
        m, k = (int(v) for v in degrees.get(name, default).split("/"))
        err, p, q = fit_rational(g, hi, m, k, **kw)
        for part, coef in (("P", p), ("Q", q)):
            out[f"{name}_{part}"] = dict(coefficients=coef, error_log2=round(float(mp.log(err, 2)), 2), form=form,
                                         interval=interval, error="relative")
    # gelu's: erfc's in a = sqrt(2) x, P with the 1/2 of gelu
    p, q = (out[f"ERFC_{part}"]["coefficients"] for part in ("P", "Q"))
    gp = [float(mp.mpf(c) / mp.sqrt(2) ** j / 2) for j, c in enumerate(p)]
    gq = [float(mp.mpf(c) / mp.sqrt(2) ** j) for j, c in enumerate(q)]
    err = rational_error(gelu_erfcx, ERFC_X * mp.sqrt(2), gp, gq)
    for part, coef in (("P", gp), ("Q", gq)):
        out[f"GELU_ERF_{part}"] = dict(coefficients=coef, error_log2=round(float(mp.log(err, 2)), 2),
                                       form="gelu(-a) = -a exp(-a^2 / 2) P(a) / Q(a), a = |x|",
                                       interval="a in [0, 10.25 sqrt(2)]", error="relative")
    return out


def render(data: dict) -> str:
    return json.dumps(data, indent=1) + "\n"


def main(argv=None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    mode = next((a for a in args if a in ("--write", "--check")), None)
    degrees = dict(a.split("=") for a in args if not a.startswith("--"))
    data = fits(degrees)
    for name, f in data.items():
        print(f"# {name}: {f['form']}, {f['interval']}, max {f['error']} error 2^{f['error_log2']}")
        print(f"{name} = ({', '.join(repr(c) for c in f['coefficients'])})")
    if mode == "--check":
        same = OUT.read_text() == render(data)
        print(f"{OUT}: {'the same as' if same else 'DIFFERS from'} this program's output")
        return 0 if same else 1
    if mode == "--write":
        fd, tmp = tempfile.mkstemp(dir=OUT.parent, prefix=".coefficients-", suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            f.write(render(data))
        os.replace(tmp, OUT)
        print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

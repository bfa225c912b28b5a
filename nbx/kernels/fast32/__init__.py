"""The float32 fast paths, by what they compute. Each module ends with the FastPath records the op
specs hold (nbx/ops/*.py: `fast32=`):

    keys.py     the rounding test: per-element keys, windows, the tile's threshold
    poly.py     fitted coefficients (coefficients.json, from tools/fit_fast32.py), kernel parameters, Horner
    reduce.py   range reduction by pi/2
    trig.py     sin, cos, tan              (SIN, COS, TAN)
    log.py      log from a table; log2, log10, log1p from it; asinh, acosh, atanh as log1p of
                exact arguments   (LOG, LOG2, LOG10, LOG1P, ASINH, ACOSH, ATANH)
    exp.py      exp and expm1 cores from a table; expm1, tanh, sinh, cosh   (EXPM1, TANH, SINH, COSH)
    activations.py  sigmoid, silu, mish, selu, elu, celu, gelu's tanh and erf forms on exp.py's
                cores, log_sigmoid and softplus with log.py's log1p core, hardswish; the gates
                of glu and swiglu (silu_and_mul) on exp's core
                                (SIGMOID, SILU, MISH, SELU, ELU, CELU, LOG_SIGMOID, SOFTPLUS,
                                 HARDSWISH, GLU, SWIGLU; gelu's records are on its spec)
    pow.py      pow as exp(b log|a|): log|a| in double-double on log.py's reduction, exp.py's core
                with the product's low part   (POW)
    atan.py     atan, asin, acos and atan2 on one table-driven atan core   (ATAN, ASIN, ACOS, ATAN2)
    cbrt.py     cbrt: float32 cbrtf and one Halley step in float64   (CBRT)
    rsqrt.py    rsqrt                       (RSQRT)
    erf.py      erf as one rational         (ERF)
    erfc.py     erfc as exp(-x^2) times one rational; gelu's erf form takes it   (ERFC)
    divide.py   division steps; the exact floor and trunc quotients (FLOOR_QUOTIENT, TRUNC_QUOTIENT)

docs/PRECISION.md gives the rounding argument; bench/fast32_exhaustive.py checks every float32 input.
"""

"""The float32 fast paths, by what they compute. Each module ends with the FastPath records the op
specs hold (nbx/ops/*.py: `fast32=`):

    keys.py     the rounding test: per-element keys, windows, the tile's threshold
    poly.py     fitted coefficients (coefficients.json, from tools/fit_fast32.py), kernel parameters, Horner
    reduce.py   range reduction by pi/2
    trig.py     sin, cos, tan              (SIN, COS, TAN)
    log.py      log from a table; log2, log10, log1p from it; asinh, acosh, atanh as log1p of
                exact arguments   (LOG, LOG2, LOG10, LOG1P, ASINH, ACOSH, ATANH)
    exp.py      exp and expm1 cores from a table; expm1, tanh, sinh, cosh   (EXPM1, TANH, SINH, COSH)
    activations.py  sigmoid, silu, mish, selu, gelu's tanh and erf forms on exp.py's cores,
                log_sigmoid with log.py's unit log1p core, hardswish; the gates of glu and swiglu
                (silu_and_mul) on libdevice's exp
                                (SIGMOID, SILU, MISH, SELU, LOG_SIGMOID, HARDSWISH, GLU, SWIGLU;
                                 gelu's records are on its spec)
    rsqrt.py    rsqrt                       (RSQRT)
    libm.py     libdevice's atan2 and pow, their settling deferred to the exact bodies (ATAN2, POW)
    erf.py      erf as one rational         (ERF)
    erfc.py     erfc as exp(-x^2) times one rational; gelu's erf form takes it   (ERFC)
    divide.py   division steps; the exact floor and trunc quotients (FLOOR_QUOTIENT, TRUNC_QUOTIENT)

docs/PRECISION.md gives the rounding argument; bench/fast32_exhaustive.py checks every float32 input.
"""

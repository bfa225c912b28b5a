"""The float32 fast paths, by what they compute. Each module ends with the FastPath records the op
specs hold (nbx/ops/*.py: `fast32=`):

    keys.py     the rounding test: per-element keys, windows, the tile's threshold
    poly.py     fitted coefficients (coefficients.json, from tools/fit_fast32.py), kernel parameters, Horner
    reduce.py   range reduction by pi/2
    trig.py     sin, cos, tan              (SIN, COS, TAN)
    log.py      log from a table            (LOG)
    rsqrt.py    rsqrt                       (RSQRT)
    erf.py      erf as one rational         (ERF)
    divide.py   division steps; the exact floor and trunc quotients (FLOOR_QUOTIENT, TRUNC_QUOTIENT)

docs/PRECISION.md gives the rounding argument; bench/fast32_exhaustive.py checks every float32 input.
"""

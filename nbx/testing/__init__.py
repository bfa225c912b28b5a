"""Testing one's own kernels with nbx's harness.

    from nbx.testing import assert_ulp_close, assert_correctly_rounded
    assert_ulp_close(my_exp(x), exact, max_ulp=1)             # ulps as the harness measures them
    assert_correctly_rounded(my_exp, "exp", "float32")         # the op's bank and sweep, its oracles
    from nbx.testing import strategies                         # hypothesis: values, bits, shapes, tensors

The pytest plugin (nbx/pytest_plugin.py) gives the `nbx_verify` fixture and `--nbx-profile`.
`strategies` needs hypothesis; the rest needs only nbx.
"""
from nbx.testing.assertions import assert_bits_equal, assert_correctly_rounded, assert_ulp_close, bits, host
from nbx.testing.checks import Check, check_op, check_reference
from nbx.testing.values import integers, randoms, specials

__all__ = ["assert_ulp_close", "assert_correctly_rounded", "assert_bits_equal", "bits", "host", "specials",
           "randoms", "integers", "check_op", "check_reference", "Check"]

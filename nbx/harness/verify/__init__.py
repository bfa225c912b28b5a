"""nbx.verify: the precision of any callable on arrays, against nbx's oracle of an op or the user's
own mpmath definition of an op nbx does not have (measure.py); the Verification it returns
(result.py); the user op lent to the harness for one call (userop.py)."""
from nbx.harness.verify.measure import verify
from nbx.harness.verify.result import Verification

__all__ = ["Verification", "verify"]

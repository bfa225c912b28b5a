"""Where nbx's committed data and its reports live, found without importing anything heavy (the CLI's
parser uses it): the checkout when nbx runs from one, else the data a wheel installed in the package.

A checkout holds reference_bank/ and reports/budgets/ beside nbx/; a wheel maps both into the
package as nbx/data/reference_bank/ and nbx/data/reports/budgets/ (setup.py), the same layout under
one root. $NBX_DATA names another root of that layout."""
from __future__ import annotations

import os
from pathlib import Path

# The nbx package, and the folder that holds it: a checkout when developing, site-packages when
# installed from a wheel.
PACKAGE = Path(__file__).resolve().parent
CHECKOUT = PACKAGE.parent
PACKAGED_DATA = PACKAGE / "data"


def is_checkout(path: Path = CHECKOUT) -> bool:
    """Whether `path` is nbx's source checkout: pyproject.toml and the bank's manifest beside nbx/."""
    return (path / "pyproject.toml").is_file() and (path / "reference_bank" / "MANIFEST.json").is_file()


def data_root() -> Path:
    """The folder that holds reference_bank/ and reports/budgets/: $NBX_DATA when set, else the
    checkout when nbx runs from one (so `nbx bank refresh` and `nbx gate --update` write the
    reviewed files), else the data the wheel installed inside the package."""
    env = os.environ.get("NBX_DATA")
    if env:
        return Path(env).expanduser().resolve()
    return CHECKOUT if is_checkout() else PACKAGED_DATA


def reports_root() -> Path:
    """Where reports go by default: reports/ of the checkout when developing, else reports/ under
    the current directory (an installed package's folder is no place for them)."""
    return CHECKOUT / "reports" if is_checkout() else Path.cwd() / "reports"

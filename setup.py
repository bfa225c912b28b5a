"""The wheel's data, mapped into the package: the committed bank and budgets install as
nbx/data/reference_bank/ and nbx/data/reports/budgets/, the layout of a checkout under one root
(nbx.harness.records.files.data_root finds them). The rest of the configuration is pyproject.toml."""
import warnings

from setuptools import find_namespace_packages, setup

# The bank's folders are data, not packages: its op folders named like identifiers (abs, exp) would
# each draw setuptools' "importable package absent from `packages`" warning.
warnings.filterwarnings("ignore", message=r"Package 'nbx\.data\.")

DATA = {"nbx.data.reference_bank": "reference_bank", "nbx.data.reports.budgets": "reports/budgets"}

setup(packages=find_namespace_packages(include=["nbx", "nbx.*"], exclude=["*.__pycache__"]) + list(DATA),
      package_dir=DATA)

"""nbx's imports run one way, down the layers; the oracles import nothing of nbx outside nbx.oracles; the harness has no cycle
(and imports no private name of another module).

Read from the source with `ast` (nothing is imported): every Import and ImportFrom anywhere in a file,
inside functions too, and `__import__("x")` / `importlib.import_module("x")` with a literal name,
because a deferred import is still an edge of the graph. Layers, lowest first:

    dtype/promotion (nbx.dtype, nbx.promotion, nbx.errors, nbx.paths) -> backend (nbx.backend) -> tensor
    -> kernels -> ops -> oracles (nbx.oracles, self-contained) -> harness -> cli (nbx.cli, nbx.__main__)
    -> testing (nbx.testing, nbx.pytest_plugin) -> top (the nbx package itself, nbx/__init__.py)

A module may import its own layer or lower. `from P import x` imports the module P.x when it is one,
else P: so `from .. import empty` in nbx/harness/ is an import of the top package, which only the cli
may import. The implicit import of a module's parent packages is not an edge (every submodule has
it, and Python runs the parents first either way).

KNOWN_UPWARD and KNOWN_HARNESS_CYCLES list the offenders that remain, each to be fixed in its own
file. They may only shrink: a new offender fails, and so does an entry that no longer occurs.
"""
from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("nbx",)

# (layer name, module prefixes): a module is in the first layer with a prefix equal to its name or
# a package above it; "nbx" (the top) matches only the package itself.
LAYERS = (
    ("dtype/promotion", ("nbx.dtype", "nbx.promotion", "nbx.errors", "nbx.paths")),
    ("backend", ("nbx.backend",)),
    ("tensor", ("nbx.tensor",)),
    ("kernels", ("nbx.kernels",)),
    ("ops", ("nbx.ops",)),
    ("oracles", ("nbx.oracles",)),
    ("harness", ("nbx.harness",)),
    ("cli", ("nbx.cli", "nbx.__main__")),
    ("testing", ("nbx.testing", "nbx.pytest_plugin")),
    ("top", ("nbx",)),
)
TOP = "nbx"
CLI = "cli"

# (importer, imported) -> why it is allowed for now. Remove an entry when its import is fixed.
KNOWN_UPWARD: dict[tuple[str, str], str] = {}

# Strongly connected components of the harness-internal import graph -> why allowed for now.
KNOWN_HARNESS_CYCLES: dict[frozenset[str], str] = {}


# ---------------------------------------------------------------------- the graph, from the source
def _modules() -> dict[str, tuple[Path, bool]]:
    """Module name -> (file, is a package's __init__) for every .py file under PACKAGES."""
    out = {}
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            rel = path.relative_to(ROOT).with_suffix("")
            parts = list(rel.parts)
            if "__pycache__" in parts:
                continue
            is_pkg = parts[-1] == "__init__"
            if is_pkg:
                parts.pop()
            out[".".join(parts)] = (path, is_pkg)
    return out


MODULES = _modules()


def _ours(name: str) -> bool:
    return name.split(".")[0] in PACKAGES


def _known(name: str) -> str:
    """`name`, or the longest module it starts with (an attribute path names its module)."""
    parts = name.split(".")
    for n in range(len(parts), 0, -1):
        if ".".join(parts[:n]) in MODULES:
            return ".".join(parts[:n])
    return name


def _literal_import(node: ast.Call) -> str | None:
    """The module of `__import__("x")` or `importlib.import_module("x")` (absolute, literal names)."""
    f = node.func
    called = f.id if isinstance(f, ast.Name) else (f.attr if isinstance(f, ast.Attribute) else None)
    if called not in ("__import__", "import_module") or not node.args:
        return None
    if called == "import_module" and (len(node.args) > 1 or node.keywords):
        return None     # relative to a package given at run time
    arg = node.args[0]
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and not arg.value.startswith("."):
        return arg.value
    return None


def _imports(module: str) -> list[tuple[str, int]]:
    """(imported module, line) for every import in `module`'s file, resolved to module names."""
    path, is_pkg = MODULES[module]
    package = module if is_pkg else module.rpartition(".")[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            out += [(_known(a.name), node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package.split(".")
                if node.level - 1 >= len(base_parts):
                    raise AssertionError(f"{path}:{node.lineno}: relative import above the top package")
                base = ".".join(base_parts[:len(base_parts) - (node.level - 1)])
                base = f"{base}.{node.module}" if node.module else base
            else:
                base = node.module
            for a in node.names:
                sub = f"{base}.{a.name}"
                out.append((sub if sub in MODULES else _known(base), node.lineno))
        elif isinstance(node, ast.Call):
            name = _literal_import(node)
            if name is not None:
                out.append((_known(name), node.lineno))
    return out


def _edges() -> dict[tuple[str, str], list[str]]:
    """(importer, imported) -> ["file:line", ...] over our modules; self-imports dropped."""
    edges = defaultdict(list)
    for module in MODULES:
        for target, line in _imports(module):
            if not _ours(target) or target == module:
                continue
            where = f"{MODULES[module][0].relative_to(ROOT)}:{line}"
            if where not in edges[module, target]:
                edges[module, target].append(where)
    return dict(edges)


EDGES = _edges()


def layer_of(module: str) -> int | None:
    for i, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if module == p or (p != TOP and module.startswith(p + ".")):
                return i
    return None


def _layer_name(module: str) -> str:
    return LAYERS[layer_of(module)][0]


def _upward() -> dict[tuple[str, str], list[str]]:
    out = {}
    for (src, dst), where in EDGES.items():
        ls, ld = layer_of(src), layer_of(dst)
        if ls is None or ld is None or ld <= ls:
            continue
        if dst == TOP and LAYERS[ls][0] == CLI:
            continue     # the cli runs everything through the public package
        out[src, dst] = where
    return out


def _fmt(edges) -> str:
    return "\n".join(f"  {s} ({_layer_name(s)}) -> {d} ({_layer_name(d)})  at {', '.join(EDGES[s, d])}"
                     for s, d in sorted(edges))


# ---------------------------------------------------------------------- tests
def test_every_module_has_a_layer():
    missing = sorted(m for m in MODULES if layer_of(m) is None)
    assert not missing, f"modules in no layer (add them to LAYERS in {Path(__file__).name}): {missing}"
    unresolved = sorted({d for (_, d) in EDGES if d not in MODULES})
    assert not unresolved, f"imports of nbx/oracles modules that do not exist: {unresolved}"


def test_the_graph_is_read():
    # the reader finds deferred and relative imports (a reader that sees nothing passes every test)
    assert ("nbx.ops.registry", "nbx.kernels.iterate") in EDGES
    assert ("nbx.cli", "nbx.harness.run.runner") in EDGES          # inside a function
    assert ("nbx.kernels.iterate", "nbx.tensor") in EDGES      # `from ..tensor import`
    assert ("nbx.kernels.iterate", "nbx.dtype") in EDGES       # `from .. import dtype`


def test_tensor_imports_nothing_above_the_backend():
    above = sorted(d for (s, d) in EDGES if s == "nbx.tensor" and layer_of(d) > layer_of("nbx.backend"))
    assert not above, f"nbx/tensor.py imports {above}; the ops install the Tensor's operators instead"


def test_no_new_upward_imports():
    new = set(_upward()) - set(KNOWN_UPWARD)
    assert not new, ("imports into a higher layer (import down the layers only; see this file's "
                     "docstring):\n" + _fmt(new))


def test_known_upward_only_shrinks():
    gone = sorted(set(KNOWN_UPWARD) - set(_upward()))
    assert not gone, ("KNOWN_UPWARD entries that no longer occur; remove them so the allowance only "
                      f"shrinks: {gone}")


def test_oracles_import_nothing_of_nbx():
    inside = lambda m: m == "nbx.oracles" or m.startswith("nbx.oracles.")  # noqa: E731
    bad = {(s, d) for (s, d) in EDGES if inside(s) and not inside(d)}
    assert not bad, "nbx/oracles/ must import nothing of nbx outside it:\n" + _fmt(bad)


def test_the_cli_alone_imports_the_top_package():
    # also covered by the layer rule; stated on its own because `from .. import x` hides it
    bad = {(s, d) for (s, d) in EDGES if d == TOP and _layer_name(s) not in (CLI, "top")}
    assert not bad - set(KNOWN_UPWARD), "only nbx/__init__.py and the cli import the top package:\n" + \
        _fmt(bad - set(KNOWN_UPWARD))


# ---------------------------------------------------------------------- harness cycles
def _sccs(nodes, edges) -> list[frozenset[str]]:
    """Tarjan's strongly connected components that hold a cycle (more than one node, or a self-edge)."""
    succ = defaultdict(list)
    for s, d in edges:
        succ[s].append(d)
    index, low, on_stack, stack, out = {}, {}, set(), [], []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v); on_stack.add(v)
        for w in sorted(succ[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop(); on_stack.discard(w); comp.add(w)
                if w == v:
                    break
            if len(comp) > 1 or (v, v) in edges:
                out.append(frozenset(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def _in_harness(m: str) -> bool:
    return m == "nbx.harness" or m.startswith("nbx.harness.")


def _harness_cycles() -> list[frozenset[str]]:
    nodes = [m for m in MODULES if _in_harness(m)]
    edges = {(s, d) for (s, d) in EDGES if _in_harness(s) and _in_harness(d)}
    return _sccs(nodes, edges)


def _fmt_cycle(comp) -> str:
    inner = sorted((s, d) for (s, d) in EDGES if s in comp and d in comp)
    return f"  {sorted(comp)}\n" + "\n".join(f"    {s} -> {d}  at {', '.join(EDGES[s, d])}" for s, d in inner)


def test_sccs():
    edges = {("a", "b"), ("b", "a"), ("b", "c"), ("c", "c"), ("d", "e")}
    assert sorted(map(sorted, _sccs("abcde", edges))) == [["a", "b"], ["c"]]


def test_no_new_harness_cycles():
    new = [c for c in _harness_cycles() if not any(c <= k for k in KNOWN_HARNESS_CYCLES)]
    assert not new, ("import cycles inside nbx/harness/ (function-level imports count):\n"
                     + "\n".join(map(_fmt_cycle, new)))


def test_known_harness_cycles_only_shrink():
    found = set(_harness_cycles())
    stale = [k for k in KNOWN_HARNESS_CYCLES if k not in found]
    assert not stale, ("KNOWN_HARNESS_CYCLES entries that are no longer a cycle as listed; replace each "
                       "with what remains of it (or remove it) so the allowance only shrinks:\n"
                       + "\n".join(f"  {sorted(k)} -> now: {[sorted(c) for c in found if c <= k]}"
                                   for k in stale))


def test_harness_imports_no_private_names():
    # `from .m import _x` in nbx/harness/: a name another module needs is public in its module
    bad = []
    for module in (m for m in MODULES if _in_harness(m)):
        path = MODULES[module][0]
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.ImportFrom) and (node.level or _ours(node.module or "")):
                bad += [f"{path.relative_to(ROOT)}:{node.lineno}: {a.name}" for a in node.names
                        if a.name.startswith("_")]
    assert not bad, "private names imported from another module (make them public):\n  " + "\n  ".join(bad)


def test_known_entries_state_a_reason():
    for entry, why in [*KNOWN_UPWARD.items(), *KNOWN_HARNESS_CYCLES.items()]:
        assert why.strip(), f"KNOWN entry {entry} needs its one-line reason"


# ---------------------------------------------------------------------- the installed Tensor methods
def test_ops_install_the_tensor_operators():
    import nbx
    from nbx.ops import methods

    names = ["contiguous", "clone", "to", "copy_"]
    names += [f"__{s}__" for s, _ in methods.BINARY] + [f"__r{s}__" for s, _ in methods.BINARY]
    names += [f"__{s}__" for s, _ in methods.COMPARE + methods.UNARY]
    for name in names:
        fn = nbx.Tensor.__dict__.get(name)
        assert fn is not None and fn.__module__ == "nbx.ops.methods", name
    t = nbx.tensor([1.0, 2.0])
    assert hash(t) == object.__hash__(t)



@pytest.mark.parametrize("code", [
    "import nbx; import nbx.ops; assert len(nbx.ops.OPS) == 100",
    "from nbx.tensor import Tensor; import nbx.ops",
    "import nbx.harness.run.runner",
    "import nbx.dtype; import nbx; assert nbx.tensor([1.0]).numpy()[0] == 1.0",
    "import nbx.kernels.launch; import nbx; nbx.exp",
    "import nbx.tensor; import nbx; assert nbx.tensor([2.0]).numpy()[0] == 2.0",
    "from nbx.tensor import Tensor; import nbx; nbx.tensor([1.0]); assert callable(nbx.tensor)",
])
def test_any_import_order_works(code):
    """nbx loads its public names lazily; importing a submodule first must not meet that half-done."""
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]


# The harness's folders, lowest first: each imports only its own folder and those below it, so the
# pipeline inputs -> run -> scoring -> records -> gate -> report reads down the imports too.
HARNESS_ORDER = ("progress", "records", "targets", "inputs", "scoring", "suites", "api", "run", "gate", "report",
                 "verify")


def _harness_part(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[:2] == ["nbx", "harness"] else None


def test_every_harness_folder_is_in_the_order():
    found = {_harness_part(m) for m in MODULES} - {None}
    assert found == set(HARNESS_ORDER), f"harness folders not in HARNESS_ORDER: {found ^ set(HARNESS_ORDER)}"


def test_harness_folders_import_downward():
    bad = {(s, d) for (s, d) in EDGES if _harness_part(s) and _harness_part(d) and
           HARNESS_ORDER.index(_harness_part(d)) > HARNESS_ORDER.index(_harness_part(s))}
    assert not bad, "harness imports up the pipeline (HARNESS_ORDER):\n" + _fmt(bad)

"""Two per-launch costs of Triton's interpreter (triton 3.6, runtime/interpreter.py) that change no
result, removed:

- **Integer overflow sanitizing.** Every int8..int32 add, sub and mul also computes in int64 and
  compares with the type's bounds for a `device_assert` that the interpreter drops unless
  `options.debug` is set (semantic.py `device_assert`), so with debug off the work is dead:
  `sanitize_overflow=False` skips it. 33% of the interpreter's time in a layout run of sin, add and
  where (cProfile, 2-core machine).
- **Re-patching triton.language on every device-function call.** `InterpretedFunction.__call__`
  runs `_patch_lang(fn)` for each @jit helper a kernel calls: `inspect.getmembers` over tl, tl.core,
  tl.math and tl.tensor, finding every builtin already patched by the launch (`GridExecutor`
  patches the same modules and restores them when the launch ends). Once the modules a function
  sees are patched in this launch, the call skips it: 25% of the same run.

With `debug` set (TRITON_INTERPRET's debugging), both stay as Triton has them.
"""
from __future__ import annotations

import dataclasses
import inspect

import triton.language as tl
from triton.runtime import interpreter as _interp

_patched: set[int] = set()          # ids of the language modules the running launch has patched


class _LaunchScope:
    """The launch's patch scope; restoring it ends the launch's patches."""

    def __init__(self, scope):
        self.scope = scope

    def restore(self) -> None:
        _patched.clear()
        self.scope.restore()


_LANGUAGES: dict = {}               # function -> the language modules its globals name


def _languages(fn) -> list:
    langs = _LANGUAGES.get(fn)
    if langs is None:
        langs = _LANGUAGES[fn] = [v for v in fn.__globals__.values() if inspect.ismodule(v) and v in (tl, tl.core)]
    return langs


def _patch_lang_once(fn, _patch=_interp._patch_lang):
    """_patch_lang, skipped where every language module fn sees is patched already."""
    langs = _languages(fn)
    if langs and all(id(m) in _patched for m in langs):
        return _interp._LangPatchScope()          # nothing to undo
    scope = _patch(fn)
    _patched.update(id(m) for m in langs)
    return _LaunchScope(scope)


def install() -> None:
    """Once per process, and only with debug off."""
    builder = _interp.interpreter_builder
    if builder.options.debug or _interp._patch_lang is _patch_lang_once:
        return
    builder.options = dataclasses.replace(builder.options, sanitize_overflow=False)
    _interp._patch_lang = _patch_lang_once

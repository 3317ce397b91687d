"""`dpfair/_native.pyi` describes the extension module: the same public names, and the same
methods on its classes."""

from __future__ import annotations

import ast
from pathlib import Path

from dpfair import _native

STUB = Path(__file__).resolve().parents[1] / "dpfair" / "_native.pyi"


def _public(names) -> set:
    return {n for n in names if not n.startswith("_")}


def test_the_stub_names_what_the_module_has():
    tree = ast.parse(STUB.read_text())
    top = {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    assert _public(top) == _public(dir(_native)) - {"annotations"}
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name != "BudgetExceededError":
            stubbed = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
            real = _public(vars(getattr(_native, node.name)))
            assert _public(stubbed) == real, node.name

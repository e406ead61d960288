"""The type stubs (leveldb_table/_native.pyi) describe the extension exactly: every class,
function, method, property and attribute it has, with the same parameters and defaults;
nothing in the stubs that the extension lacks."""

import ast
import inspect
from pathlib import Path

import pytest

import leveldb_table
import leveldb_table._native as native

STUB = Path(leveldb_table.__file__).with_name("_native.pyi")
# Special methods a stub must declare when the class has them (they give the class its
# protocol: iteration, len(), with-blocks). __repr__ and the like come from object.
PROTOCOL = {"__iter__", "__next__", "__len__", "__enter__", "__exit__"}


def stub_tree():
    return ast.parse(STUB.read_text())


def stub_params(fn):
    """[(name, kind, default)] of a stub's def, without self."""
    a = fn.args
    out = []
    positional = a.posonlyargs + a.args
    defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    for arg, d in zip(positional, defaults):
        out.append((arg.arg, "positional", None if d is None else ast.literal_eval(d)))
    if a.vararg:
        out.append(("*", "var_positional", None))
    for arg, d in zip(a.kwonlyargs, a.kw_defaults):
        out.append((arg.arg, "keyword", None if d is None else ast.literal_eval(d)))
    if a.kwarg:
        out.append(("**", "var_keyword", None))
    return [p for p in out if p[0] != "self"]


def runtime_params(obj):
    """The same of a function, method or class as the extension declares it."""
    out = []
    for p in inspect.signature(obj).parameters.values():
        if p.name == "self":
            continue
        if p.kind is p.VAR_POSITIONAL:
            out.append(("*", "var_positional", None))
        elif p.kind is p.VAR_KEYWORD:
            out.append(("**", "var_keyword", None))
        else:
            kind = "keyword" if p.kind is p.KEYWORD_ONLY else "positional"
            out.append((p.name, kind, None if p.default is p.empty else p.default))
    return out


def public(names):
    return {n for n in names if not n.startswith("_")}


def test_every_name_of_the_extension_is_in_the_stubs():
    tree = stub_tree()
    stubbed = {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    assert public(stubbed) == public(dir(native))


def test_every_name_the_package_exports_exists():
    for name in leveldb_table.__all__:
        assert hasattr(leveldb_table, name), name


def test_functions_match():
    for node in stub_tree().body:
        if isinstance(node, ast.FunctionDef):
            assert stub_params(node) == runtime_params(getattr(native, node.name)), node.name


CLASSES = [n for n in stub_tree().body if isinstance(n, ast.ClassDef)]


@pytest.mark.parametrize("node", CLASSES, ids=lambda n: n.name)
def test_class_matches(node):
    cls = getattr(native, node.name)
    defs = {n.name: n for n in node.body if isinstance(n, ast.FunctionDef)}
    attrs = {
        n.target.id
        for n in node.body
        if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)
    }
    members = vars(cls)
    # Every public method, property and attribute, and the protocol methods.
    want = public(members) | (PROTOCOL & set(members))
    assert (set(defs) - {"__init__"}) | attrs == want
    for name, fn in defs.items():
        if name == "__init__":
            assert stub_params(fn) == runtime_params(cls), f"{node.name}()"
            continue
        member = members[name]
        is_property = any(
            isinstance(d, ast.Name) and d.id == "property" for d in fn.decorator_list
        )
        if inspect.isdatadescriptor(member):
            assert is_property, f"{node.name}.{name} is a property"
        else:
            assert not is_property, f"{node.name}.{name} is a method"
            if name not in PROTOCOL or name in ("__enter__", "__exit__"):
                assert stub_params(fn) == runtime_params(member), f"{node.name}.{name}"
    # Attributes are data descriptors (read-only fields), never methods.
    for name in attrs:
        assert inspect.isdatadescriptor(members[name]), f"{node.name}.{name}"
    # A class the stubs say can be made must be makeable, and the others not.
    if "__init__" not in defs:
        with pytest.raises(TypeError):
            cls()

"""The package's structure: one folder per SPEC chapter, imports that run one way.

Every import is read from the source (function-local ones included): there is no
circle, no module imports a higher layer, the library never imports the CLI,
and every package re-exports its public names with ``__all__``.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "mc"
# Lowest first; a module may import its own layer and the layers below it.
LAYERS = [
    ("mc._validate", "mc._version", "mc.units", "mc._json", "mc._launch"),
    ("mc._pytree", "mc._fields"),
    ("mc.kernels",),
    ("mc.engine",),
    ("mc.serving",),
    ("mc.fleet",),
    ("mc.buy",),
    ("mc.files",),
    ("mc.telemetry",),
    ("mc.studies",),
    ("mc.cli",),
]


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in PKG.rglob("*.py")}


def is_package(name: str) -> bool:
    return MODULES.get(name, Path()).name == "__init__.py"


def layer(name: str) -> int:
    for i, names in enumerate(LAYERS):
        if any(name == n or name.startswith(n + ".") for n in names):
            return i
    return len(LAYERS)  # the package root, mc/__init__.py


def imports(name: str) -> set[str]:
    """Modules of ``mc`` that module ``name`` imports, anywhere in its body."""
    path = MODULES[name]
    here = name if is_package(name) else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.split(".")[0] == "mc"}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here
                for _ in range(node.level - 1):
                    base = base.rpartition(".")[0]
                src = f"{base}.{node.module}" if node.module else base
            else:
                src = node.module or ""
            if src.split(".")[0] != "mc":
                continue
            for a in node.names:
                sub = f"{src}.{a.name}"
                out.add(sub if sub in MODULES else src)
    # Importing from another package runs that package's __init__.
    own = here
    for target in list(out):
        parent = target.rpartition(".")[0]
        while parent and parent != "mc" and not own.startswith(parent):
            out.add(parent)
            parent = parent.rpartition(".")[0]
    out.discard(name)
    return out


GRAPH = {name: imports(name) for name in MODULES}


def test_no_import_circles():
    seen, stack, on_stack, cycles = {}, [], set(), []

    def visit(n):
        seen[n] = True
        stack.append(n)
        on_stack.add(n)
        for m in GRAPH[n]:
            if m in on_stack:
                cycles.append(stack[stack.index(m):] + [m])
            elif m not in seen:
                visit(m)
        stack.pop()
        on_stack.discard(n)

    for n in sorted(GRAPH):
        if n not in seen:
            visit(n)
    assert not cycles, cycles


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_import_from_a_higher_layer(name):
    if name == "mc":
        return
    up = sorted(m for m in GRAPH[name] if layer(m) > layer(name))
    assert not up, f"{name} (layer {layer(name)}) imports {up}"


def test_nothing_imports_the_package_root_or_the_cli():
    for name, targets in GRAPH.items():
        assert "mc" not in targets, f"{name} imports the package root"
        if layer(name) < layer("mc.cli"):
            assert not any(t.startswith("mc.cli") for t in targets), name


def test_experiments_and_figures_import_the_library_not_the_cli():
    for path in [*ROOT.glob("experiments/*.py"), *ROOT.glob("figures/*.py")]:
        text = path.read_text()
        assert "mc.cli" not in text, path


def test_few_modules_at_the_top():
    top = [p.name for p in PKG.glob("*.py")]
    assert len(top) <= 10, top


@pytest.mark.parametrize("name", sorted(n for n in MODULES if is_package(n)))
def test_packages_declare_all(name):
    tree = ast.parse(MODULES[name].read_text())
    names = [t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets
             if isinstance(t, ast.Name)]
    if name == "mc.cli":
        return  # the command line: ``main`` only
    assert "__all__" in names, name
    module = __import__(name, fromlist=["__all__"])
    for public in module.__all__:
        assert hasattr(module, public), (name, public)


def test_the_face_is_what_a_user_calls():
    """``mc.__all__`` names what a user calls; the internals are reachable by their
    packages but not listed, and the package's earlier names are one-line errors."""
    import mc

    assert not {"kernels", "engine", "numpy_month", "procurement", "procurement_presets"} & set(mc.__all__)
    assert {"load_scenario", "simulate", "sweep", "calibrate", "sensitivity", "buy", "card", "simulate_latency",
            "telemetry", "fit", "emit", "rule", "Policy", "declare"} <= set(mc.__all__)
    assert len(mc.__all__) == len(set(mc.__all__)) and all(hasattr(mc, name) for name in mc.__all__)
    import mc.engine
    import mc.kernels
    import mc.studies.numpy_month  # noqa: F401  reachable by their packages
    for old, new in (("procurement", "mc.buy"), ("procurement_presets", "mc.buy.presets"),
                     ("numpy_month", "mc.studies.numpy_month")):
        with pytest.raises(AttributeError, match=f"^mc.{old} is now {new}$"):
            getattr(mc, old)


def test_test_files_have_unique_names():
    """pytest imports a test file by its basename (the tests have no __init__.py):
    two files of one name in different folders fail to collect in a full run."""
    seen: dict[str, list[str]] = {}
    for p in sorted((ROOT / "tests").rglob("test_*.py")):
        seen.setdefault(p.name, []).append(str(p.relative_to(ROOT)))
    assert not {k: v for k, v in seen.items() if len(v) > 1}

"""The add-on's modules import each other without a loop, read from their source with ``ast``
(no Blender, nothing imported).

A loop of module-level imports breaks as soon as its modules are imported in another order
(the first one finds the other half-built); one closed only through imports inside functions
works, but ties the modules into one lump no newcomer can read one at a time, so the Blender
layer has none of those either. The solver, below everything, never imports the Blender layer.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.helpers import REPO_ROOT

PACKAGE = "quat_ik_addon"
PACKAGE_DIR = REPO_ROOT / PACKAGE


def _module_name(path: Path) -> str:
    parts = path.relative_to(REPO_ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(path): path for path in sorted(PACKAGE_DIR.rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.Module, *, inside_functions: bool):
    """Import statements of a module: at module level (``if TYPE_CHECKING:`` blocks left out,
    they never run), and with ``inside_functions`` those in function bodies too."""
    pending: list[ast.AST] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, ast.If) and _is_type_checking(node.test):
            pending.extend(node.orelse)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            if inside_functions:
                yield from (inner for inner in ast.walk(node) if isinstance(inner, (ast.Import, ast.ImportFrom)))
        else:
            pending.extend(ast.iter_child_nodes(node))


def _targets(module: str, node: ast.Import | ast.ImportFrom) -> set[str]:
    """The add-on's modules an import statement runs: the named ones and the packages above them
    (other than the importer's own, which are running already)."""
    is_package = MODULES[module].name == "__init__.py"
    if isinstance(node, ast.Import):
        named = {alias.name for alias in node.names}
    else:
        if node.level:
            base = module.split(".") if is_package else module.split(".")[:-1]
            base = base[: len(base) - (node.level - 1)]
            source = ".".join(base + ([node.module] if node.module else []))
        else:
            source = node.module or ""
        # ``from package import name`` runs the submodule ``name`` where there is one.
        named = {source} | {f"{source}.{alias.name}" for alias in node.names}
    own_packages = {".".join(module.split(".")[:i]) for i in range(1, module.count(".") + 2)}
    found = set()
    for name in named:
        parts = name.split(".")
        for end in range(1, len(parts) + 1):
            candidate = ".".join(parts[:end])
            if candidate in MODULES and candidate not in own_packages:
                found.add(candidate)
    return found


def import_graph(*, inside_functions: bool, within: str = PACKAGE) -> dict[str, set[str]]:
    """{module: the add-on's modules it imports} for the modules under ``within``."""
    graph = {}
    for module, path in MODULES.items():
        if module == within or module.startswith(within + "."):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            targets = set()
            for node in _imports(tree, inside_functions=inside_functions):
                targets |= _targets(module, node)
            graph[module] = {t for t in targets if t != module and (t == within or t.startswith(within + "."))}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import loop as [a, b, ..., a], or None (depth-first search for an edge back onto the path)."""
    done: set[str] = set()
    for start in sorted(graph):
        if start in done:
            continue
        path, on_path = [start], {start}
        branches = [iter(sorted(graph[start]))]
        while branches:
            following = next(branches[-1], None)
            if following is None:  # every import of the module at the path's end followed
                finished = path.pop()
                on_path.discard(finished)
                done.add(finished)
                branches.pop()
            elif following in on_path:
                return [*path[path.index(following) :], following]
            elif following not in done:
                path.append(following)
                on_path.add(following)
                branches.append(iter(sorted(graph.get(following, ()))))
    return None


def test_the_cycle_finder_names_a_loop_and_passes_a_tree() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_the_graph_reads_relative_imports_and_submodules() -> None:
    graph = import_graph(inside_functions=True)
    assert "quat_ik_addon.blender.chains.settings" in graph["quat_ik_addon.blender.operators.chain"]
    assert "quat_ik_addon.solver.quaternion" in graph["quat_ik_addon.solver.euler_angles"]
    assert "quat_ik_addon.blender.runtime.handlers" in graph[PACKAGE]  # (imported inside register())
    assert "quat_ik_addon.blender.runtime.handlers" not in import_graph(inside_functions=False)[PACKAGE]


def test_module_level_imports_form_no_loop() -> None:
    cycle = find_cycle(import_graph(inside_functions=False))
    assert cycle is None, "module-level imports loop: " + " -> ".join(cycle)


def test_the_blender_layer_has_no_loop_even_through_imports_inside_functions() -> None:
    cycle = find_cycle(import_graph(inside_functions=True, within=f"{PACKAGE}.blender"))
    assert cycle is None, "the Blender layer's imports loop: " + " -> ".join(cycle)


@pytest.mark.parametrize("inside_functions", [False, True], ids=["module level", "inside functions"])
def test_the_solver_never_imports_the_blender_layer(inside_functions: bool) -> None:
    graph = import_graph(inside_functions=inside_functions, within=PACKAGE)
    reaching = {
        module: sorted(t for t in targets if t.startswith(f"{PACKAGE}.blender"))
        for module, targets in graph.items()
        if module.startswith(f"{PACKAGE}.solver")
    }
    assert not {module: targets for module, targets in reaching.items() if targets}

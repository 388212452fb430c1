"""The solver never imports ``bpy`` or ``mathutils``: every module under ``quat_ik_addon/solver``
(its subpackages too, ``native`` and any added later) is imported in a fresh Python where both
cannot be imported, and a module that tries names itself and the line that tried.

Each module is imported on its own in that process, so a module whose import fails names the
line that pulled Blender in even when it lies in another solver module it imports; an attempt a
module catches (``try: import bpy``) fails the test too.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.helpers import REPO_ROOT

SOLVER_DIR = REPO_ROOT / "quat_ik_addon" / "solver"
BLENDER_MODULES = ("bpy", "mathutils")

# Runs in a fresh Python: argv = ROOT (on sys.path) and the module names to import. Prints one
# JSON object: {module: [what tried to import Blender, as "bpy from path:line"]}, and
# {module: "error: ..."} for a module that failed to import for any other reason.
IMPORT_EACH = textwrap.dedent(
    """
    import importlib, json, sys, traceback

    root, modules = sys.argv[1], sys.argv[2:]
    sys.path.insert(0, root)
    BLENDER = {blender!r}
    attempts = []

    class RefuseBlender:
        # First on sys.meta_path: an import of bpy or mathutils raises, wherever it comes from.
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLENDER:
                frame = next(
                    (f for f in reversed(traceback.extract_stack()) if not f.filename.startswith("<")),
                    None,
                )
                where = f"{{frame.filename}}:{{frame.lineno}}" if frame else "?"
                attempts.append(f"{{name}} from {{where}}")
                raise ImportError(f"{{name}} may not be imported by the solver")
            return None

    sys.meta_path.insert(0, RefuseBlender())
    for name in BLENDER:
        sys.modules.pop(name, None)
    report = {{}}
    for module in modules:
        attempts.clear()
        try:
            importlib.import_module(module)
        except Exception as error:
            if not attempts:
                report[module] = f"error: {{type(error).__name__}}: {{error}}"
        if attempts:
            report[module] = list(attempts)
    print(json.dumps(report))
    """
).format(blender=BLENDER_MODULES)


def module_names(package_dir: Path, package: str) -> list[str]:
    """Every module under ``package_dir`` as a dotted name (packages with or without an
    ``__init__.py``); ``__main__`` modules are left out: importing one runs its program, and
    what it imports is imported here by name."""
    names = []
    for path in sorted(package_dir.rglob("*.py")):
        parts = path.relative_to(package_dir).with_suffix("").parts
        if parts[-1] == "__main__" or "__pycache__" in parts:
            continue
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names.append(".".join((package, *parts)))
    return names


def blender_imports(root: Path, modules: list[str]) -> dict:
    """{module: what pulled bpy or mathutils in, or why it failed to import} for ``modules``
    imported one by one in a fresh Python with ``root`` on its path."""
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_EACH, str(root), *modules],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_every_solver_module_is_found() -> None:
    names = module_names(SOLVER_DIR, "quat_ik_addon.solver")
    files = [p for p in SOLVER_DIR.rglob("*.py") if p.name != "__main__.py" and "__pycache__" not in p.parts]
    assert len(names) == len(files), sorted(set(map(str, files)))
    assert {"quat_ik_addon.solver", "quat_ik_addon.solver.solve", "quat_ik_addon.solver.native.library"} <= set(names)


def test_no_solver_module_imports_bpy_or_mathutils() -> None:
    report = blender_imports(REPO_ROOT, module_names(SOLVER_DIR, "quat_ik_addon.solver"))
    assert not report, "solver modules that import Blender, or fail to import without it:\n" + "\n".join(
        f"  {module}: {found}" for module, found in sorted(report.items())
    )


def test_the_check_names_a_module_that_imports_blender_even_when_it_catches_the_error(tmp_path: Path) -> None:
    package = tmp_path / "fake_solver"
    (package / "inner").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "clean.py").write_text("import json\n")
    (package / "inner" / "drawing.py").write_text("from mathutils import Vector\n")
    (package / "uses_drawing.py").write_text("from .inner import drawing\n")
    (package / "guarded.py").write_text("try:\n    import bpy\nexcept ImportError:\n    bpy = None\n")
    report = blender_imports(tmp_path, module_names(package, "fake_solver"))
    assert sorted(report) == ["fake_solver.guarded", "fake_solver.inner.drawing", "fake_solver.uses_drawing"]
    assert report["fake_solver.uses_drawing"] == [f"mathutils from {package / 'inner' / 'drawing.py'}:1"]
    assert report["fake_solver.guarded"] == [f"bpy from {package / 'guarded.py'}:2"]

"""The six kernel libraries tools/build_native.py makes: each is the right kind of file for its
platform, exports exactly the functions of abi.FUNCTIONS, loads on this machine and ships in the
add-on's zip."""

from __future__ import annotations

import zipfile
from pathlib import Path

import lief
import pytest

from quat_ik_addon.solver.native import abi, library
from tools.build_native import PLATFORMS, build_native, library_output

# Per platform: the file format, the CPU, and how the format marks a shared library.
EXPECTED_FORMAT = {
    "linux": lief.Binary.FORMATS.ELF,
    "windows": lief.Binary.FORMATS.PE,
    "macos": lief.Binary.FORMATS.MACHO,
}
EXPECTED_CPU = {
    "linux-x64": lief.ELF.ARCH.X86_64,
    "linux-arm64": lief.ELF.ARCH.AARCH64,
    "windows-x64": lief.PE.Header.MACHINE_TYPES.AMD64,
    "windows-arm64": lief.PE.Header.MACHINE_TYPES.ARM64,
    "macos-x64": lief.MachO.Header.CPU_TYPE.X86_64,
    "macos-arm64": lief.MachO.Header.CPU_TYPE.ARM64,
}
ABI_NAMES = {name for name, _, _ in abi.FUNCTIONS}
# Blender's Linux builds follow the VFX Reference Platform: glibc 2.28.
NEWEST_GLIBC = (2, 28)


@pytest.fixture(scope="module")
def built_libraries() -> dict[str, Path]:
    """Every platform's library, built unless up to date."""
    paths = build_native()
    return dict(zip(PLATFORMS, paths, strict=True))


@pytest.fixture(autouse=True)
def fresh_loader(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv(library.ENVIRONMENT_VARIABLE, raising=False)
    library.reset()
    yield
    library.reset()


def parse(path: Path) -> lief.Binary:
    binary = lief.parse(str(path))
    assert binary is not None, f"lief cannot read {path}"
    return binary


def exported_names(binary: lief.Binary) -> set[str]:
    names = {function.name for function in binary.exported_functions}
    if isinstance(binary, lief.MachO.Binary):  # Mach-O symbols carry C's leading underscore
        names = {name.removeprefix("_") for name in names}
    return names


def is_shared_library(binary: lief.Binary) -> bool:
    if isinstance(binary, lief.ELF.Binary):
        return binary.header.file_type == lief.ELF.Header.FILE_TYPE.DYN
    if isinstance(binary, lief.PE.Binary):
        return binary.header.has_characteristic(lief.PE.Header.CHARACTERISTICS.DLL)
    return binary.header.file_type == lief.MachO.Header.FILE_TYPE.DYLIB


def cpu(binary: lief.Binary):
    if isinstance(binary, lief.ELF.Binary):
        return binary.header.machine_type
    if isinstance(binary, lief.PE.Binary):
        return binary.header.machine
    return binary.header.cpu_type


@pytest.mark.parametrize("platform", PLATFORMS)
def test_library_is_a_shared_library_for_its_platform(built_libraries: dict[str, Path], platform: str) -> None:
    path = built_libraries[platform]
    assert path == library_output(platform) == library.library_path(platform)
    binary = parse(path)
    assert binary.format == EXPECTED_FORMAT[platform.split("-")[0]]
    assert cpu(binary) == EXPECTED_CPU[platform]
    assert is_shared_library(binary)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_library_exports_exactly_the_abi_functions(built_libraries: dict[str, Path], platform: str) -> None:
    exported = exported_names(parse(built_libraries[platform]))
    assert {name for name in exported if name.startswith("qik_")} == ABI_NAMES


@pytest.mark.parametrize("platform", [name for name in PLATFORMS if name.startswith("linux")])
def test_linux_library_needs_no_newer_glibc_than_blender(built_libraries: dict[str, Path], platform: str) -> None:
    binary = parse(built_libraries[platform])
    versions = {
        auxiliary.name
        for requirement in binary.symbols_version_requirement
        for auxiliary in requirement.get_auxiliary_symbols()
        if auxiliary.name.startswith("GLIBC_")
    }
    too_new = [v for v in versions if tuple(map(int, v.removeprefix("GLIBC_").split("."))) > NEWEST_GLIBC]
    assert too_new == []


def test_loader_and_build_agree_on_platforms_and_file_names() -> None:
    assert library.LIBRARY_FILES == {name: target.file_name for name, target in PLATFORMS.items()}


def test_host_library_loads_and_reports_the_interface_version(built_libraries: dict[str, Path]) -> None:
    tag = library.platform_tag()
    if tag is None:
        pytest.skip("this machine is none of the six platforms")
    kernel, status = library.load()
    assert status.active, status.describe()
    assert status.version == abi.INTERFACE_VERSION
    assert status.path == str(built_libraries[tag])
    assert status.describe() == f"native kernel ({tag}, interface {abi.INTERFACE_VERSION})"
    assert kernel is not None and kernel.qik_interface_version() == abi.INTERFACE_VERSION
    assert library.load() == (kernel, status)  # cached: decided once


def test_zip_ships_all_six_libraries_and_no_build_leftovers(extension_zip: Path) -> None:
    with zipfile.ZipFile(extension_zip) as zf:
        names = [name for name in zf.namelist() if "/solver/native/lib/" in name and not name.endswith("/")]
    expected = {f"quat_ik/solver/native/lib/{name}/{target.file_name}" for name, target in PLATFORMS.items()}
    assert sorted(names) == sorted(expected)

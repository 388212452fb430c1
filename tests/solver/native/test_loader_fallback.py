"""Every reason the kernel cannot be used means the numpy solver, with a reason a user can read,
never an exception (solver/native/library.py)."""

from __future__ import annotations

import ctypes
from pathlib import Path

import pytest

from quat_ik_addon.solver.native import abi, library
from tools.build_native import PLATFORMS, compile_library


@pytest.fixture(autouse=True)
def fresh_loader(monkeypatch: pytest.MonkeyPatch):
    """Automatic mode and no cached answer, before and after each test."""
    monkeypatch.delenv(library.ENVIRONMENT_VARIABLE, raising=False)
    library.reset()
    yield
    library.set_preference(True)  # also resets


@pytest.fixture
def host_tag() -> str:
    tag = library.platform_tag()
    if tag is None:
        pytest.skip("this machine is none of the six platforms, so no library can be compiled for it")
    return tag


def stub_library(tmp_path: Path, tag: str, *, version: int, functions: list[str]) -> Path:
    """A library for this machine named like the kernel, whose functions only return ``version``."""
    source = tmp_path / "stub.c"
    export = "__declspec(dllexport)" if tag.startswith("windows") else '__attribute__((visibility("default")))'
    source.write_text("".join(f"{export} int {name}(void) {{ return {version}; }}\n" for name in functions))
    output = tmp_path / tag / PLATFORMS[tag].file_name
    compile_library(tag, [source], output)
    return output


def assert_numpy(status: library.NativeStatus, *fragments: str) -> None:
    assert not status.active
    for fragment in fragments:
        assert fragment in status.reason
    line = status.describe()
    assert line.startswith("numpy (") and "\n" not in line


@pytest.mark.parametrize("value", ["0", "off", "false", "numpy", "OFF"])
def test_environment_variable_turns_the_kernel_off(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv(library.ENVIRONMENT_VARIABLE, value)
    kernel, status = library.load()
    assert kernel is None
    assert_numpy(status, f"QUAT_IK_NATIVE={value}")
    assert status.describe() == f"numpy (kernel disabled by QUAT_IK_NATIVE={value})"


def test_preference_turns_the_kernel_off_and_back_to_automatic(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(library, "platform_tag", lambda: None)  # automatic mode then gives another reason
    library.set_preference(False)
    kernel, status = library.load()
    assert kernel is None
    assert_numpy(status, "preferences")
    library.set_preference(True)
    assert_numpy(library.load()[1], "no kernel built for this platform")


def test_unknown_platform_means_numpy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(library, "platform_tag", lambda: None)
    kernel, status = library.load()
    assert kernel is None
    assert_numpy(status, "no kernel built for this platform")


def test_missing_library_file_means_numpy_naming_the_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    missing = tmp_path / "linux-x64" / "libquatik.so"
    monkeypatch.setattr(library, "platform_tag", lambda: "linux-x64")
    monkeypatch.setattr(library, "library_path", lambda tag: missing)
    kernel, status = library.load()
    assert kernel is None
    assert_numpy(status, "no kernel library at", str(missing))
    assert status.path == str(missing)


def test_file_that_is_not_a_library_means_numpy_with_the_os_message(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, host_tag: str
) -> None:
    garbage = tmp_path / PLATFORMS[host_tag].file_name
    garbage.write_bytes(b"this is not a shared library\x00\xff" * 64)
    monkeypatch.setattr(library, "library_path", lambda tag: garbage)
    kernel, status = library.load()
    assert kernel is None
    assert_numpy(status, "failed to load")
    assert status.path == str(garbage)


def test_library_missing_a_function_means_numpy(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, host_tag: str) -> None:
    stub = stub_library(tmp_path, host_tag, version=abi.INTERFACE_VERSION, functions=["qik_interface_version"])
    monkeypatch.setattr(library, "library_path", lambda tag: stub)
    kernel, status = library.load()
    assert kernel is None
    assert_numpy(status, "lacks a function", "qik_")


def test_library_for_another_interface_means_numpy_naming_both(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, host_tag: str
) -> None:
    stub = stub_library(tmp_path, host_tag, version=999, functions=[name for name, _, _ in abi.FUNCTIONS])
    monkeypatch.setattr(library, "library_path", lambda tag: stub)
    kernel, status = library.load()
    assert kernel is None
    assert_numpy(status, "interface 999", f"interface {abi.INTERFACE_VERSION}")
    assert status.version == 999


def test_failed_self_check_means_numpy_with_its_reason(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, host_tag: str
) -> None:
    stub = stub_library(
        tmp_path, host_tag, version=abi.INTERFACE_VERSION, functions=[name for name, _, _ in abi.FUNCTIONS]
    )
    monkeypatch.setattr(library, "library_path", lambda tag: stub)
    checked: list[ctypes.CDLL] = []

    def failing_self_check(kernel: ctypes.CDLL) -> str:
        checked.append(kernel)
        return "mismatch on canned problem 3"

    monkeypatch.setattr(library, "_self_check", failing_self_check)
    kernel, status = library.load()
    assert kernel is None and len(checked) == 1
    assert_numpy(status, "self-check failed", "mismatch on canned problem 3")


def test_unexpected_error_while_loading_means_numpy(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(tag: str) -> Path:
        raise ValueError("a bug in a check")

    monkeypatch.setattr(library, "platform_tag", lambda: "linux-x64")
    monkeypatch.setattr(library, "library_path", broken)
    kernel, status = library.load()
    assert kernel is None
    assert_numpy(status, "ValueError", "a bug in a check")


def test_answer_is_cached_until_reset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(library.ENVIRONMENT_VARIABLE, "0")
    first = library.load()
    monkeypatch.setattr(library, "platform_tag", lambda: None)
    monkeypatch.delenv(library.ENVIRONMENT_VARIABLE)
    assert library.load() is first
    library.reset()
    assert_numpy(library.load()[1], "no kernel built for this platform")


@pytest.mark.parametrize(
    ("system", "machine", "pointer_size", "tag"),
    [
        ("linux", "x86_64", 8, "linux-x64"),
        ("linux", "aarch64", 8, "linux-arm64"),
        ("win32", "AMD64", 8, "windows-x64"),
        ("win32", "ARM64", 8, "windows-arm64"),
        ("darwin", "x86_64", 8, "macos-x64"),
        ("darwin", "arm64", 8, "macos-arm64"),
        ("linux", "riscv64", 8, None),
        ("freebsd14", "amd64", 8, None),
        ("win32", "AMD64", 4, None),  # a 32-bit Python on a 64-bit Windows
    ],
)
def test_platform_tag_rule(system: str, machine: str, pointer_size: int, tag: str | None) -> None:
    assert library.tag_for(system, machine, pointer_size) == tag

"""The GPU-presence probe that lets `nox -s tests-cuda` skip (exit 0) with a reason, and the
categorisation of CUDA packaging errors."""
from __future__ import annotations

from interop.bridge.cuda import gpu_absent_reason
from interop.errors import AidgeCudaKernelImageError, AidgeNotImplementedError, aidge_error_from

pytest_plugins = ["pytester"]


def _which(found):
    return lambda name: "/usr/bin/nvidia-smi" if found else None


def test_no_device_node(tmp_path):
    reason = gpu_absent_reason(dev=str(tmp_path), which=_which(True), environ={})
    assert reason and "no NVIDIA GPU" in reason


def test_device_node_without_driver_tools(tmp_path):
    (tmp_path / "nvidia0").touch()
    reason = gpu_absent_reason(dev=str(tmp_path), which=_which(False), environ={})
    assert reason and "nvidia-smi" in reason


def test_gpu_present(tmp_path):
    (tmp_path / "nvidia0").touch()
    assert gpu_absent_reason(dev=str(tmp_path), which=_which(True), environ={}) is None


def test_hidden_by_cuda_visible_devices(tmp_path):
    (tmp_path / "nvidia0").touch()
    reason = gpu_absent_reason(dev=str(tmp_path), which=_which(True), environ={"CUDA_VISIBLE_DEVICES": ""})
    assert reason and "CUDA_VISIBLE_DEVICES" in reason


def test_this_machine_has_a_reason_or_a_gpu():
    reason = gpu_absent_reason()
    assert reason is None or reason.strip()


def test_no_kernel_image_is_its_own_category():
    err = aidge_error_from(RuntimeError(
        "CUDA error 209: no kernel image is available for execution on the device"), "forward")
    assert isinstance(err, AidgeCudaKernelImageError)
    assert err.category == "cuda_kernel_image" and err.phase == "forward"


def test_not_implemented_stays_not_implemented():
    err = aidge_error_from(RuntimeError("Backward not yet implemented for Abs on backend cuda"), "backward")
    assert isinstance(err, AidgeNotImplementedError) and not isinstance(err, AidgeCudaKernelImageError)
    assert err.operator == "Abs"


def test_kernel_image_failures_are_reported_in_their_category(pytester):
    pytester.makepyfile(test_k="""
        def test_kernel():
            raise RuntimeError("Aidge forward failed: CUDA error: no kernel image is available for execution on the device")

        def test_numbers():
            assert 1 == 2
    """)
    cuda = pytester.runpytest("--backend=cuda", "-rxf")
    cuda.assert_outcomes(xfailed=1, failed=1)  # only that exact error, never another failure
    cuda.stdout.fnmatch_lines(["*cuda_kernel_image*no kernel image*"])
    cpu = pytester.runpytest("--backend=cpu")
    cpu.assert_outcomes(failed=2)  # on cpu such a message is not expected: a plain failure

"""pytest set-up for the Python package's tests: `torch` and `gpu` marks skip, with the reason,
where torch or a CUDA GPU is absent (CI has neither; the H200 has both)."""
import pytest


def _torch_gpu():
    try:
        import torch
    except ImportError:
        return False, "torch is not installed (pip install torch; CI runs without it)"
    if not torch.cuda.is_available():
        return True, "no CUDA GPU is available to torch here"
    return True, ""


def pytest_collection_modifyitems(config, items):
    has_torch, why = _torch_gpu()
    for item in items:
        if "torch" in item.keywords and not has_torch:
            item.add_marker(pytest.mark.skip(reason=why))
        if "gpu" in item.keywords and why:
            item.add_marker(pytest.mark.skip(reason=why))

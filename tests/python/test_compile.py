"""kiln.compile without a GPU: PTX, cubin, resources, SASS, the launch contract, the cache, and
where the target and schedule come from (python/kiln/kernel.py)."""
import shutil

import pytest

import kiln
from kiln import programs

K4096 = {"M": 4096, "N": 4096, "K": 4096}


def test_compiles_the_families_pick_for_hopper():
    module = programs.gemm_program(kiln.bf16, kiln.bf16, kiln.bf16)
    k = kiln.compile(module, target="sm_90a", dims=K4096)
    assert k.config.startswith("strategy=sm90_ws_persistent ")
    assert "gemm_bf16's pick for M=4096, N=4096, K=4096: bf16_gemm_sm90_" in k.why
    assert ".target sm_90a" in k.ptx
    assert k.cubin[:4] == b"\x7fELF"
    r = k.resources
    assert r["kernel"] == "kiln_gemm" and r["registers"] > 0
    assert r["spill_store_bytes"] == 0 and r["spill_load_bytes"] == 0
    launch = k.launch
    assert launch["kernel"] == "kiln_gemm" and launch["persistent"]
    assert [p["name"] for p in launch["params"] if p["kind"] == "pointer"] == ["A", "B", "C"]
    # A second compile of the same program, target and schedule is the cached kernel.
    assert kiln.compile(programs.gemm_program(kiln.bf16, kiln.bf16, kiln.bf16), target="sm_90a", dims=K4096) is k


@pytest.mark.skipif(shutil.which("nvdisasm") is None and not __import__("importlib").util.find_spec("nvidia"),
                    reason="no nvdisasm (pip install nvidia-cuda-nvdisasm)")
def test_sass_counts_the_hopper_mma():
    k = kiln.compile(programs.gemm_program(kiln.bf16, kiln.bf16, kiln.bf16), target="sm_90a", dims=K4096)
    assert sum(n for op, n in k.sass.items() if op.startswith("HGMMA")) > 0


def test_f32_output_and_fused_epilogues_take_the_hopper_pick():
    for module in (programs.gemm_program(kiln.bf16, kiln.bf16, kiln.f32),
                   programs.gemm_program(kiln.bf16, kiln.bf16, kiln.bf16, bias=kiln.bf16),
                   programs.scaled_mm_program(kiln.bf16)):
        k = kiln.compile(module, target="sm_90a", dims=K4096)
        assert k.config.startswith("strategy=sm90_ws_persistent "), (module.name, k.why)
        assert k.resources["spill_store_bytes"] == 0


def test_the_programs_own_target_and_config():
    module = kiln.parse(programs.gemm_program(kiln.bf16, kiln.bf16, kiln.bf16).text.replace(
        'dims = ["M", "N", "K"]}', 'dims = ["M", "N", "K"], target = "sm_89", config = "bm=64 bn=64"}', 1))
    k = kiln.compile(module)
    assert ".target sm_89" in k.ptx and "bm=64 bn=64" in k.config
    assert k.why == "the program's config attribute"
    # Arguments win over attributes.
    assert ".target sm_80" in kiln.compile(module, target="sm_80", config="bm=128 bn=128").ptx


def test_bad_target_and_config_are_user_errors():
    module = programs.gemm_program(kiln.bf16, kiln.bf16, kiln.bf16)
    with pytest.raises(kiln.Error, match="unknown target 'sm_42'; known targets: sm_80"):
        kiln.compile(module, target="sm_42", config="")
    with pytest.raises(kiln.Error, match="bogus"):
        kiln.compile(module, target="sm_80", config="bogus=1")
    # A config the strategy refuses: the sentence, not a place in Kiln's or nanobind's C++ headers.
    with pytest.raises(kiln.Error) as refused:
        kiln.compile(module, target="sm_80", config="bm=999")
    assert str(refused.value).startswith("error: bm=999 "), str(refused.value)


def test_select_says_which_and_why():
    pick = kiln.select(programs.gemm_program(kiln.bf16, kiln.bf16, kiln.bf16), "sm_90a",
                       {"M": 128, "N": 8192, "K": 8192})
    assert pick["family"] == "gemm_bf16" and pick["variant"] in pick["why"]
    assert kiln.select(programs.gemm_program(kiln.bf16, kiln.bf16, kiln.bf16), "sm_80", K4096)["config"].startswith(
        "strategy=sm80_multistage")

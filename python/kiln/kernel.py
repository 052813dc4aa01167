"""kiln.compile and kiln.Kernel: compiled programs, cached, callable on torch tensors; the
interpreter on numpy arrays; text IR in (kiln.parse) and out (Module.text)."""
from __future__ import annotations

import atexit
import json
import warnings
from typing import Any, Mapping, Optional

from . import _kiln

_TORCH_DTYPES = {"bfloat16": _kiln.dtype.bf16, "float16": _kiln.dtype.f16, "float32": _kiln.dtype.f32,
                 "float8_e4m3fn": _kiln.dtype.f8e4m3, "float8_e5m2": _kiln.dtype.f8e5m2, "int32": _kiln.dtype.i32,
                 "int64": _kiln.dtype.i64, "bool": _kiln.dtype.i1}
_TMA_ALIGN = 16  # bytes: a tensor map's base address (the launch contract gives a pointer's own alignment)


def parse(text: str, file: str = "<text>") -> _kiln.Module:
    """Parses and verifies text IR holding one tile.program; raises kiln.Error with the diagnostics."""
    return _kiln.Module.parse(text, file)


def _module(program) -> _kiln.Module:
    if isinstance(program, _kiln.Module):
        return program
    if isinstance(program, str):
        return parse(program)
    raise TypeError(f"expected a kiln.Module (Program.finish()) or text IR, not {type(program).__name__}")


def select(program, target: str, dims: Mapping[str, int]) -> dict:
    """The schedule Kiln picks for the program at these dims: {config, why, family, variant}."""
    return _kiln.select(_module(program), target, dict(dims))


def _gpu_target() -> Optional[str]:
    try:
        import torch
        if not torch.cuda.is_available():
            return None
        major, minor = torch.cuda.get_device_capability()
    except ImportError:
        return None
    name = f"sm_{major}{minor}" + ("a" if major in (9, 10) else "")
    return name if name in _kiln.known_targets() else None


_CACHE: dict = {}
# Emptied at exit, before the interpreter tears the extension down: kernels still cached then
# would be reported by nanobind as leaked instances.
atexit.register(_CACHE.clear)


def compile(program, target: Optional[str] = None, config: Optional[str] = None,
            dims: Optional[Mapping[str, int]] = None) -> "Kernel":
    """Compiles (and assembles: no GPU needed) a program.

    target: a name ("sm_90a"); default the program's own target attribute, else the current GPU's.
    config: a config line; default the program's config attribute, else, for `dims` on the GPU
    present, a winner kiln.autotune recorded (or one shipped pretuned for this GPU), else the
    schedule kiln.select picks for `dims` (without dims: the default of the program's kind,
    sm80_multistage for a GEMM and rowwise for a program without a matrix product). A measured
    winner that does not compile at these dims (it was timed at a nearby shape) gives way to the
    pick, with a warning. Kernels are cached by program text, target and config, so a second
    compile of the same thing returns the same Kernel.
    """
    module = _module(program)
    target = target or module.attribute("target") or _gpu_target()
    if target is None:
        raise Error("no target: pass target='sm_90a' (or another of " + ", ".join(_kiln.known_targets()) +
                    "), or run where torch sees a GPU")
    why = "the config argument"
    if config is None:
        config = module.attribute("config")
        why = "the program's config attribute"
    if config is None and dims is not None and target == _gpu_target():
        pick = _kiln.select_on_device(module, dict(dims), "")
        if pick["warnings"]:
            warnings.warn(pick["warnings"].strip(), stacklevel=2)
        if pick["tuned"]:
            try:
                return _cached(module, target, pick["config"], pick["why"])
            except Error as e:
                warnings.warn(f"{pick['why']} does not compile at {dict(dims)}; using kiln.select's pick: {e}",
                              stacklevel=2)
    if config is None:
        pick = _kiln.select(module, target, dict(dims) if dims is not None else {})
        config, why = pick["config"], pick["why"] if dims is not None else "no dims given: " + pick["why"]
    return _cached(module, target, config, why)


def _cached(module, target: str, config: str, why: str) -> "Kernel":
    key = (module.text, target, config)
    kernel = _CACHE.get(key)
    if kernel is None:
        kernel = _CACHE[key] = Kernel(module, _kiln.compile(module, target, config), target, why)
    return kernel


def autotune(program, dims: Mapping[str, int], *, finalists: int = 8, reps: int = 15, exhaustive: bool = False,
             use_cache: bool = True, budget_s: float = 0.0, cache_dir: Optional[str] = None,
             progress: bool = False, screen_reps: int = 3, screen_s: float = 4.0, max_candidates: int = 0) -> dict:
    """Searches the program's schedules on the current GPU at `dims` (kiln::tune, docs/tuning.md).

    The candidates (the family's variants, their neighbours and, for a GEMM, a generated space of at
    most `max_candidates`, 0: 256) are compiled and assembled on all cores; those that spill or fail
    are dropped; every other is timed briefly (`screen_reps` launches, within about `screen_s`
    seconds) and the `finalists` fastest are timed again (L2 flushed before each launch, in
    alternation, the median of `reps`), and the fastest whose outputs match the reference is
    recorded in the tuning cache, where kiln.compile(program, dims=...) finds it. A cached winner
    for the same program, GPU and shape bucket is returned without measuring unless
    use_cache=False. budget_s bounds the compiling (the best ranked first). Returns {config, us,
    why, cached, seconds, verified, cache_file, space, assembled, phases, candidates}; raises
    kiln.Error when no candidate runs and is correct.
    """
    if finalists < 1 or reps < 1 or budget_s < 0 or screen_reps < 0 or screen_s < 0 or max_candidates < 0:
        raise ValueError(f"kiln.autotune: finalists and reps must be at least 1, budget_s, screen_reps, screen_s and "
                         f"max_candidates not negative (got finalists={finalists}, reps={reps}, budget_s={budget_s}, "
                         f"screen_reps={screen_reps}, screen_s={screen_s}, max_candidates={max_candidates})")
    return _kiln.tune(_module(program), dict(dims), finalists, reps, exhaustive, use_cache, float(budget_s),
                      cache_dir or "", progress, screen_reps, float(screen_s), max_candidates)


def plan_tune(program, dims: Mapping[str, int], *, target: str = "sm_90a", max_candidates: int = 0, sms: int = 0,
              budget_s: float = 0.0) -> dict:
    """The first half of kiln.autotune, on the CPU (no GPU needed): the candidates for `target` at
    `dims` on a device of `sms` SMs (0: the target's reference count), each compiled and assembled
    on all cores and pruned by what the assembler reports; nothing is timed or recorded. Returns
    the dict kiln.autotune does, with an empty config; a candidate that would be screened has an
    empty "dropped". Raises kiln.Error when no family runs the program or a dim is missing."""
    if max_candidates < 0 or sms < 0 or budget_s < 0:
        raise ValueError(f"kiln.plan_tune: max_candidates, sms and budget_s must not be negative (got "
                         f"max_candidates={max_candidates}, sms={sms}, budget_s={budget_s})")
    return _kiln.plan_tune(_module(program), dict(dims), target, max_candidates, sms, float(budget_s))


Error = _kiln.Error


class _Arg:
    """One argument of the program, as a call checks it."""
    __slots__ = ("name", "kind", "dtype", "shape", "order", "layout", "block", "torch_dtype", "torch_type", "_strides")

    def __init__(self, a: dict):
        self.name, self.kind, self.dtype = a["name"], a["kind"], a["dtype"]
        self.shape, self.order = list(a["shape"]), list(a["order"])
        self.layout = list(a.get("strides", []))  # a strided tensor's strides: dim names and numbers
        # A block tensor (block scales) holds ceil(extent / block) elements along each axis.
        self.block = list(a.get("block") or [1] * len(self.shape))
        self.torch_dtype = next((k for k, v in _TORCH_DTYPES.items() if v == self.dtype), None)
        self.torch_type = None  # the torch.dtype itself, looked up on the first call
        self._strides = {}      # shape -> strides: a warm call computes none

    def strides(self, shape) -> tuple:
        """Dense element strides of a tensor stored fastest-first in `order` (default row-major)."""
        known = self._strides.get(shape)
        if known is not None:
            return known
        order = self.order or list(reversed(range(len(shape))))
        strides, step = [0] * len(shape), 1
        for axis in order:
            strides[axis] = step
            step *= shape[axis]
        if len(self._strides) < 64:  # a bounded memo: shapes vary with the batch
            self._strides[tuple(shape)] = tuple(strides)
        return tuple(strides)

    def bind_strides(self, shape, strides, found: dict) -> None:
        """A strided argument's strides: its stride dims take the tensor's values (found), its
        constant strides must be the tensor's. An axis of extent 1 is never stepped: any stride."""
        for axis, (want, n, got) in enumerate(zip(self.layout, shape, strides)):
            if isinstance(want, str):
                if n == 1:
                    continue
                bound = found.setdefault(want, got)
                if bound != got:
                    raise Error(f"{self.name} has strides {tuple(strides)}: its stride {want} is {got}, but {want} = "
                                f"{bound} (from another argument or dims=); the program declares strides {self.layout}")
            elif n != 1 and want != got:
                raise Error(f"{self.name} has strides {tuple(strides)}; the program declares strides {self.layout}, "
                            f"so axis {axis}'s stride must be {want}")

    def storage(self, dims: dict):
        """(strides, elements) of a strided argument's storage at these dims."""
        shape = [dims[e] if isinstance(e, str) else e for e in self.shape]
        strides = [dims[s] if isinstance(s, str) else s for s in self.layout]
        return strides, 1 + sum((n - 1) * s for n, s in zip(shape, strides))


class Kernel:
    """A compiled program: .ptx, .cubin, .resources, .sass, .launch (the launch contract), .config,
    and a call on torch tensors (or DLPack producers) in the program's argument order."""

    def __init__(self, module: _kiln.Module, compiled, target: str, why: str):
        self.module, self._k, self.target, self.why = module, compiled, target, why
        self._args = [_Arg(a) for a in module.arguments()]
        self._launch = None
        self._align = None  # tensor name -> the bytes its address must be a multiple of (from the launch contract)

    ptx = property(lambda self: self._k.ptx)
    cubin = property(lambda self: self._k.cubin)
    config = property(lambda self: self._k.config)
    resources = property(lambda self: self._k.resources)

    @property
    def launch(self) -> dict:
        if self._launch is None:
            self._launch = json.loads(self._k.launch_json)
        return self._launch

    @property
    def sass(self) -> dict:
        """The SASS instruction mix, opcode -> count (needs nvdisasm: pip install nvidia-cuda-nvdisasm)."""
        return self._k.sass_opcodes()

    def _alignments(self) -> dict:
        if self._align is None:
            align = {}
            for p in self.launch["params"]:
                name, need = (p["name"], p["alignment"]) if p["kind"] == "pointer" else (p.get("tensor"), _TMA_ALIGN)
                if name is not None:
                    align[name] = max(align.get(name, 1), need)
            self._align = align
        return self._align

    def __repr__(self):
        return f"kiln.Kernel({self.module.name} for {self.target}: {self.config})"

    def __call__(self, *args, dims: Optional[Mapping[str, int]] = None, stream: Any = None):
        """Launches on the current torch stream (or `stream`). Dims come from the tensors' shapes;
        `dims` gives those no tensor shows. Every tensor's device, dtype, shape and layout are
        checked against the program before anything runs; kiln.Error says which and why."""
        import torch
        if len(args) != len(self._args):
            names = ", ".join(a.name for a in self._args)
            raise Error(f"{self.module.name} takes {len(self._args)} arguments ({names}); got {len(args)}")
        found = dict(dims) if dims else {}
        blocked = []  # block tensors' axes, checked once every dim is known
        align = self._alignments()
        ptrs, scalars, device = [], [], None
        for spec, x in zip(self._args, args):
            if spec.kind == "scalar":
                scalars.append(float(x))
                continue
            if not isinstance(x, torch.Tensor):
                x = torch.from_dlpack(x)
            if not x.is_cuda:
                raise Error(f"{spec.name} is on {x.device}; the kernel runs on a CUDA device")
            if device is None:
                device = x.device
            elif x.device != device:
                raise Error(f"{spec.name} is on {x.device}, the other arguments on {device}")
            if spec.torch_type is None:
                spec.torch_type = getattr(torch, spec.torch_dtype or "", False)
            if x.dtype != spec.torch_type:
                raise Error(f"{spec.name} is {x.dtype}; the program declares it {spec.torch_dtype}")
            shape = x.shape
            if len(shape) != len(spec.shape):
                raise Error(f"{spec.name} has shape {list(shape)}; the program declares {spec.shape}")
            _match_shape(spec, shape, found, blocked)
            if spec.layout:
                spec.bind_strides(shape, x.stride(), found)
            elif x.stride() != spec.strides(shape):
                raise Error(f"{spec.name} has strides {x.stride()}; the kernel reads it dense, with strides "
                            f"{spec.strides(shape)} (call .contiguous(){', or transpose' if spec.order else ''}, "
                            "or declare it strided: strides=[...])")
            ptr = x.data_ptr()
            need = align.get(spec.name, 1)
            if ptr % need:
                raise Error(f"{spec.name}'s address is not {need}-byte aligned, as the kernel reads it "
                            "(a view at an offset? call .clone())")
            ptrs.append(ptr)
        _check_blocked(blocked, found)
        if stream is None:  # torch's current stream as a handle, without making a torch.cuda.Stream
            stream = torch._C._cuda_getCurrentRawStream(torch.cuda.current_device() if device is None else device.index)
        elif not isinstance(stream, int):
            stream = stream.cuda_stream
        self._k.launch(ptrs, scalars, found, stream)

    def _launch_checked(self, tensors, dims: dict, device_index: int):
        """The warm path of kiln.ops: `tensors` (torch tensors, no scalars) whose device, dtype,
        shape and strides a call of this kernel already accepted (the caller keys its cache by
        them); only the addresses, which change from call to call, are checked here."""
        align = self._alignments()
        ptrs = []
        for spec, x in zip(self._args, tensors):
            ptr = x.data_ptr()
            need = align.get(spec.name, 1)
            if ptr % need:
                raise Error(f"{spec.name}'s address is not {need}-byte aligned, as the kernel reads it "
                            "(a view at an offset? call .clone())")
            ptrs.append(ptr)
        import torch
        self._k.launch(ptrs, [], dims, torch._C._cuda_getCurrentRawStream(device_index))


def _match_shape(spec: "_Arg", shape, found: dict, blocked: list):
    """Checks a tensor's shape against its declaration, learning dims from it; a block tensor's
    blocked axes (ceil(extent / block) long) are left to _check_blocked."""
    if len(shape) != len(spec.shape):
        raise Error(f"{spec.name} has shape {list(shape)}; the program declares {spec.shape}")
    for ext, n, b in zip(spec.shape, shape, spec.block):
        if b > 1:
            blocked.append((spec, ext, n, b, list(shape)))
            continue
        want = found.setdefault(ext, n) if isinstance(ext, str) else ext
        if want != n:
            raise Error(f"{spec.name} has shape {list(shape)}, but {ext} = {want} "
                        f"(from another argument or dims=); the program declares {spec.shape}")


def _check_blocked(blocked: list, found: dict):
    for spec, ext, n, b, shape in blocked:
        extent = found.get(ext) if isinstance(ext, str) else ext
        if extent is None:
            raise Error(f"{spec.name} holds one scale per {b} of {ext}, so its shape cannot give {ext}: pass dims=")
        if n != -(-extent // b):
            raise Error(f"{spec.name} has shape {shape}, but it holds one scale per block of {b} along {ext} = "
                        f"{extent}: that axis must be ceil({extent} / {b}) = {-(-extent // b)} "
                        f"(the program declares {spec.shape} in blocks of {spec.block})")


def interpret(program, dims: Optional[Mapping[str, int]] = None, **arrays):
    """Runs the program on the CPU with exact dtype semantics (the tile-IR interpreter). `arrays`
    are numpy arrays (any float dtype) in the tensors' logical shapes, rounded once to their
    declared dtypes; returns {output name: float64 array} of the exact results."""
    import numpy as np
    module = _module(program)
    found = dict(dims) if dims else {}
    specs = {a["name"]: _Arg(a) for a in module.arguments()}
    tensors, scalars, blocked = {}, {}, []
    for name, value in arrays.items():
        spec = specs.get(name)
        if spec is None:
            raise Error(f"{module.name} has no argument {name}; it has {', '.join(specs)}")
        if spec.kind == "scalar":
            scalars[name] = float(value)
            continue
        a = np.asarray(value, dtype=np.float64)
        if a.ndim == len(spec.shape):  # else the interpreter says what the rank should be
            _match_shape(spec, a.shape, found, blocked)
        if spec.layout:
            tensors[name] = _strided_storage(spec, found, a).tobytes()
        else:
            tensors[name] = np.ascontiguousarray(a.transpose(_storage_axes(spec, a.ndim))).tobytes()
    _check_blocked(blocked, found)
    for spec in specs.values():  # a strided output comes as its whole storage: poisoned
        if spec.kind == "output" and spec.layout:
            tensors[spec.name] = _strided_storage(spec, found, None).tobytes()
    out = _kiln.interpret(module, found, tensors, scalars)
    results = {}
    for name, raw in out.items():
        spec = specs[name]
        shape = [found[e] if isinstance(e, str) else e for e in spec.shape]
        if spec.layout:
            strides, _ = spec.storage(found)
            stored = np.frombuffer(raw, dtype=np.float64)
            results[name] = np.lib.stride_tricks.as_strided(stored, shape, [8 * s for s in strides]).copy()
            continue
        axes = _storage_axes(spec, len(shape))
        stored = np.frombuffer(raw, dtype=np.float64).reshape([shape[a] for a in axes])
        results[name] = stored.transpose(np.argsort(axes))
    return results


def _strided_storage(spec: _Arg, dims: dict, logical):
    """A strided tensor's storage at these dims (its stride dims among them): the logical array's
    elements where the strides put them, NaN in the gaps (and everywhere for an output)."""
    import numpy as np
    missing = [s for s in spec.layout + spec.shape if isinstance(s, str) and s not in dims]
    if missing:
        raise Error(f"{spec.name} is strided by {spec.layout}: give {', '.join(missing)} in dims=")
    strides, elements = spec.storage(dims)
    storage = np.full(elements, np.nan)
    if logical is not None:
        shape = [dims[e] if isinstance(e, str) else e for e in spec.shape]
        np.lib.stride_tricks.as_strided(storage, shape, [8 * s for s in strides])[...] = logical
    return storage


def _storage_axes(spec: _Arg, rank: int) -> list:
    """Logical axes slowest-first in storage (a transpose of the array into storage order)."""
    return list(reversed(spec.order)) if spec.order else list(range(rank))

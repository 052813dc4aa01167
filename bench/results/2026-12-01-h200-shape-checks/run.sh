#!/usr/bin/env bash
# Twenty-fourth session's device run: sm80 A/B, FP8 in cuBLASLt's shape, BF16 128x64 at M = 128.
set -u
mkdir -p gpu-bin old-bin && tar -C gpu-bin -xJf gpu-pack/gpu-bin.tar.xz && tar -C old-bin -xJf gpu-pack/old-bin.tar.xz
R=$OUT/r; mkdir -p $R
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} KILN_CACHE_DIR=$PWD/build-kc
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $OUT/gpu.txt 2>&1
SM80_SHAPES="4096x4096x4096;8192x1024x4096"
SM80_VARS=bf16_gemm_128x128x64_s3,bf16_gemm_128x128x32_s4
{ echo "== old (9512877)"; old-bin/kiln_gemm_bench --family sm80 --shapes "$SM80_SHAPES" --variants $SM80_VARS --json $R/sm80_old.json
  echo "== new (HEAD)"; gpu-bin/kiln_gemm_bench --family sm80 --shapes "$SM80_SHAPES" --variants $SM80_VARS --json $R/sm80_new.json
  echo "== old again"; old-bin/kiln_gemm_bench --family sm80 --shapes "$SM80_SHAPES" --variants $SM80_VARS --json /tmp/sm80_old2.json
} > $R/sm80.log 2>&1
B="strategy=sm90_ws_persistent bm=128 bn=128 bk=128 stages=6 warps_m=2 warps_n=1 raster=grouped group_m=8 epilogue=tma l2_hint=reuse stream_fill=128"
B160="strategy=sm90_ws_persistent bm=128 bn=160 bk=128 stages=4 warps_m=2 warps_n=1 raster=grouped group_m=8 epilogue=tma l2_hint=reuse stream_fill=128 fp8_accum=promote epilogue_loads=late"
gpu-bin/kiln_fp8_bench --shapes "4096x7168x2048;8192x8192x8192;4096x14336x4096;4096x4096x14336" --json $R/fp8_shape.json \
  --config "$B fp8_accum=promote_pairs epilogue_loads=late" \
  --config "$B fp8_accum=promote_pairs epilogue_loads=late cluster_m=2" \
  --config "$B fp8_accum=promote epilogue_loads=early" \
  --config "$B fp8_accum=promote epilogue_loads=early cluster_m=2" \
  --config "$B160" > $R/fp8_shape.log 2>&1
gpu-bin/kiln_gemm_bench --family sm90 --shapes "128x8192x8192;64x5120x5120" \
  --variants bf16_gemm_sm90_64x128x64_s8_tma_c2,bf16_gemm_sm90_64x64x64_s13_tma \
  --config "strategy=sm90_ws_persistent bm=128 bn=64 bk=64 stages=8 warps_m=2 warps_n=1 raster=grouped group_m=8 epilogue=tma l2_hint=reuse stream_fill=128" \
  --json $R/bf16_128x64.json > $R/bf16_128x64.log 2>&1
if [ "${RUN_SUITE:-0}" = 1 ]; then gpu-bin/kiln_gpu_tests > $OUT/gpu_tests.log 2>&1; echo "suite rc=$?" >> $OUT/gpu_tests.log; fi
gpu-bin/kiln_fp8_bench --shapes "4096x7168x2048;8192x8192x8192;4096x14336x4096;4096x4096x14336" --json $R/fp8_shape2.json \
  --config "$B160" \
  --config "$B fp8_accum=promote epilogue_loads=early cluster_m=2" \
  --config "$B fp8_accum=promote epilogue_loads=early" \
  --config "$B fp8_accum=promote_pairs epilogue_loads=late cluster_m=2" \
  --config "$B fp8_accum=promote_pairs epilogue_loads=late" > $R/fp8_shape2.log 2>&1
tar -C $OUT -czf $OUT/results.tgz r && cp $R/*.log $OUT/ && rm -rf $R
ls -la $OUT

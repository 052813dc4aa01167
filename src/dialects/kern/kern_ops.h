#pragma once
// The kern dialect: the explicit GPU level (DESIGN.md, "kern dialect").
//
// Semantics, which every strategy produces and the PTX emitter implements:
//  * kern.kernel is one GPU kernel. Its body's block arguments are the kernel parameters, in launch
//    order ({params} names them): ptr<e> (a 64-bit global address of elements e) and scalars
//    (i32/i64/f32). {threads} is the 1-D block size (a multiple of 32), {smem_bytes} the dynamic
//    shared memory the launch must provide, {grid} one entry per grid axis (x, y, z): an integer,
//    or a list [dim, tile, dim, tile, ...] meaning the product of ceil(dim / tile) over the pairs,
//    where dim names an i32 parameter, optionally followed by one integer factor (split-K: the
//    units of a tile). Every thread runs the body.
//  * Values are per thread. i1 values are predicates; frag<e, [n]> is one 32-bit register holding
//    n = 32 / bits(e) elements, element 0 in the lowest bits, as mma.sync and ldmatrix exchange
//    them: frag<bf16|f16, [2]> (two 16-bit elements) or frag<f8e4m3|f8e5m2, [4]> (four bytes).
//  * Shared memory: kern.smem_alloc places a ring smem<e, [stages, rows, cols], swizzle = [B, M, S]>
//    at byte {offset} of the kernel's dynamic shared memory. A stage is a rows x cols row-major
//    tile; element (r, c) of stage s lives at offset + s * stageBytes + Swizzle(r * rowBytes + c *
//    sizeof(e)) (swizzle.h). Ops that touch a stage take (buf, slot, off) plus a compile-time
//    displacement {row, col}: the address is stage(slot) + (off ^ X) + A where (X, A) =
//    displace(row, col) (swizzle.h); off comes from kern.smem_offset / kern.ldsm_offset of the same
//    buffer. In element terms: off denotes a per-thread position (r, c) and the op addresses
//    element (r + row, c + col); the verifier checks that the byte formula equals the swizzle of
//    that element for every position the offset op can produce (displace() in swizzle.h).
//    With {alias = true} the ring is a second view of bytes that lie wholly inside one other
//    (non-alias) buffer, for a schedule that uses them for something else while their buffer's
//    own users provably do not (reuse_stage: output boxes in a ring stage the K loop is done
//    with); the verifier checks containment, the schedule the ordering.
//  * kern.smem_offset(buf, r, c) denotes position (r, c) (any i32 values).
//  * kern.ldsm_offset(buf, wr, wc) {quads = [r0, c0, ..., r3, c3], stride = [sr, sc], base = [br,
//    bc]} denotes, for lane l with q = l / 8, the position
//      (wr * sr + br + quads[q].r + l % 8,  wc * sc + bc + quads[q].c)
//    i.e. the row that lane supplies to ldmatrix for matrix q. quads[0] = [0, 0] and quads[3] =
//    quads[1] + quads[2] (the lane pattern is affine in the two bits of q).
//  * kern.cp_async copies {bytes} (16, 8 or 4; both addresses aligned to it) from src to the
//    addressed piece of a chunk, asynchronously; bytes past {src_bytes} (0 to {bytes}) are written
//    as zeros and not read. A displacement inside a chunk needs an offset whose column starts a
//    chunk (runtimeChunkAligned below). kern.cp_async_commit closes the
//    thread's current group; kern.cp_async_wait {pending = n} blocks until at most n of the
//    thread's groups are incomplete. Visibility to other threads needs a kern.barrier afterwards.
//  * kern.ldmatrix is warp-collective (all 32 lanes, convergent): lane l supplies the address of
//    row l % 8 of matrix l / 8 (lanes 16..31 are ignored for .x2, 8..31 for .x1); result i is
//    matrix i distributed as the PTX ISA's ldmatrix fragment (with {trans}, transposed). A matrix
//    is 8 rows of 16 bytes: 8 16-bit or 16 8-bit elements per row. The hardware moves 16-bit
//    units, so 8-bit buffers load their bytes in pairs (lane l gets bytes 4 (l % 4) .. +3 of row
//    l / 4) and cannot use {trans}.
//  * kern.mma_sync {shape = "m16n8k16"} is mma.sync.aligned.m16n8k16.row.col.f32.{bf16|f16}.
//    {bf16|f16}.f32 (A and B of one 16-bit type); {shape = "m16n8k32"} is
//    mma.sync.aligned.m16n8k32.row.col.f32.{e4m3|e5m2}.{e4m3|e5m2}.f32 (FP8, sm_89+, PTX ISA 8.4),
//    each with the PTX ISA's fragment layout for its shape (target/fragment_layout.h).
//  * Global memory: kern.ptr_add offsets a pointer by elements; kern.ld_global / kern.st_global
//    access memory only when their predicate holds (a masked-off access does not touch memory),
//    1, 2 or 4 consecutive elements (ld/st.global.v2/.v4: the address aligned to their size).
//    kern.prefetch_global {level} is prefetch.global.L1 / .L2 (PTX ISA "prefetch") under its
//    predicate: a hint that changes no value; the strategies predicate it to addresses inside the
//    tensor, as a load's.
//
// Memory-bound row kernels (the rowwise strategy; src/schedule/rowwise/):
//  * kern.ld_global / kern.st_global of a ptr<e> with 8- or 16-bit e may move 32-bit words
//    frag<e, [n]> instead of single elements: 1, 2 or 4 words, so a v4 access moves 16 bytes (8
//    bf16, 16 FP8). Element 0 of a word is the lowest-addressed one. A masked-off word load is 0.
//  * kern.cvt_pack(f32...) rounds to nearest even and packs, lowest first: two into
//    frag<bf16|f16, [2]>, four into frag<f8e4m3|f8e5m2, [4]> (saturating to the format's largest
//    finite value, as cvt.rn.satfinite: sm_89 and later), or one into a single 16- or 8-bit
//    element (held in a register of its own). kern.cvt_unpack is the inverse, exact: each
//    element of a word (or a single element) as f32.
//  * kern.shfl_xor(v) {offset = k}: shfl.sync.bfly.b32 over the full warp: lane l receives the v
//    of lane l ^ k. Warp-collective: every lane of the warp executes it at once, so the strategies
//    place it only under warp-uniform control flow (the kern simulator checks that every branch
//    and loop bound around it is uniform).
//  * kern.ld_shared(buf, slot, off) {row, col}: one element at the address kern.st_shared's rules
//    give (st_shared and ld_shared of one buffer between kern.barriers exchange values in a block).
//  * kern.grid_dim {dim}: %nctaid.{dim}, the launched grid's size along dim.
//
// Warp specialization and persistence (sm_90a; docs/sm90-strategy.md):
//  * Kernel parameters may also be tensor maps, tmap<e, [b0, b1(, b2)], tensor = "A", swizzle = 128>:
//    a 128-byte CUtensorMap passed by value (__grid_constant__) describing tensor argument "A" with
//    its dims fastest-varying first (the reverse of a row-major shape), box [b0, b1, ...] elements
//    in that order, the given smem swizzle (bytes, 128 only for now) and zero fill out of bounds.
//    Optional kernel attributes: {max_regs = N} (the per-thread register count at entry, which
//    ptxas needs to honour setmaxnreg), {persistent = true} (grid x is min(grid x, SM count)) and
//    {role_regs = [[role, regs], ...]} (the register budget set-role-registers gives each role).
//  * kern.role {name, warpgroups = [first, count]}: only threads first*128 <= tid < (first +
//    count)*128 run the region (whole warpgroups, so the branch is warp-uniform); the others skip
//    it. Roles do not nest and no scf.if encloses one (the dispatch is a warp-wide shuffle, which
//    every lane must reach). kern.warp_id is not placed inside scf.if for the same reason: it is
//    lane 0's threadIdx.x / 32 broadcast to the warp.
//  * kern.tile_loop(M, N, batches) {tile = [bm, bn], raster, group_m}: the persistent tile
//    scheduler. With tm = ceil(M/bm), tn = ceil(N/bn) and T = tm*tn*batches tiles, block b runs
//    the body for tiles t = b + iter*gridDim.x < T, iter = 0, 1, ...; tile t is batch t / (tm*tn)
//    and, of r = t % (tm*tn), raster "row": (pm, pn) = (r / tn, r % tn); raster "grouped": groups of
//    group_m tile rows walked column by column (as sm80's raster=grouped). Body arguments: (iter,
//    m0 = pm*bm, n0 = pn*bn, batch). Every thread that reaches the op walks the same sequence.
//    {splits = S} (split-K): the loop walks T * S units; unit u is K slice u % S of tile u / S
//    (the tile as above), so the S slices of a tile go to consecutive blocks. The body takes two
//    more arguments, (tile = u / S, split = u % S).
//    {stream_k = W} (stream-K, W = 1 or 2; one more operand, ktiles = K steps per tile): with P =
//    gridDim.x, the first D = (T % P == 0 ? T / P : max(T / P - (W - 1), 0)) waves are
//    data-parallel: block b takes tiles b + i*P, i < D, whole. So the last W waves (the partial
//    one, and with W = 2 the whole one before it) are shared out: their S = (T - D*P) * ktiles K
//    steps, in tile order, are cut into R = max(min(P, S), 1) runs, block b < R's being
//    [b*S/R, (b+1)*S/R) (none is empty; blocks b >= R have none). A run splits at tile boundaries
//    into units (tile, K steps [kbase, kbase + ksteps)); the unit that ends its tile (kbase + ksteps
//    == ktiles) finishes it, every other unit (a run's last, ending inside a tile) contributes a
//    partial sum. Block b walks its data-parallel tiles, then its run's units in order except a
//    first unit that ends a tile begun by lower blocks, which it walks last. The body takes four
//    more arguments: (kbase, ksteps, done = the K steps the block ran before this unit, peers =
//    for a unit with kbase > 0 that ends its tile, the number of lower blocks b-1, ..., b-peers
//    whose runs hold the tile's earlier K steps, else 0). A block contributes at most once per
//    launch, and a finisher waits only on lower blocks, whose contributions need no waiting:
//    blocks dispatched in order cannot deadlock. With {cluster = [cm, cn]} the walk is the same
//    over clusters (P = the clusters, b = the cluster id, the tiles cluster tiles): the blocks of
//    a cluster take the same units, each its sub-tile by rank, and peers counts lower clusters
//    (a block's peers are the blocks of its rank in them).
//    {ragged = "offsets" | "counts"} (ragged groups, MoE; operands (M, N, G, bounds), bounds a
//    ptr<i32|i64> to G values in global memory; no cluster or splits):
//    group g owns rows [lo_g, hi_g): "offsets" (cumulative ends) lo_g = hi_(g-1) (lo_0 = 0), hi_g =
//    min(max(bounds[g], lo_g), M); "counts" lo_g = 0, hi_g = min(max(bounds[g], 0), M) (the rows of
//    batch g). Clamping keeps every group inside [0, M) whatever the bounds hold. Group g has
//    ceil((hi_g - lo_g) / bm) tile rows; the groups' tile rows, in group order, are the tile rows
//    of the walk (T = their sum x tn tiles, read from memory by every walking thread before the
//    walk), tile t being in group g where t lies in [T_g, T_g + tr_g * tn) (T_g the tiles of the
//    groups before g, tr_g its tile rows), and there the tile of g's own tr_g x tn grid that its
//    raster walks (t - T_g)-th: with "row" tile row (t - T_g) / tn, column (t - T_g) % tn; with
//    "grouped" the dense grouped raster's, so a band of group_m tile rows never spans two groups
//    (a group's last band may be shorter). Body arguments: (iter, m0 = the tile
//    row's first row, lo_g + i*bm, n0, group = g, mend = hi_g: rows from mend on are not the
//    group's). The bounds must not change while the kernel runs (they are read again per tile).
//    With {stream_k = W} (one more operand, ktiles = K steps per tile) the T tiles above, in the
//    same order, are walked as {stream_k} walks a dense loop's T tiles (D data-parallel waves, the
//    rest's K steps in runs, the same units, done and peers), T being the tile count every walker
//    computed from the bounds; body arguments (iter, m0, n0, group, mend, kbase, ksteps, done,
//    peers).
//    {ragged = "k_offsets", kstep = bk} (groups along K, the weight gradient; operands (M, N, G,
//    offsets, K), offsets a ptr<i32|i64> to G cumulative ends along K; no cluster, splits or
//    stream_k): the dense walk of G x tm x tn tiles (group g = the tile's batch), each unit also
//    given its group's tokens [ktok, kend): ktok = min(max(offsets[g-1], 0), K) (0 for g = 0),
//    kend = min(max(offsets[g], ktok), K), so any offsets stay inside [0, K]. Body arguments:
//    (iter, m0, n0, group, ktok, kend, ksteps = ceil((kend - ktok) / kstep), done = the ksteps of
//    the block's earlier units, in walk order: where its ring position starts).
//
// The tile scheduler as IR (expand-tile-loop writes kern.tile_loop out in these, kern.block_id,
// kern.grid_dim and scalar ops):
//  * kern.cluster_id / kern.cluster_count: %clusterid.x / %nclusterid.x, the block's cluster and
//    the launch's clusters along grid x (the grid is one-dimensional; a kernel with {cluster}).
//  * kern.assume_range(x) {lo, hi}: x itself. The op that wrote it promises that x lies in
//    [lo, hi] for every thread that computes it, from a contract the arithmetic alone does not show
//    (a tile origin is below 2^31 because the launch keeps dims below 2^31); the range analysis
//    takes the promise, the PTX emitter emits nothing for it, and the CPU simulators check it. A
//    false promise is a compiler bug: strength-reduce may then rewrite a division wrongly.
//  * kern.setmaxnreg {action, regs}: setmaxnreg.{inc|dec}.sync.aligned.u32 (PTX ISA "setmaxnreg"):
//    must sit in a kern.role (all warps of each warpgroup execute it) of a kernel with {max_regs}.
//  * mbarriers: kern.mbarrier_alloc places n 8-byte barriers at {offset} (a multiple of 8) of the
//    dynamic shared memory; the ops take (bars, i) for barrier i. init sets the arrival count;
//    arrive_expect_tx arrives once and expects {bytes} of async transactions in the current phase;
//    arrive arrives once; wait(parity) returns once the phase with that parity has completed (a
//    fresh barrier is in phase 0, and phase "parity 1" counts as completed before it).
//  * kern.tma_load(map, buf, slot, bars, i, c0, c1(, c2)) {row}: cp.async.bulk.tensor of the map's
//    box whose first element is at coords (c0 fastest) into stage `slot` of buf starting at row
//    {row}; the box's rows are the buffer's rows (box[0] * sizeof(e) == row bytes). Elements out of
//    the tensor are written as zeros. The full box's bytes complete on barrier i. {stream = true}:
//    one more operand, an i1; when it holds, the copy reads through L2 as evict_first
//    (createpolicy.fractional.L2::evict_first, .L2::cache_hint; PTX ISA "createpolicy"): for data no
//    other block will read, which then does not displace what L2 holds. When it does not hold, the
//    copy is the plain one (no cache policy at all).
//  * kern.prefetch_tensormap(map): prefetch.tensormap (PTX ISA "prefetch", 8.0): brings the
//    tensor map's 128-byte descriptor close to the SM, so the first copy through it does not wait
//    for its fetch.
//  * kern.wgmma_desc(buf, slot, r) {row, col, major, lbo, sbo}: the 64-bit matrix descriptor (PTX
//    ISA "Matrix Descriptor Format") of the 128B-swizzled stage starting at row r + {row}, column
//    {col}; r + {row} must be a multiple of 8 (the swizzle atom). {lbo}/{sbo}: leading/stride byte
//    offsets (wgmma_desc.h).
//  * kern.wgmma: wgmma.mma_async with f32 accumulators (PTX ISA "wgmma.mma_async"): m64nNk16 for
//    {ab = "bf16"|"f16"}, m64nNk32 for {ab = "f8e4m3"|"f8e5m2"} (A's format; {b} names B's where
//    it differs). The accumulators are read and written in place, so each accumulator operand
//    must have this op as its only use. {trans_b}: B is MN-major (imm-trans-b); {trans_a}
//    (optional, false when absent): A is MN-major (imm-trans-a), as when the operands' roles are
//    swapped (swap_ab). The FP8 forms have no transpose: both false.
//    kern.wgmma_fence / commit / wait are wgmma.fence / commit_group / wait_group.
//  * The TMA-store epilogue: kern.st_shared(buf, slot, off, v) {row, col} stores v (an element, or
//    a frag pair starting at an even column; kern.st_shared(buf, slot, off, lo, hi): two 32-bit
//    elements, st.shared.v2, at an even column of a 32-bit buffer, as an f32 output's accumulator
//    pair is staged) at the element the stage addressing above gives
//    (off from kern.smem_offset: one swizzle per thread, then a constant XOR / add per store);
//    kern.tma_store(map, buf, slot, c0, c1(, c2)) {row}
//    copies the map's box from the stage's rows {row}.. (the tma_load layout) to the tensor,
//    clipping elements outside it; a kern.fence {kind = "proxy_async"} must make the st_shared
//    writes visible first. kern.bulk_commit / kern.bulk_wait {pending, read} are
//    cp.async.bulk.commit_group / wait_group(.read) on the thread's own store groups.
//    kern.stmatrix(buf, slot, off, v0, v1, v2, v3) {row, col} is stmatrix.sync.aligned.m8n8.x4.b16
//    (with two values v0, v1: .x2, lanes 0..15 addressing)
//    (PTX ISA "stmatrix", 7.8, sm_90): warp-collective; lane l addresses the 8-element (16-byte)
//    row segment at the element its (off, row, col) addresses, as for st_shared, and lanes
//    8i..8i+7 give the rows of matrix i; lane l's v_i holds row l/4, elements 2(l%4) and 2(l%4)+1
//    of matrix i (the mma / wgmma accumulator fragment of an 8x8 block). One instruction stores
//    what four st_shared of frag pairs store per thread. {trans = true} (.trans): each matrix is
//    stored transposed, so the row segment lane 8i + r addresses receives column r of matrix i
//    (element c of the segment from lane 4c + r / 2, half r % 2 of its v_i).
//    kern.named_barrier(id) {threads} is bar.sync id, threads.
//    Before its protocol is written, a box of that epilogue is the ops between
//    kern.stage_begin(buf, slot, elected, bar) {row, fresh} and kern.stage_end(map, buf, slot, c0,
//    c1(, c2), elected, bar) {row, offset = [d0, d1]} in one block: they stage the box
//    (its math, ending in st_shared / stmatrix) into rows {row}.. of stage `slot`, which a
//    kern.tma_store {row} then copies to (c0 + d0, c1 + d1(, c2)), issued by the
//    threads for which `elected` holds; `bar` is the named barrier of the 128 threads that stage
//    it. sm90-stage-epilogue replaces the pair by the slot wait (none with {fresh = true}: a region
//    no store has read), the barriers, the fence, the store and its commit
//    (src/schedule/sm90/stage_epilogue.cpp); neither op has a PTX form. Markers rather than a
//    region: the staging's constants are shared with the code after it, as everything in one
//    block.
//
// Thread-block clusters and TMA multicast (sm_90a; docs/sm90-strategy.md, "Clusters and multicast"):
//  * kern.kernel {cluster = [x, y, z]}: the kernel runs in clusters of x*y*z blocks (2 to 8, grid x
//    a multiple of x; y = z = 1 for now) and must be launched so (.reqnctapercluster). Its {grid}
//    then counts clusters: the launch has x times as many blocks along x.
//  * kern.tile_loop {cluster = [cm, cn]} (cm * cn = the kernel's cluster size): the loop walks
//    cluster tiles of (cm*bm) x (cn*bn) with t = clusterId + iter * clusters, the other rules as
//    above on that coarser grid; block rank r takes the sub-tile (pm*cm + r % cm, pn*cn + r / cm).
//    Both blocks of a cluster walk the same cluster tiles, including sub-tiles wholly outside M or
//    N (TMA zero-fills their loads; stores are masked or clipped).
//  * kern.cluster_rank: %cluster_ctarank. kern.cluster_barrier: barrier.cluster.arrive.release +
//    barrier.cluster.wait.acquire by every thread, at the kernel's top level (not in a role or a
//    branch: the .aligned forms need the whole warp).
//  * kern.mbarrier_arrive_remote(bars, i, rank): arrives on barrier i of block `rank` of the
//    cluster (mapa + mbarrier.arrive.shared::cluster, default semantics: release at CTA scope). It
//    publishes that the thread's earlier reads are complete, which the strategies establish before
//    arriving (wgmma.wait_group); it is not a cluster-scope release of data written before it.
//  * kern.tma_load {multicast = mask}: the box lands at the same offset in the shared memory of
//    every block whose rank bit is set in mask (the kernel's cluster), and completes its bytes on
//    barrier i at the same offset in each of them.
//    With {scope = "cluster"} the arrive is a release at cluster scope: every write that happens
//    before it (the thread's, and through a barrier those of the threads it synchronized with) is
//    visible to a thread of the cluster whose cluster-scope wait observes the phase it completes.
//  * kern.st_shared_v4(buf, slot, off, v0..v3) / kern.ld_shared_remote_v4(buf, slot, off, rank):
//    16-byte accesses of a ring of 32-bit elements without a swizzle, addressed like st_shared; the
//    load reads the same bytes of the cluster's block `rank` (mapa + ld.shared::cluster). The
//    split-K cluster hand-over uses them with the scoped arrive and wait above; the block read
//    must not exit before the reader is done (a cluster barrier at the end).
//  * kern.mbarrier_wait {scope = "cluster"}: the wait acquires at cluster scope; "cta" is the
//    default. A cluster-scope acquire invalidates L1 (CCTL.IVALL) after every passing wait;
//    sm90_ws_persistent does not need it (TMA's complete-tx orders its writes into this block's
//    shared memory before the phase completes, whichever block issued the copy) and waits at CTA
//    scope, as CUTLASS's TMA pipelines do.
//
// Split-K (sm90_ws_persistent split_k=S; docs/sm90-strategy.md, "Split-K"):
//  * kern.red_release(flag, v): red.release.gpu.global.add.s32. Every write that happens before it
//    (the thread's own, and through a barrier those of the threads it synchronized with) is visible
//    to any thread whose acquire reads the sum or a later one.
//  * kern.spin_wait(flag, target): polls ld.acquire.gpu.global.s32 until the value is >= target; the
//    writes published by the releases it observed happen before what follows (and, through a
//    barrier, before what the block's other threads do next).
//  * Workspace parameters: a kernel with {workspace = [F, P]} takes two more pointer parameters,
//    ws_flags : ptr<i32> (F bytes per tile, zero before the launch and left zero after it) and
//    ws_partials : ptr<f32> (P bytes per tile), which the runtime allocates and owns; "tile" is the
//    grid's x tile count without its factor. With {workspace_per = "block"} (stream-K) the bytes
//    are per block of the launched grid instead.
//  * kern.atom_add(flag, v, pred) (gemv split_k=S; docs/gemv-strategy.md, "Split-K"): where pred
//    holds, atom.acq_rel.gpu.global.add.s32, returning the count before the add (0 elsewhere). It
//    releases as kern.red_release does and acquires every release that made the count it read, so
//    the block whose add reads S - 1 (the last of a tile's S slices to arrive, whatever the order)
//    sees every slice's partial sums. No block waits on another: a non-persistent grid is safe.
#include <optional>
#include <string>
#include <vector>

#include "kiln/ir/operation.h"
#include "target/swizzle.h"

namespace kiln::kern {

enum class OpKind {
#define KERN_OP(e, name, ...) e,
#include "kern_ops.def"
#undef KERN_OP
};

std::optional<OpKind> kindOf(const ir::Operation& op);

// The attributes of a kern.ldsm_offset, read back (nullopt when malformed).
struct LdsmOffsetInfo {
  int64_t quads[4][2];
  int64_t stride[2];
  int64_t base[2];
};
std::optional<LdsmOffsetInfo> ldsmOffsetInfo(const ir::Operation& op);

// The low 3 chunk bits (column / (16 / elemBytes) mod 8) the per-thread column of an offset op can
// hold when a load uses its first `numQuads` lane groups, as a bit set over 0..7 (0xff: unknown).
uint8_t runtimeChunks(const ir::Operation& offsetOp, int numQuads, int elemBytes);
// Whether the per-thread column of a kern.smem_offset is always a whole number of 16-byte chunks
// (its column operand a product by, or a constant multiple of, 16 / elemBytes, or a sum of such).
bool runtimeChunkAligned(const ir::Operation& offsetOp, int elemBytes);
// Whether a stage access (kern.cp_async, kern.st_shared, kern.ld_shared: the ops that move less
// than a 16-byte row of 8x8 matrices) may be displaced inside a chunk: its offset's column starts a
// chunk, so the displacement's bytes below 16 add to zeros (displace() in swizzle.h).
bool withinChunkDisplacement(const ir::Operation& stageOp);

// A view of an smem<...> type.
struct SmemLayout {
  ir::ScalarType elem;
  int64_t stages = 0, rows = 0, cols = 0;
  Swizzle swizzle;
  int elemBytes() const { return ir::bitWidth(elem) / 8; }
  int64_t rowBytes() const { return cols * elemBytes(); }
  int64_t stageBytes() const { return rows * rowBytes(); }
  int64_t totalBytes() const { return stages * stageBytes(); }
};

// Parses an smem type; nullopt with a reason when it is not a well-formed one.
std::optional<SmemLayout> smemLayout(const ir::Type& t, std::string* why = nullptr);
ir::Type smemType(ir::ScalarType elem, int64_t stages, int64_t rows, int64_t cols, const Swizzle& s);

inline ir::Type ptrType(ir::ScalarType e) { return ir::Type::make("ptr", e, std::nullopt); }
// frag<e, [32 / bits(e)]>: one 32-bit register of 8- or 16-bit elements.
inline ir::Type fragType(ir::ScalarType e) {
  int bits = ir::bitWidth(e);
  return ir::Type::make("frag", e, ir::Shape{ir::Extent::of(bits > 0 && bits <= 32 ? 32 / bits : 1)});
}
bool isPtr(const ir::Type& t);
bool isFrag(const ir::Type& t);

// tmap<e, [box...], tensor = "A", swizzle = 128> (see above).
struct TensorMapType {
  ir::ScalarType elem;
  std::vector<int64_t> box;  // fastest-varying first
  std::string tensor;
  int64_t swizzle = 128;
  // {flat = true}: the map views the tensor's stored elements as one row (dim 0: all of them in
  // storage order, dim 1 of extent 1), so a box may start at any element: 16-byte boxes of a
  // tensor whose rows are not 16-byte multiples (sm90's 128x128 block scales, one a K step).
  bool flat = false;
  int64_t boxBytes() const;
};
std::optional<TensorMapType> tensorMapType(const ir::Type& t, std::string* why = nullptr);
ir::Type tmapType(ir::ScalarType elem, const std::vector<int64_t>& box, const std::string& tensor, int64_t swizzle,
                  bool flat = false);
inline bool isTensorMap(const ir::Type& t) { return t.isKind("tmap"); }
// mbarrier<[n]>: n barriers; 0 when the type is not one.
int64_t mbarrierCount(const ir::Type& t);
inline ir::Type mbarrierType(int64_t n) { return ir::Type::make("mbarrier", std::nullopt, ir::Shape{ir::Extent::of(n)}); }
// Blocks per cluster of the kernel enclosing `op` ({cluster = [x, y, z]}); 1 without one.
int64_t clusterSize(const ir::Operation& op);

}  // namespace kiln::kern

#pragma once
// Verify hooks of the kern dialect that live outside kern_dialect.cpp (one file per op family),
// declared here so the one op table (kern_ops.def) can name them. Internal to the dialect.
#include <optional>

#include "dialects/kern/kern_ops.h"
#include "kiln/ir/diagnostics.h"
#include "kiln/ir/operation.h"

namespace kiln::kern {

// Shared by the hook files: true inside a kern.kernel, else an error naming the op.
bool requireInKernel(const ir::Operation& op, ir::DiagnosticEngine& d);
// The (buf, slot, off) {row, col} stage addressing of kern_ops.h, checked (kern_dialect.cpp): the
// buffer's layout, or an error naming the op.
std::optional<SmemLayout> stageAddress(const ir::Operation& op, ir::DiagnosticEngine& d);

// kern_sm90_ops.cpp
bool verifyInKernel(const ir::Operation& op, ir::DiagnosticEngine& d);
bool verifyRole(const ir::Operation& op, ir::DiagnosticEngine& d);
bool verifyTileLoop(const ir::Operation& op, ir::DiagnosticEngine& d);
bool verifySetMaxNReg(const ir::Operation& op, ir::DiagnosticEngine& d);
bool verifyMbarrierAlloc(const ir::Operation& op, ir::DiagnosticEngine& d);
bool verifyMbarrierInit(const ir::Operation& op, ir::DiagnosticEngine& d);
bool verifyMbarrierExpectTx(const ir::Operation& op, ir::DiagnosticEngine& d);
bool verifyMbarrierArrive(const ir::Operation& op, ir::DiagnosticEngine& d);
bool verifyMbarrierWait(const ir::Operation& op, ir::DiagnosticEngine& d);
bool verifyFence(const ir::Operation& op, ir::DiagnosticEngine& d);
bool verifyTmaLoad(const ir::Operation& op, ir::DiagnosticEngine& d);
bool verifyPrefetchTensormap(const ir::Operation& op, ir::DiagnosticEngine& d);
bool verifyWgmmaDesc(const ir::Operation& op, ir::DiagnosticEngine& d);
bool verifyWgmma(const ir::Operation& op, ir::DiagnosticEngine& d);
bool verifyPromoteScales(const ir::Operation& op, ir::DiagnosticEngine& d);
bool verifyWgmmaWait(const ir::Operation& op, ir::DiagnosticEngine& d);
bool verifyStShared(const ir::Operation& op, ir::DiagnosticEngine& d);
bool verifyTmaStore(const ir::Operation& op, ir::DiagnosticEngine& d);
// the map, buffer, slot and n coordinates of a TMA store (its first 3 + n operands) and its
// {row}, as kern.tma_store takes them (kern.stage_end too)
bool verifyTmaStoreOperands(const ir::Operation& op, unsigned n, ir::DiagnosticEngine& d);
// kern_stage_ops.cpp: the staged boxes of the TMA-store epilogue
bool verifyStageBegin(const ir::Operation& op, ir::DiagnosticEngine& d);
bool verifyStageEnd(const ir::Operation& op, ir::DiagnosticEngine& d);
bool verifyStmatrix(const ir::Operation& op, ir::DiagnosticEngine& d);
bool verifyBulkWait(const ir::Operation& op, ir::DiagnosticEngine& d);
bool verifyNamedBarrier(const ir::Operation& op, ir::DiagnosticEngine& d);
bool verifyUndef(const ir::Operation& op, ir::DiagnosticEngine& d);
// kern_scheduler_ops.cpp
bool verifyAssumeRange(const ir::Operation& op, ir::DiagnosticEngine& d);
// kern_vector_ops.cpp: vector global accesses, packing and unpacking, shuffles, shared scalars
bool verifyLdGlobal(const ir::Operation& op, ir::DiagnosticEngine& d);
bool verifyStGlobal(const ir::Operation& op, ir::DiagnosticEngine& d);
bool verifyCvtPack(const ir::Operation& op, ir::DiagnosticEngine& d);
bool verifyCvtUnpack(const ir::Operation& op, ir::DiagnosticEngine& d);
bool verifyGridDim(const ir::Operation& op, ir::DiagnosticEngine& d);
bool verifyShflXor(const ir::Operation& op, ir::DiagnosticEngine& d);
bool verifyLdShared(const ir::Operation& op, ir::DiagnosticEngine& d);
// kern_cluster_ops.cpp
bool verifyClusterRank(const ir::Operation& op, ir::DiagnosticEngine& d);
bool verifyClusterIndex(const ir::Operation& op, ir::DiagnosticEngine& d);
bool verifyClusterBarrier(const ir::Operation& op, ir::DiagnosticEngine& d);
bool verifyGridDep(const ir::Operation& op, ir::DiagnosticEngine& d);
bool verifyMbarrierArriveRemote(const ir::Operation& op, ir::DiagnosticEngine& d);
bool verifyStSharedV4(const ir::Operation& op, ir::DiagnosticEngine& d);
bool verifyLdSharedRemoteV4(const ir::Operation& op, ir::DiagnosticEngine& d);
// The cluster attributes of ops with their own hooks: kern.kernel {cluster}, kern.tile_loop
// {cluster}, kern.tma_load {multicast}, kern.mbarrier_wait {scope}.
bool verifyKernelCluster(const ir::Operation& op, ir::DiagnosticEngine& d);
bool verifyTileLoopCluster(const ir::Operation& op, ir::DiagnosticEngine& d);
bool verifyMulticast(const ir::Operation& op, ir::DiagnosticEngine& d);
bool verifyWaitScope(const ir::Operation& op, ir::DiagnosticEngine& d);
// kern_split_ops.cpp
bool verifyRedRelease(const ir::Operation& op, ir::DiagnosticEngine& d);
bool verifySpinWait(const ir::Operation& op, ir::DiagnosticEngine& d);
bool verifyAtomAdd(const ir::Operation& op, ir::DiagnosticEngine& d);
bool verifyTileLoopSplits(const ir::Operation& op, ir::DiagnosticEngine& d);
// kern.tile_loop {ragged} (kern_ops.h): its operands, body and the options it excludes.
bool verifyTileLoopRagged(const ir::Operation& op, ir::DiagnosticEngine& d);

}  // namespace kiln::kern

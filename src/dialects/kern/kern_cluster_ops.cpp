// Verify hooks of the thread-block cluster ops and attributes (table in kern_ops.def, semantics in
// kern_ops.h, "Thread-block clusters and TMA multicast"). PTX ISA sections behind the rules:
// "Cluster of Cooperative Thread Arrays" (at most 8 blocks in a portable cluster), "barrier.cluster"
// (.aligned: every thread of the warp executes the same instruction), "mapa", "mbarrier.arrive"
// (.shared::cluster), "cp.async.bulk.tensor" (.multicast::cluster: a 16-bit ctaMask), and
// "mbarrier.test_wait/try_wait" (.acquire at .cta or .cluster scope).
#include "dialects/kern/kern_ops.h"
#include "dialects/kern/kern_verify.h"

namespace kiln::kern {
using namespace kiln::ir;

int64_t clusterSize(const Operation& op) {
  const Operation* k = op.is("kern.kernel") ? &op : op.enclosing("kern.kernel");
  if (!k) return 1;
  auto c = k->intsAttr("cluster");
  if (c.size() != 3) return 1;
  return c[0] * c[1] * c[2];
}

namespace {

bool requireCluster(const Operation& op, DiagnosticEngine& d) {
  if (!requireInKernel(op, d)) return false;
  if (clusterSize(op) < 2)
    return d.error(op.loc()) << "'" << op.name() << "' needs a kernel launched in clusters ({cluster = [x, 1, 1]})";
  return true;
}

}  // namespace

bool verifyKernelCluster(const Operation& op, DiagnosticEngine& d) {
  const Attribute* a = op.attr("cluster");
  if (!a) return true;
  auto c = op.intsAttr("cluster");
  if (!a->isArray() || c.size() != 3 || c[0] < 1 || c[1] != 1 || c[2] != 1 || c[0] > 8)
    return d.error(op.loc()) << "'kern.kernel' {cluster = [x, 1, 1]} needs 1 <= x <= 8 (a portable cluster along "
                                "grid x)";
  return true;
}

bool verifyTileLoopCluster(const Operation& op, DiagnosticEngine& d) {
  if (!op.attr("cluster")) return true;
  auto c = op.intsAttr("cluster");
  if (c.size() != 2 || c[0] < 1 || c[1] < 1 || c[0] * c[1] != clusterSize(op))
    return d.error(op.loc()) << "'kern.tile_loop' {cluster = [cm, cn]} needs cm * cn = the kernel's "
                             << clusterSize(op) << " blocks per cluster";
  return true;
}

bool verifyMulticast(const Operation& op, DiagnosticEngine& d) {
  if (!op.attr("multicast")) return true;
  int64_t mask = op.intAttr("multicast", 0), n = clusterSize(op);
  if (mask < 1 || mask >= (int64_t{1} << n))
    return d.error(op.loc()) << "'kern.tma_load' {multicast = mask} needs a nonzero mask of the kernel's " << n
                             << " cluster ranks";
  return true;
}

bool verifyWaitScope(const Operation& op, DiagnosticEngine& d) {
  if (!op.attr("scope")) return true;
  std::string scope = op.stringAttr("scope");
  if (scope != "cta" && scope != "cluster")
    return d.error(op.loc()) << "'" << op.name() << "' {scope} is \"cta\" or \"cluster\", got \"" << scope << "\"";
  return true;
}

bool verifyClusterRank(const Operation& op, DiagnosticEngine& d) { return verifyClusterIndex(op, d); }

// kern.cluster_rank, kern.cluster_id, kern.cluster_count: an i32 of a kernel launched in clusters.
bool verifyClusterIndex(const Operation& op, DiagnosticEngine& d) {
  if (!requireCluster(op, d)) return false;
  if (!op.result()->type().isScalar(ScalarType::I32)) return d.error(op.loc()) << "'" << op.name() << "' produces i32";
  return true;
}

// kern.griddep_wait / kern.griddep_launch_dependents: in a kernel launched with programmatic
// stream serialization ({programmatic = true}), at its top level, where every thread passes.
bool verifyGridDep(const Operation& op, DiagnosticEngine& d) {
  const Operation* parent = op.parentOp();
  if (!parent || !parent->is("kern.kernel"))
    return d.error(op.loc()) << "'" << op.name() << "' must be at the kernel's top level, where every thread passes it";
  if (!parent->attr("programmatic") || !parent->attr("programmatic")->asBool())
    return d.error(op.loc()) << "'" << op.name() << "' needs a kernel launched as a programmatic dependent "
                                "({programmatic = true}): elsewhere the runtime gives it no grid to wait for";
  return true;
}

bool verifyClusterBarrier(const Operation& op, DiagnosticEngine& d) {
  if (!requireCluster(op, d)) return false;
  const Operation* parent = op.parentOp();
  if (!parent || !parent->is("kern.kernel"))
    return d.error(op.loc()) << "'kern.cluster_barrier' must be at the kernel's top level: every thread of the "
                                "cluster reaches it, and its .aligned form needs whole warps";
  return true;
}

bool verifyMbarrierArriveRemote(const Operation& op, DiagnosticEngine& d) {
  if (!requireCluster(op, d)) return false;
  if (mbarrierCount(op.operand(0)->type()) == 0 || !op.operand(1)->type().isScalar(ScalarType::I32) ||
      !op.operand(2)->type().isScalar(ScalarType::I32))
    return d.error(op.loc()) << "'kern.mbarrier_arrive_remote' needs (mbarrier<[n]> ring, i32 index, i32 rank)";
  return verifyWaitScope(op, d);
}

namespace {
// The 16-byte shared accesses of the cluster hand-over: a buffer of 32-bit elements without a
// swizzle (the partial sums are laid out register quad by thread, nothing to spread over banks).
std::optional<SmemLayout> vectorStage(const Operation& op, DiagnosticEngine& d) {
  auto layout = stageAddress(op, d);
  if (!layout) return std::nullopt;
  if (layout->elemBytes() != 4 || !layout->swizzle.none() || layout->rowBytes() % 16 != 0) {
    d.error(op.loc()) << "'" << op.name() << "' needs a ring of 32-bit elements without a swizzle, rows a multiple "
                      << "of 16 bytes";
    return std::nullopt;
  }
  if (op.intAttr("col", 0) % 4 != 0) {
    d.error(op.loc()) << "'" << op.name() << "' {col = " << op.intAttr("col", 0)
                      << "} is not a multiple of 4: the access covers 16 aligned bytes";
    return std::nullopt;
  }
  return layout;
}
}  // namespace

bool verifyStSharedV4(const Operation& op, DiagnosticEngine& d) {
  if (!requireInKernel(op, d)) return false;
  auto layout = vectorStage(op, d);
  if (!layout) return false;
  for (unsigned i = 3; i < 7; ++i)
    if (op.operand(i)->type() != Type::scalar(layout->elem))
      return d.error(op.loc()) << "'kern.st_shared_v4' stores four " << scalarName(layout->elem)
                               << " values into this buffer, not " << op.operand(i)->type().str();
  return true;
}

bool verifyLdSharedRemoteV4(const Operation& op, DiagnosticEngine& d) {
  if (!requireCluster(op, d)) return false;
  auto layout = vectorStage(op, d);
  if (!layout) return false;
  if (!op.operand(3)->type().isScalar(ScalarType::I32))
    return d.error(op.loc()) << "'kern.ld_shared_remote_v4' takes an i32 cluster rank after the address";
  for (unsigned i = 0; i < 4; ++i)
    if (op.result(i)->type() != Type::scalar(layout->elem))
      return d.error(op.loc()) << "'kern.ld_shared_remote_v4' produces four " << scalarName(layout->elem) << " values";
  return true;
}

}  // namespace kiln::kern

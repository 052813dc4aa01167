// set-role-registers: gives each top-level role the register budget its kernel asks for.
//
//   Before:
//     kern.kernel() {..., threads = 384, max_regs = 168, role_regs = [["producer", 40], ["consumer", 232]]} {
//       kern.role {name = "producer", warpgroups = [0, 1]} { ... }
//       kern.role {name = "consumer", warpgroups = [1, 2]} { ... }
//   After:
//       kern.role {name = "producer", warpgroups = [0, 1]} { kern.setmaxnreg() {action = "dec", regs = 40}  ... }
//       kern.role {name = "consumer", warpgroups = [1, 2]} { kern.setmaxnreg() {action = "inc", regs = 232}  ... }
//
// setmaxnreg (PTX ISA, "setmaxnreg") moves registers between the warpgroups of a CTA: "dec"
// releases registers to the CTA's pool, "inc" blocks until the pool can grant them. It must be
// executed by all warps of a warpgroup, which a kern.role guarantees (whole warpgroups, uniform
// branch), and ptxas honours it only when the register count at entry is known (.maxnreg, the
// kernel's {max_regs}).
//
// Legal for a role only when all of these hold (otherwise the role is kept as it is):
//   * the kernel has {max_regs = R} and {role_regs} lists the role's name with a budget B != R,
//     a multiple of 8 from 24 to 256;
//   * the role is directly in the kernel body (once per thread, not once per loop iteration);
//   * its region does not already start with a kern.setmaxnreg;
//   * the budgets fit the register file: the sum over the kernel's threads of their budget (R for
//     threads in no listed role) is at most 65536 (64K 32-bit registers per SM, one CTA).
#include <map>

#include "kiln/ir/builder.h"
#include "transforms/pass_registry.h"

namespace kiln::transforms {
namespace {

using ir::Operation;

void setRegisters(Operation& kernel) {
  const ir::Attribute* rr = kernel.attr("role_regs");
  if (!kernel.attr("max_regs") || !rr || !rr->isArray()) return;
  int64_t entry = kernel.intAttr("max_regs", 0);
  std::map<std::string, int64_t> budget;
  for (const auto& e : rr->asArray()) {
    if (!e.isArray() || e.asArray().size() != 2 || !e.asArray()[0].isString() || !e.asArray()[1].isInt()) return;
    int64_t b = e.asArray()[1].asInt();
    if (b < 24 || b > 256 || b % 8 != 0) return;
    budget[e.asArray()[0].asString()] = b;
  }
  int64_t threads = kernel.intAttr("threads", 0), total = 0, covered = 0;
  std::vector<Operation*> roles;
  for (const auto& op : kernel.body().operations()) {
    if (!op->is("kern.role") || !budget.count(op->stringAttr("name"))) continue;
    int64_t n = op->intsAttr("warpgroups").at(1) * 128;
    total += n * budget[op->stringAttr("name")];
    covered += n;
    roles.push_back(op.get());
  }
  if (total + (threads - covered) * entry > 65536) return;
  for (Operation* role : roles) {
    int64_t b = budget[role->stringAttr("name")];
    ir::Block& body = role->body();
    if (b == entry || (body.front() && body.front()->is("kern.setmaxnreg"))) continue;
    ir::OpBuilder builder;
    builder.setLoc(role->loc());
    if (body.front()) builder.setInsertionPoint(body.front());
    else builder.setInsertionPointToEnd(&body);
    builder.create("kern.setmaxnreg", {}, {}, {{"action", b > entry ? "inc" : "dec"}, {"regs", b}});
  }
}

}  // namespace

bool setRoleRegistersPass(ir::Module& m, ir::DiagnosticEngine&) {
  for (auto& op : m.body().operations())
    if (op->is("kern.kernel")) setRegisters(*op);
  return true;
}

}  // namespace kiln::transforms

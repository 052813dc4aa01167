#pragma once
// The fast K loop that sm90-promote-fp8 rewrites, taken apart (the pass's legality conditions are
// in promote_fp8.cpp's opening comment; this is its matcher, kept apart for size).
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kiln/ir/operation.h"

namespace kiln::sm90::promote {

// The fast K loop, taken apart.
struct KLoop {
  ir::Operation* loop = nullptr;
  size_t n = 0;                           // carried accumulators
  std::vector<ir::Operation*> step;       // the K step: the full-barrier wait .. the commit
  ir::Operation* wait1 = nullptr;         // kern.wgmma_wait {pending = 1}
  ir::Operation* release = nullptr;       // scf.if (kt > 0 && lane0) { RELEASE(prev) }
  ir::Value* lane0 = nullptr;
  std::vector<ir::Operation*> next;       // the next ring position's arithmetic
  ir::Operation* tail = nullptr;          // scf.if lane0 { RELEASE(last) REST } after the loop
  std::string mode;                       // "promote" | "promote_pairs"
  std::vector<ir::Operation*> prologue;   // block scales: the ops before the wait, ending in ...
  ir::Operation* scales = nullptr;        // ... kern.promote_scales (null: plain promotion)
  std::set<const ir::Operation*> products;     // ... its products (and reads of the stage), after the sums are waited for,
  std::set<const ir::Operation*> ktDependent;  // ... the others that read %kt (the loads),
  std::vector<ir::Value*> loaded;              // ... and of theirs the values products read (empty: none to carry)
  bool stageReads = false;                     // ... some product reads the step's stage (kern.ld_shared of %s)
};

// The loop's parts if `loop` is the fast K loop of the pass's sketch, else nothing (keep it).
std::optional<KLoop> match(ir::Operation& loop);

// The loops with wgmmas marked {accumulate} directly in their body.
std::vector<ir::Operation*> markedLoops(ir::Module& m);

}  // namespace kiln::sm90::promote

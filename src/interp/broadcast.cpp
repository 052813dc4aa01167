// tile.broadcast (see broadcast.h).
#include "interp/broadcast.h"

#include "kiln/ir/diagnostics.h"

namespace kiln::interp {

std::vector<double> broadcastValues(const std::vector<double>& src, const ir::Shape& srcDims,
                                    const std::vector<int64_t>& srcShape, const ir::Shape& resultDims,
                                    const std::vector<int64_t>& resultShape) {
  // The source stride that each result axis advances by: 0 for a broadcast axis.
  size_t rank = resultShape.size();
  std::vector<int64_t> srcStrides(srcShape.size(), 1);
  for (size_t j = srcShape.size(); j-- > 1;) srcStrides[j - 1] = srcStrides[j] * srcShape[j];
  std::vector<int64_t> step(rank, 0);
  size_t j = 0;
  for (size_t r = 0; r < rank; ++r)
    if (j < srcDims.size() && srcDims[j] == resultDims[r]) {
      KILN_ASSERT(srcShape[j] == resultShape[r], "broadcast dims of one symbol have different block sizes");
      step[r] = srcStrides[j++];
    }
  KILN_ASSERT(j == srcDims.size(), "broadcast source dims do not appear in the result");

  std::vector<double> out(static_cast<size_t>(numElements(resultShape)));
  std::vector<int64_t> ctr(rank, 0);
  int64_t from = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = src[from];
    for (size_t a = rank; a-- > 0;) {  // advance, last axis fastest, keeping `from` in step
      from += step[a];
      if (++ctr[a] < resultShape[a]) break;
      from -= step[a] * resultShape[a];
      ctr[a] = 0;
    }
  }
  return out;
}

}  // namespace kiln::interp

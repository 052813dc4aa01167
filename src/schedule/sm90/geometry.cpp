// The sm90_ws_persistent kernel's numbers from its options (contract in geometry.h).
#include "schedule/sm90/geometry.h"

#include <algorithm>

namespace kiln::sm90 {

Geometry geometryOf(const Config& c, int cElemBytes) {
  Geometry g;
  g.cElemBytes = cElemBytes;
  g.boxCols = 128 / std::max(2, cElemBytes);
  g.pingpong = c.consumers == Consumers::Pingpong;
  g.swapped = c.swapAB;
  g.streamK = c.streamK != 0;
  g.splits = c.splitK;
  g.clusterSize = c.clusterM * c.clusterN;
  g.groups = c.warpsM * c.warpsN;
  g.tileGroups = g.pingpong ? 1 : g.groups;
  g.rowsPerConsumer = g.pingpong ? c.bm : c.bm / std::max(1, c.warpsM);
  g.colsPerConsumer = c.bn / std::max(1, c.warpsN);
  g.rowsPerPiece = g.rowsPerConsumer / std::max(1, c.storePieces);
  g.wgmmaBlocks = g.swapped ? g.colsPerConsumer / 64 : g.rowsPerConsumer / 64;
  g.wgmmaN = g.swapped ? g.rowsPerConsumer : c.bn;
  g.accPerBlock = g.wgmmaN / 2;
  if (c.epilogue == EpilogueStore::Tma) {
    const int pieces = std::max(1, c.storePieces);  // a slot holds one row piece of a box
    g.cSlots = std::max(1, std::min(c.storeSlots ? c.storeSlots : 2, g.colsPerConsumer / g.boxCols * pieces));
    if (c.reuseStage) g.ringBoxes = std::max(0, c.bn / g.boxCols - g.cSlots);
  }
  return g;
}

}  // namespace kiln::sm90

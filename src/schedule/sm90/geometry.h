#pragma once
// The numbers of an sm90_ws_persistent kernel that follow from its options alone: how the consumer
// warpgroups share a tile, the shape of their wgmmas, and how the staged epilogue cuts their rows.
// Pure functions of the Config, shared by the lowering's builders and its launch contract.
#include "schedule/config.h"

namespace kiln::sm90 {

struct Geometry {
  bool pingpong = false;  // consumers=pingpong: two warpgroups take whole tiles in turn
  bool swapped = false;   // swap_ab: B's stage is wgmma's A, so a wgmma block is 64 columns
  bool streamK = false;   // stream_k: units are runs of K steps
  int splits = 1;         // split_k: K slices per tile
  // cluster_m x cluster_n blocks share operands through TMA multicast (1: no cluster).
  int clusterSize = 1;
  // Consumer warpgroups: warps_m along the tile's rows times warps_n along its columns (swap_ab),
  // and the groups of them that hold one tile's accumulators (each of them, or with ping-pong
  // the one whose tile it is).
  int groups = 1, tileGroups = 1;
  // Rows of a tile one consumer warpgroup computes: a share of the tile when the warpgroups
  // cooperate, the whole tile when they take turns; its columns: all of them, or with warps_n a
  // share of whole m64 blocks. Warpgroup wg takes row share wg / warps_n, column share wg % warps_n.
  int rowsPerConsumer = 0, colsPerConsumer = 0;
  // epilogue=tma: rows of one staged piece of a box (the warpgroup's rows, or with store_pieces a
  // piece of them, one TMA store each). A box is one 128-byte swizzled row wide (the widest the
  // 128B swizzle takes): boxCols = 64 columns of a bf16 / f16 output, 32 of an f32 one.
  int rowsPerPiece = 0;
  int cElemBytes = 2, boxCols = 64;
  // A warpgroup's wgmma of one K step: `wgmmaBlocks` m64 blocks, each wgmma N = wgmmaN wide with
  // accPerBlock f32 accumulators per thread. Normally its rows in m64 blocks, each as wide as the
  // tile; swap_ab: its columns in m64 blocks, each as wide as its rows, so each block holds its 64
  // columns x rows transposed.
  int wgmmaBlocks = 0, wgmmaN = 0, accPerBlock = 0;
  // epilogue=tma: the boxes a warpgroup stages at once (store_slots, at most its boxes;
  // 0 without epilogue=tma), and with reuse_stage the boxes past them, staged in the ring stage the
  // tile's K loop read last.
  int cSlots = 0, ringBoxes = 0;

  bool clustered() const { return clusterSize > 1; }
  int accumulators() const { return wgmmaBlocks * accPerBlock; }
};

// cElemBytes: the output's element bytes (2, or 4 for f32), which set the staged box's columns.
Geometry geometryOf(const Config& c, int cElemBytes = 2);

// The elements of K one wgmma reads from each operand's 128-byte row: 16 for 16-bit operands,
// 32 for FP8.
inline int kStepOf(int elemBytes) { return 32 / elemBytes; }

}  // namespace kiln::sm90

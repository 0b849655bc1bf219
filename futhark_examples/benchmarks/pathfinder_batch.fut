-- The PPoPP'19 paper's batched pathfinder: Rodinia's pathfinder (the cheapest path from the top row of a grid
-- to each cell of its last row) over a batch of independent grids. The outer map holds the loop over rows,
-- which holds the map over columns: one grid per thread, per workgroup, or the loop outside and a map over
-- grids and columns, depending on how many grids there are and how wide they are.
--
-- Generate the data files first: python futhark_examples/gen_data.py pathfinder_batch
-- ==
-- entry: main
-- "ci" ci input @ data/pathfinder_batch-ci.in output @ data/pathfinder_batch-ci.out
-- "ci-wide" ci input @ data/pathfinder_batch-ci-wide.in output @ data/pathfinder_batch-ci-wide.out
-- "train-D1" train input @ data/pathfinder_batch-train-D1.in output @ data/pathfinder_batch-train-D1.out
-- "train-D2" train input @ data/pathfinder_batch-train-D2.in output @ data/pathfinder_batch-train-D2.out
-- "D1" paper notune input @ data/pathfinder_batch-D1.in output @ data/pathfinder_batch-D1.out
-- "D2" paper notune input @ data/pathfinder_batch-D2.in output @ data/pathfinder_batch-D2.out

def step [n] (prev: [n]i32) (weights: [n]i32): [n]i32 =
  map (\i -> let left = if i > 0 then prev[i-1] else prev[i]
             let right = if i < n-1 then prev[i+1] else prev[i]
             in weights[i] + i32.min prev[i] (i32.min left right))
      (iota n)

def pathfinder [rows][cols] (wall: [rows][cols]i32): [cols]i32 =
  loop costs = copy wall[0] for t in 1..<rows do step costs wall[t]

entry main [batch][rows][cols] (walls: [batch][rows][cols]i32): [batch][cols]i32 =
  map pathfinder walls

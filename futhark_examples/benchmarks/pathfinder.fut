-- Rodinia's pathfinder: the cheapest path from the top row of a grid of weights to each cell of the bottom
-- row, moving down one row at a time to one of the three cells below. One row is one data-parallel step;
-- the rows are a sequential loop.
--
-- Generate the data files first: python futhark_examples/gen_data.py pathfinder
-- ==
-- entry: main
-- "ci" ci input @ data/pathfinder-ci.in output @ data/pathfinder-ci.out
-- "D1" paper notune input @ data/pathfinder-D1.in output @ data/pathfinder-D1.out

-- One step: each cell adds its weight to the cheapest of the (up to) three cells above it.
def step [n] (prev: [n]i32) (weights: [n]i32): [n]i32 =
  map (\i -> let left = if i > 0 then prev[i-1] else prev[i]
             let right = if i < n-1 then prev[i+1] else prev[i]
             in weights[i] + i32.min prev[i] (i32.min left right))
      (iota n)

entry main [rows][cols] (wall: [rows][cols]i32): [cols]i32 =
  loop costs = wall[0] for t in 1..<rows do step costs wall[t]

-- Pathfinder-like dynamic programming: a loop over the rows, each a map over the columns taking the
-- cheapest of the three neighbours in the previous row.
-- ==
-- input { [[5i32, 3i32, 6i32, 8i32, 2i32, 3i32], [9i32, 3i32, 3i32, 5i32, 7i32, 2i32], [5i32, 2i32, 6i32,
--   6i32, 6i32, 5i32], [7i32, 6i32, 1i32, 9i32, 3i32, 1i32], [8i32, 4i32, 4i32, 1i32, 9i32, 9i32]] }
-- output { [22i32, 13i32, 13i32, 10i32, 19i32, 19i32] }
-- input { [[5i32, 3i32, 6i32, 8i32, 2i32, 3i32]] }
-- output { [5i32, 3i32, 6i32, 8i32, 2i32, 3i32] }
-- input { [[5i32], [9i32], [5i32], [7i32], [8i32]] }
-- output { [34i32] }

entry main [rows][cols] (wall: [rows][cols]i32): [cols]i32 =
  loop prev = wall[0] for r < rows - 1 do
    map (\j ->
           let left = if j > 0 then prev[j - 1] else i32.highest
           let right = if j < cols - 1 then prev[j + 1] else i32.highest
           in wall[r + 1, j] + i32.min prev[j] (i32.min left right))
        (iota cols)

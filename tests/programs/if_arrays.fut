-- if with array results: at the top level, and inside a map (each row chooses a branch).
-- ==
-- entry: main
-- input { [1i32, -2i32, 3i32] true }
-- output { [2i32, -4i32, 6i32] }
-- input { [1i32, -2i32, 3i32] false }
-- output { [-1i32, 2i32, -3i32] }

-- ==
-- entry: rows
-- input { [[1i32, -2i32], [3i32, 4i32], [-5i32, -6i32]] }
-- output { [[2i32, -1i32], [4i32, 5i32], [0i32, 0i32]] }

entry main [n] (xs: [n]i32) (b: bool): [n]i32 =
  if b then map (* 2) xs else map (\x -> -x) xs

entry rows [n][m] (xss: [n][m]i32): [n][m]i32 =
  map (\row -> if row[0] > 0 then map (+ 1) row else replicate m 0) xss

-- A branch that consumes an array the other returns (accelerate's nbody-bh octree.fut): per row, a loop
-- updating a fresh array in place, or that array unchanged.
-- ==
-- entry: consumed_in_a_branch
-- input { [true, false, true] }
-- output { [[-1i32, -1i32, -1i32], [0i32, 1i32, -1i32], [-1i32, -1i32, -1i32]] }

entry consumed_in_a_branch (leaf: []bool) : [][3]i32 =
  map (\l ->
         let arr = replicate 3 (-1i32)
         let children = if l then arr
                        else let (arr', _) = loop (arr, k) = (arr, 0i32) while k < 2 do
                                               let arr[k] = k in (arr, k + 1)
                             in arr'
         in children) leaf

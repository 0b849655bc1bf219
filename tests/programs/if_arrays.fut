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

-- concat and ++ of one- and two-dimensional arrays, and length of the result.
-- ==
-- entry: main
-- input { [1i32, 2i32, 3i32] [9i32, 8i32] }
-- output { [1i32, 2i32, 3i32, 9i32, 8i32] [1i32, 2i32, 3i32, 9i32, 8i32, 1i32, 2i32, 3i32] 5i64 }
-- input { empty([0]i32) [9i32, 8i32] }
-- output { [9i32, 8i32] [9i32, 8i32] 2i64 }

-- ==
-- entry: rows
-- input { [[0i32, 1i32], [2i32, 3i32]] [[0i32, 10i32], [20i32, 30i32]] }
-- output { [[0i32, 1i32], [2i32, 3i32], [0i32, 10i32], [20i32, 30i32]] }

entry main [n][m] (xs: [n]i32) (ys: [m]i32): ([]i32, []i32, i64) =
  let zs = concat xs ys
  in (zs, xs ++ ys ++ xs, length zs)

entry rows [n][m][k] (xss: [n][k]i32) (yss: [m][k]i32): [][k]i32 = concat xss yss

-- transpose, twice, and the row sums of a transposed matrix (the column sums).
-- ==
-- input { [[-3i32, -1i32, 1i32], [3i32, 5i32, 7i32]] }
-- output { [[-3i32, 3i32], [-1i32, 5i32], [1i32, 7i32]] [[-3i32, -1i32, 1i32], [3i32, 5i32, 7i32]] [0i32,
--   4i32, 8i32] }
-- random input { [40][70]i32 }
-- auto output

entry main [n][m] (xss: [n][m]i32): ([m][n]i32, [n][m]i32, [m]i32) =
  let t = transpose xss
  in (t, transpose t, map (\r -> reduce (+) 0 r) t)

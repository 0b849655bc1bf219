-- filter inside a map: each row's count of positive elements and their sum (the filtered arrays have
-- different lengths, but only scalars leave the map).
-- ==
-- input { [[1i32, -2i32, 3i32, 0i32], [-1i32, -1i32, -1i32, -1i32], [5i32, 6i32, 7i32, 8i32]] }
-- output { [2i64, 0i64, 4i64] [4i32, 0i32, 26i32] }

entry main [n][m] (xss: [n][m]i32): ([n]i64, [n]i32) =
  unzip (map (\row -> let pos = filter (> 0) row in (length pos, reduce (+) 0 pos)) xss)

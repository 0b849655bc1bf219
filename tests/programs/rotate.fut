-- rotate r xs: element i of the result is xs[(i + r) mod n], for positive, negative and large r.
-- ==
-- entry: main
-- input { [1i32, 2i32, 3i32, 4i32, 5i32] 0i64 }
-- output { [1i32, 2i32, 3i32, 4i32, 5i32] [1i32, 2i32, 3i32, 4i32, 5i32] }
-- input { [1i32, 2i32, 3i32, 4i32, 5i32] 1i64 }
-- output { [2i32, 3i32, 4i32, 5i32, 1i32] [5i32, 1i32, 2i32, 3i32, 4i32] }
-- input { [1i32, 2i32, 3i32, 4i32, 5i32] 2i64 }
-- output { [3i32, 4i32, 5i32, 1i32, 2i32] [4i32, 5i32, 1i32, 2i32, 3i32] }
-- input { [1i32, 2i32, 3i32, 4i32, 5i32] -1i64 }
-- output { [5i32, 1i32, 2i32, 3i32, 4i32] [2i32, 3i32, 4i32, 5i32, 1i32] }
-- input { [1i32, 2i32, 3i32, 4i32, 5i32] 7i64 }
-- output { [3i32, 4i32, 5i32, 1i32, 2i32] [4i32, 5i32, 1i32, 2i32, 3i32] }

-- ==
-- entry: rows
-- input { [[0i32, 1i32, 2i32], [3i32, 4i32, 5i32]] }
-- output { [[1i32, 2i32, 0i32], [4i32, 5i32, 3i32]] }

entry main [n] (xs: [n]i32) (r: i64): ([n]i32, [n]i32) = (rotate r xs, rotate (-r) xs)

entry rows [n][m] (xss: [n][m]i32): [n][m]i32 = map (rotate 1) xss

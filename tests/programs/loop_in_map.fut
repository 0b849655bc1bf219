-- A sequential loop with array state inside a map over rows; the loop's body is itself a map.
-- ==
-- input { [[1i32, 0i32, 0i32, 0i32], [1i32, 2i32, 3i32, 4i32], [0i32, -1i32, 0i32, 1i32]] 0i32 }
-- output { [[1i32, 0i32, 0i32, 0i32], [1i32, 2i32, 3i32, 4i32], [0i32, -1i32, 0i32, 1i32]] }
-- input { [[1i32, 0i32, 0i32, 0i32], [1i32, 2i32, 3i32, 4i32], [0i32, -1i32, 0i32, 1i32]] 1i32 }
-- output { [[1i32, 0i32, 0i32, 1i32], [3i32, 5i32, 7i32, 5i32], [-1i32, -1i32, 1i32, 1i32]] }
-- input { [[1i32, 0i32, 0i32, 0i32], [1i32, 2i32, 3i32, 4i32], [0i32, -1i32, 0i32, 1i32]] 3i32 }
-- output { [[1i32, 1i32, 3i32, 3i32], [20i32, 24i32, 20i32, 16i32], [-2i32, 2i32, 2i32, -2i32]] }

entry main [n][m] (xss: [n][m]i32) (k: i32): [n][m]i32 =
  map (\row -> loop r = row for _i < k do map (\j -> r[j] + r[(j + 1) % m]) (iota m)) xss

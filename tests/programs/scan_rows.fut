-- A scan inside a map: the prefix sums of every row (a segmented scan after flattening).
-- ==
-- entry: main
-- input { [[1i32, 2i32, 3i32], [4i32, -5i32, 6i32]] }
-- output { [[1i32, 3i32, 6i32], [4i32, -1i32, 5i32]] }
-- random input { [30][100]i32 }
-- auto output

-- ==
-- entry: maxes
-- input { [[1.0f32, 2.0f32, 3.0f32], [4.0f32, -5.0f32, 6.0f32]] }
-- output { [[1.0f32, 2.0f32, 3.0f32], [4.0f32, 4.0f32, 6.0f32]] }

entry main [n][m] (xss: [n][m]i32): [n][m]i32 = map (\row -> scan (+) 0 row) xss

entry maxes [n][m] (xss: [n][m]f32): [n][m]f32 = map (scan f32.max (-f32.inf)) xss

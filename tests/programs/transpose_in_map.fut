-- transpose inside a map (a rearrangement of the inner dimensions), and a matrix product per batch.
-- ==
-- entry: main
-- input { [[[0i32, 1i32, 2i32], [3i32, 4i32, 5i32]], [[6i32, 7i32, 8i32], [9i32, 10i32, 11i32]]] }
-- output { [[[0i32, 3i32], [1i32, 4i32], [2i32, 5i32]], [[6i32, 9i32], [7i32, 10i32], [8i32, 11i32]]] }

-- ==
-- entry: gram
-- input { [[[0.0f32, 1.0f32, 2.0f32], [3.0f32, 4.0f32, 5.0f32]], [[6.0f32, 7.0f32, 8.0f32], [9.0f32, 10.0f32,
--   11.0f32]]] }
-- output { [[[5.0f32, 14.0f32], [14.0f32, 50.0f32]], [[149.0f32, 212.0f32], [212.0f32, 302.0f32]]] }
-- random input { [3][8][16]f32 }
-- auto output

entry main [b][n][m] (xsss: [b][n][m]i32): [b][m][n]i32 = map transpose xsss

entry gram [b][n][m] (xsss: [b][n][m]f32): [b][n][n]f32 =
  map (\xss -> map (\xs -> map (\ys -> reduce (+) 0 (map2 (*) xs ys)) xss) xss) xsss

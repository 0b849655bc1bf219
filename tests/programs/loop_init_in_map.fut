-- A loop inside a map whose initial value is an array computed earlier in the map, and whose body reduces
-- it: the version that moves the map inside the loop copies the initial values over the map's context.
-- Each row: k rounds of taking the largest remaining element out (set to 0).
-- ==
-- input { 2i64 [[3, 1, 4, 1, 5], [9, 2, 6, 5, 3]] }
-- output { [[10, 8], [18, 12]] }
-- input { 0i64 [[3, 1, 4], [1, 5, 9], [2, 6, 5]] }
-- output { empty([3][0]i32) }
-- input { 3i64 [[7, 7, 7]] }
-- output { [[14, 14, 14]] }
-- input { 1i64 empty([0][4]i32) }
-- output { empty([0][1]i32) }

entry main [n][m] (k: i64) (xss: [n][m]i32): [n][k]i32 =
  map (\xs ->
         let doubled = map (* 2) xs
         let (taken, _) =
           loop (taken, rest) = (replicate k 0, doubled) for i < k do
             let (largest, at) = reduce (\(a, i) (b, j) -> if a > b || (a == b && i < j) then (a, i) else (b, j))
                                        (i32.lowest, -1) (zip rest (iota m))
             in (taken with [i] = largest, rest with [at] = 0)
         in taken)
      xss

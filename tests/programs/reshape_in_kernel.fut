-- flatten and unflatten inside kernels: each row is reshaped (a copy by flat index), in a thread's own array
-- and in a workgroup's, and read back in another shape.
-- ==
-- input { [[1i32, 2i32, 3i32, 4i32, 5i32, 6i32], [6i32, 5i32, 4i32, 3i32, 2i32, 1i32]] }
-- output { [[1i32, 4i32, 2i32, 5i32, 3i32, 6i32], [6i32, 3i32, 5i32, 2i32, 4i32, 1i32]] [21i32, 21i32] }
-- input { empty([0][6]i32) }
-- output { empty([0][6]i32) empty([0]i32) }

entry main [n] (xss: [n][6]i32): ([n][6]i32, [n]i32) =
  let swapped = map (\xs -> let m = unflatten (map (+ 0) xs :> [2*3]i32)
                            in flatten (transpose m) :> [6]i32) xss
  let sums = map (\xs -> let m = unflatten (map (* 1) xs :> [3*2]i32)
                         in reduce (+) 0 (map (\r -> r[0] + r[1]) m)) xss
  in (swapped, sums)

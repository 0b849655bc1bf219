-- In-place updates of slices: xs with [i:j] = ys, with a stride, a row or a column of a matrix, and
-- let xs[i:j] = ys. The value must have the slice's shape, and the slice must lie in the array (an empty
-- slice always does); both are checked at run time.
-- ==
-- entry: main
-- input { [1i32, 2i32, 3i32, 4i32, 5i32, 6i32] 1i64 3i64 [10i32, 20i32] }
-- output { [1i32, 10i32, 20i32, 4i32, 5i32, 6i32] [7i32, 2i32, 7i32, 4i32, 7i32, 6i32] [1i32, 2i32, 3i32, 4i32, 20i32, 10i32] }
-- input { [1i32, 2i32, 3i32] 2i64 2i64 empty([0]i32) }
-- output { [1i32, 2i32, 3i32] [7i32, 2i32, 7i32] [1i32, 2i32, 3i32] }
-- input { [1i32, 2i32, 3i32] 0i64 2i64 [1i32, 2i32, 3i32] }
-- error: slice_updates.fut:36:\d+: .*shape
-- input { [1i32, 2i32, 3i32] 2i64 4i64 [1i32, 2i32] }
-- error: slice_updates.fut:36:\d+: .*out of bounds

-- ==
-- entry: matrix
-- input { [[1i32, 2i32, 3i32], [4i32, 5i32, 6i32]] 1i64 2i64 }
-- output { [[1i32, 2i32, 0i32], [9i32, 9i32, 0i32]] }
-- input { [[1i32, 2i32, 3i32], [4i32, 5i32, 6i32]] 2i64 0i64 }
-- error: out of bounds

-- ==
-- entry: in_kernels
-- input { [[1i32, 2i32, 3i32, 4i32], [5i32, 6i32, 7i32, 8i32]] 1i64 }
-- output { [[1i32, 0i32, 0i32, 4i32], [5i32, 0i32, 0i32, 8i32]] }
-- input { [[1i32, 2i32, 3i32, 4i32], [5i32, 6i32, 7i32, 8i32]] 3i64 }
-- error: slice_updates.fut:46:\d+: .*out of bounds
-- input { empty([0][4]i32) 1i64 }
-- output { empty([0][4]i32) }

-- writes ys into xs[i:j], 7 into every other element, and ys reversed at the end (a negative stride)
entry main [n][m] (xs: *[n]i32) (i: i64) (j: i64) (ys: [m]i32): ([n]i32, [n]i32, [n]i32) =
  let k = (n + 1) / 2
  let evens = copy xs with [0:n:2] = replicate k 7
  let back = copy xs with [n-1:n-1-m:-1] = ys
  let xs[i:j] = ys
  in (xs, evens, back)

-- a row (xss with [i, :] = row) and a column (xss with [:, j] = col)
entry matrix [n][m] (xss: *[n][m]i32) (i: i64) (j: i64): [n][m]i32 =
  let xss = xss with [i, :] = replicate m 9
  in xss with [:, j] = replicate n 0

-- a slice update of a row inside a map: the kernel checks the bounds
entry in_kernels [n][m] (xss: [n][m]i32) (i: i64): [n][m]i32 =
  map (\xs -> copy xs with [i:i+2] = [0, 0]) xss

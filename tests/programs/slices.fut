-- Slices: a[i:j], a[:j], a[i:], strides, two-dimensional slices; a slice out of bounds is a run-time error.
-- ==
-- entry: main
-- input { [10i32, 11i32, 12i32, 13i32, 14i32, 15i32] 1i64 4i64 }
-- output { [11i32, 12i32, 13i32] [10i32] [14i32, 15i32] 36i32 }
-- input { [10i32, 11i32, 12i32, 13i32, 14i32, 15i32] 0i64 0i64 }
-- output { empty([0]i32) empty([0]i32) [10i32, 11i32, 12i32, 13i32, 14i32, 15i32] 0i32 }
-- input { [10i32, 11i32, 12i32, 13i32, 14i32, 15i32] 2i64 6i64 }
-- output { [12i32, 13i32, 14i32, 15i32] [10i32, 11i32] empty([0]i32) 54i32 }
-- input { [10i32, 11i32, 12i32, 13i32, 14i32, 15i32] 2i64 7i64 }
-- error: out of bounds|[Ii]nvalid
-- input { [10i32, 11i32, 12i32, 13i32, 14i32, 15i32] 4i64 2i64 }
-- error: out of bounds|[Ii]nvalid

-- ==
-- entry: strided
-- input { [10i32, 11i32, 12i32, 13i32, 14i32, 15i32] }
-- output { [10i32, 12i32, 14i32] [11i32, 13i32, 15i32] }
-- input { [1i32, 2i32, 3i32] }
-- output { [1i32, 3i32] [2i32] }

-- ==
-- entry: rows
-- input { [[0i32, 1i32, 2i32, 3i32, 4i32], [5i32, 6i32, 7i32, 8i32, 9i32], [10i32, 11i32, 12i32, 13i32,
--   14i32], [15i32, 16i32, 17i32, 18i32, 19i32]] }
-- output { [[5i32, 6i32], [10i32, 11i32]] [1i32, 2i32, 3i32, 4i32] [2i32, 7i32, 12i32, 17i32] }

entry main [n] (xs: [n]i32) (i: i64) (j: i64): ([]i32, []i32, []i32, i32) =
  (xs[i:j], xs[:i], xs[j:], reduce (+) 0 xs[i:j])

entry strided [n] (xs: [n]i32): ([]i32, []i32) = (xs[::2], xs[1::2])

entry rows [n][m] (xss: [n][m]i32): ([][]i32, []i32, []i32) = (xss[1:3, 0:2], xss[0, 1:], xss[:, 2])

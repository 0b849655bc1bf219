-- flatten and unflatten (the sizes of the result come from the type [n*m]); a coercion to a size with a
-- different number of elements is a run-time error.
-- ==
-- entry: main
-- input { [[0i32, 1i32, 2i32, 3i32], [4i32, 5i32, 6i32, 7i32], [8i32, 9i32, 10i32, 11i32]] }
-- output { [0i32, 1i32, 2i32, 3i32, 4i32, 5i32, 6i32, 7i32, 8i32, 9i32, 10i32, 11i32] [[0i32, 1i32, 2i32,
--   3i32], [4i32, 5i32, 6i32, 7i32], [8i32, 9i32, 10i32, 11i32]] [[0i32, 1i32, 2i32], [3i32, 4i32, 5i32],
--   [6i32, 7i32, 8i32], [9i32, 10i32, 11i32]] }

-- ==
-- entry: to_matrix
-- input { [1i32, 2i32, 3i32, 4i32, 5i32, 6i32] 2i64 3i64 }
-- output { [[1i32, 2i32, 3i32], [4i32, 5i32, 6i32]] }
-- input { [1i32, 2i32, 3i32, 4i32, 5i32, 6i32] 6i64 1i64 }
-- output { [[1i32], [2i32], [3i32], [4i32], [5i32], [6i32]] }
-- input { [1i32, 2i32, 3i32, 4i32, 5i32] 2i64 3i64 }
-- error: [Ss]hape|[Ss]ize

entry main [n][m] (xss: [n][m]i32): ([n * m]i32, [n][m]i32, [m][n]i32) =
  let flat = flatten xss
  in (flat, unflatten flat, unflatten (flat :> [m * n]i32))

entry to_matrix [k] (xs: [k]i32) (a: i64) (b: i64): [a][b]i32 = unflatten (xs :> [a * b]i32)

-- Negative sizes and arrays too large for memory are run-time errors at the expression's position, the
-- same under the interpreter and compiled (iota of a negative size is not an empty array).
-- ==
-- entry: rep
-- input { 3i64 7i32 }
-- output { [7i32, 7i32, 7i32] }
-- input { -5i64 1i32 }
-- error: size_errors.fut:35:38: .*Negative size -5 in replicate\.
-- input { 100000000000000i64 1i32 }
-- error: size_errors.fut:35:38: .*Out of memory: replicate would make an array of shape \[100000000000000\]

-- ==
-- entry: io
-- input { 3i64 }
-- output { [0i64, 1i64, 2i64] }
-- input { -5i64 }
-- error: size_errors.fut:37:28: .*Negative size -5 in iota\.
-- input { 4611686018427387904i64 }
-- error: size_errors.fut:37:28: .*Out of memory: iota would make an array of shape \[4611686018427387904\]

-- ==
-- entry: rows
-- input { 2i64 [1i32, 2i32] }
-- output { [[1i32, 2i32], [1i32, 2i32]] }
-- input { -1i64 [1i32, 2i32] }
-- error: size_errors.fut:39:35: .*Negative size -1 in replicate\.

-- ==
-- entry: unflat
-- input { 2i64 2i64 [1i32, 2i32, 3i32, 4i32] }
-- output { [[1i32, 2i32], [3i32, 4i32]] }
-- input { -2i64 -2i64 [1i32, 2i32, 3i32, 4i32] }
-- error: size_errors.fut:42:3: .*Cannot reshape array of shape \[4\] to array of shape \[-2\]\[-2\]\.

entry rep (n: i64) (x: i32): []i32 = replicate n x

entry io (n: i64): []i64 = iota n

entry rows (n: i64) (xs: []i32) = replicate n xs

entry unflat (a: i64) (b: i64) (xs: []i32): [][]i32 =
  unflatten (xs :> [a*b]i32)

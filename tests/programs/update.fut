-- In-place updates a with [i] = v, in a loop, and of a two-dimensional array; out of bounds is an error.
-- ==
-- entry: main
-- input { [5i32, 6i32, 7i32, 8i32] 2i64 -1i32 }
-- output { [5i32, 6i32, -1i32, 8i32] }
-- input { [5i32, 6i32, 7i32, 8i32] 0i64 0i32 }
-- output { [0i32, 6i32, 7i32, 8i32] }
-- input { [5i32, 6i32, 7i32, 8i32] 4i64 0i32 }
-- error: out of bounds

-- ==
-- entry: prefix
-- input { [5i32, 6i32, 7i32, 8i32] }
-- output { [5i32, 11i32, 18i32, 26i32] }
-- input { empty([0]i32) }
-- output { empty([0]i32) }

-- ==
-- entry: diagonal
-- input { 3i64 4i64 }
-- output { [[1i64, 0i64, 0i64, 0i64], [0i64, 2i64, 0i64, 0i64], [0i64, 0i64, 3i64, 0i64]] }
-- input { 2i64 0i64 }
-- output { empty([2][0]i64) }

entry main [n] (xs: [n]i32) (i: i64) (v: i32): [n]i32 =
  let ys = map (\x -> x) xs
  in ys with [i] = v

entry prefix [n] (xs: [n]i32): [n]i32 =
  loop acc = replicate n 0 for k < n do
    let prev = if k == 0 then 0 else acc[k - 1]
    in acc with [k] = prev + xs[k]

entry diagonal (n: i64) (m: i64): [n][m]i64 =
  loop g = replicate n (replicate m 0) for k < i64.min n m do g with [k, k] = k + 1

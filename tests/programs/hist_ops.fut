-- reduce_by_index and hist with each way the backend combines into a bin: atomic add (i32, i64, u64),
-- the other native atomics (max, |), and a compare-and-swap loop (f32 +, min on i32 written as a function
-- call, a user lambda, an operator with a free variable); many elements into few bins; negative and
-- out-of-range indices, no elements, no bins; a strided destination; and reduce_by_index inside a map.

-- ==
-- entry: small_ops
-- input { 4i64 [0i64, 3i64, 3i64, -1i64, 4i64, 1i64, 3i64, 100i64, 0i64] [5i32, -2i32, 7i32, 9i32, 9i32, 3i32, -8i32, 1i32, -6i32] }
-- output { [-6i32, 3i32, 2147483647i32, -8i32] [5i32, 3i32, -2147483648i32, 7i32] [-30i64, 3i64, 1i64, 112i64]
--          [4294967295u32, 3u32, 0u32, 4294967295u32] [5f64, 3f64, -f64.inf, 7f64] [0.25f32, 1.25f32, 0.5f32, -0.25f32] }
-- input { 2i64 empty([0]i64) empty([0]i32) }
-- output { [2147483647i32, 2147483647i32] [-2147483648i32, -2147483648i32] [1i64, 1i64] [0u32, 0u32]
--          [-f64.inf, -f64.inf] [0.5f32, 0.5f32] }
-- input { 0i64 [0i64, 1i64, -1i64] [1i32, 2i32, 3i32] }
-- output { empty([0]i32) empty([0]i32) empty([0]i64) empty([0]u32) empty([0]f64) empty([0]f32) }

entry small_ops [n] (k: i64) (is: [n]i64) (vs: [n]i32) =
  (hist i32.min i32.highest k is vs,
   hist i32.max i32.lowest k is vs,
   hist (\a b -> a * b) 1i64 k is (map i64.i32 vs),
   hist (|) 0u32 k is (map u32.i32 vs),
   hist (\a b -> if a < b then b else a) (-f64.inf) k is (map f64.i32 vs),
   reduce_by_index (replicate k 0.5f32) (+) 0 is (map (\v -> f32.i32 v / 4) vs))

-- 10000 elements into 3 bins.
-- ==
-- entry: contention
-- input { 10000i64 1009u32 }
-- output { [3334i32, 3333i32, 3333i32] [16668333116678331i64, 16661667116631669i64, 16665000116655000i64]
--          [9999f32, 9997f32, 9998f32] [16668333u64, 16661667u64, 16665000u64] [10004u32, 10005u32, 10006u32]
--          [-5000i32, -4998i32, -4997i32] [4951001754003794461i64, 3536429824288424615i64, -2499211540686251325i64]
--          [455u32, 854u32, 150u32] }
-- input { 0i64 7u32 }
-- output { [0i32, 0i32, 0i32] [0i64, 0i64, 0i64] [0f32, 0f32, 0f32] [0u64, 0u64, 0u64] [0u32, 0u32, 0u32]
--          [2147483647i32, 2147483647i32, 2147483647i32] [1i64, 1i64, 1i64] [0u32, 0u32, 0u32] }

entry contention (n: i64) (m: u32) =
  let is = map (\i -> i % 3) (iota n)
  in (hist (+) 0 3 is (replicate n 1i32),
      hist (+) 0 3 is (map (\i -> i * 1000000007) (iota n)),
      hist (+) 0 3 is (map (\i -> f32.i64 (i % 7)) (iota n)),
      hist (+) 0 3 is (map u64.i64 (iota n)),
      hist u32.max 0 3 is (map (\i -> u32.i64 ((i * 7919) % 10007)) (iota n)),
      hist (\a b -> i32.min a b) i32.highest 3 is (map (\i -> i32.i64 ((i * 7919) % 10007) - 5000) (iota n)),
      hist (\a b -> a * b) 1 3 is (map (\i -> 1 + 2 * (i % 5)) (iota n)),
      hist (\a b -> (a + b) % m) 0u32 3 is (map (\i -> u32.i64 ((i * 31) % 1000)) (iota n)))

-- Many bins, few elements: a thread per element straight into the bins (no sub-histograms).
-- ==
-- entry: many_bins
-- input { [5i64, 999i64, 5i64, 1000i64, -7i64, 0i64, 5i64] }
-- output { 3i32 -1i32 5i32 2i32 [0i64, 5i64, 999i64] 0.75f32 1f32 }

entry many_bins [n] (is: [n]i64) =
  let counts = hist (+) 0i32 1000 is (replicate n 1)
  let highest = hist i32.max (-1) 1000 is (map i32.i64 (iota n))
  let fs = hist (+) 0f32 1000 is (map (\i -> f32.i64 i / 4) (iota n))
  in (counts[5], highest[4], reduce (+) 0 counts, counts[999] + counts[0],
      filter (\i -> counts[i] > 0) (iota 1000), fs[5] - fs[0], fs[0] - fs[999])

-- The destination is a column of a matrix (a strided view).
-- ==
-- entry: column
-- input { [[1i32, 10i32], [2i32, 20i32], [3i32, 30i32]] [2i64, 2i64, 0i64, 3i64] [1i32, 2i32, 3i32, 4i32] }
-- output { [13i32, 20i32, 33i32] [[1i32, 10i32], [2i32, 20i32], [3i32, 30i32]] }

entry column [k][n] (xss: [k][2]i32) (is: [n]i64) (vs: [n]i32) =
  (reduce_by_index (copy (transpose xss)[1]) (+) 0 is vs, xss)

-- Inside a kernel: a thread (or a workgroup) per row, the bins in its own memory.
-- ==
-- entry: rows
-- input { 3i64 [[0i64, 1i64, 1i64, 5i64], [2i64, 2i64, -1i64, 0i64]] [[1i32, 2i32, 3i32, 4i32], [5i32, 6i32, 7i32, 8i32]] }
-- output { [[1i32, 5i32, 0i32], [8i32, 0i32, 11i32]] [[-1i64, -6i64, -1i64], [-8i64, -1i64, -30i64]] }
-- input { 0i64 [[0i64, 1i64]] [[1i32, 2i32]] }
-- output { empty([1][0]i32) empty([1][0]i64) }
-- input { 2i64 empty([0][3]i64) empty([0][3]i32) }
-- output { empty([0][2]i32) empty([0][2]i64) }

entry rows [m][n] (k: i64) (iss: [m][n]i64) (vss: [m][n]i32) : ([m][k]i32, [m][k]i64) =
  unzip (map2 (\is vs -> (reduce_by_index (replicate k 0) (+) 0 is vs,
                          hist (\a b -> a * b) (-1) k is (map i64.i32 vs))) iss vss)

-- ==
-- entry: rows_then_map
-- input { [[0i64, 1i64, 1i64, 5i64], [2i64, 2i64, -1i64, 0i64]] [[1f32, 2f32, 3f32, 4f32], [5f32, 6f32, 7f32, 8f32]] }
-- output { [[2f32, 6f32, 1f32], [9f32, 1f32, 12f32]] }

entry rows_then_map [m][n] (iss: [m][n]i64) (vss: [m][n]f32) : [m][3]f32 =
  map2 (\is vs -> let h = hist (+) 0 3 is vs in map (+1) h) iss vss

-- Inside a kernel, the destination a row of an argument.
-- ==
-- entry: rows_dest
-- input { [[1i32, 2i32], [3i32, 4i32]] [[0i64, 0i64, 1i64], [1i64, 9i64, 1i64]] [[5i32, 6i32, 7i32], [1i32, 2i32, 3i32]] }
-- output { [[12i32, 9i32], [3i32, 8i32]] }
entry rows_dest [m][k][n] (ds: [m][k]i32) (iss: [m][n]i64) (vss: [m][n]i32) : [m][k]i32 =
  map3 (\d is vs -> reduce_by_index (copy d) (+) 0 is vs) ds iss vss

-- In a loop on the host: the loop's array is copied each time.
-- ==
-- entry: in_loop
-- input { [0i64, 1i64, 1i64, 2i64] [1f32, 2f32, 3f32, 4f32] }
-- output { [3f32, 15f32, 12f32] }
entry in_loop [n] (is: [n]i64) (vs: [n]f32) : [3]f32 =
  loop acc = replicate 3 0f32 for i < 3 do
    reduce_by_index acc (+) 0 is vs

-- An operator with free variables, and a neutral element that a kernel computed.
-- ==
-- entry: free_array
-- input { [0i64, 1i64, 1i64, 2i64] [1i64, 2i64, 3i64, 4i64] [10i64, 20i64] }
-- output { [21i64, 23i64, 24i64] }
entry free_array [n][m] (is: [n]i64) (vs: [n]i64) (ws: [m]i64) : [3]i64 =
  let lo = reduce i64.min i64.highest ws
  in hist (\a b -> i64.max (i64.max a b) ws[0]) lo 3 is (map (+ws[1]) vs)

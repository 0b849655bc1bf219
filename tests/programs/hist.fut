-- hist and reduce_by_index: one kernel with atomics (atomic add for integer +, a compare-and-swap loop for any
-- other associative and commutative operator); negative and out-of-range indices are ignored.
-- ==
-- entry: counts
-- input { 4i64 [0i64, 3i64, 3i64, -1i64, 4i64, 1i64, 3i64, 100i64] }
-- output { [1i32, 1i32, 0i32, 3i32] }
-- input { 3i64 empty([0]i64) }
-- output { [0i32, 0i32, 0i32] }
-- input { 0i64 [0i64, 1i64] }
-- output { empty([0]i32) }

entry counts [n] (k: i64) (is: [n]i64) : [k]i32 =
  hist (+) 0 k is (replicate n 1)

-- ==
-- entry: by_index
-- input { [10i64, 20i64, 30i64] [2i64, 0i64, 2i64, 5i64, -3i64, 1i64] [5i64, 7i64, 100i64, 1i64, 1i64, -4i64] }
-- output { [17i64, 16i64, 135i64] [10i64, 20i64, 100i64] [7f32, -4f32, 500f32] [7u32, 4294967292u32, 105u32] }
-- input { [1i64, 2i64] empty([0]i64) empty([0]i64) }
-- output { [1i64, 2i64] [1i64, 2i64] [1f32, 1f32] [0u32, 0u32] }

entry by_index [k][n] (dest: *[k]i64) (is: [n]i64) (vs: [n]i64) =
  let maxes = reduce_by_index (copy dest) i64.max i64.lowest is vs
  let fs = reduce_by_index (map f32.i64 (map (\_ -> 1) dest)) (*) 1 is (map f32.i64 vs)
  let us = hist (\a b -> a + b) 0u32 k is (map u32.i64 vs)
  in (reduce_by_index dest (+) 0 is vs, maxes, map2 (+) fs (map (\_ -> 0) fs), us)

-- ==
-- entry: minf64
-- input { [3i64, 0i64, 3i64, 1i64] [2.5f64, -1.0f64, 0.5f64, 4.0f64] }
-- output { [-1.0f64, 4.0f64, f64.inf, 0.5f64] }

entry minf64 [n] (is: [n]i64) (vs: [n]f64) =
  hist f64.min f64.inf 4 is vs

-- A replicate of an iota's row that only kernels read: kernels compute an iota's elements, not those of a
-- replicate of its row, so the host makes the replicate and with it the iota (it read an iota never made).
-- ==
-- input { 3i64 4i64 }
-- output { [[0f32, 1f32, 2f32, 3f32], [1f32, 2f32, 3f32, 4f32], [2f32, 3f32, 4f32, 5f32]] }
-- input { 0i64 2i64 }
-- output { empty([0][2]f32) }

entry main (outer: i64) (inner: i64) : [outer][inner]f32 =
  let rows = replicate outer (iota inner)
  in map2 (\i row -> map (\x -> f32.i64 (x + i)) row) (iota outer) rows

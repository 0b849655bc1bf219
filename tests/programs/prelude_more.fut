-- More of the prelude: exscan, spread, manifest, trace, iterate, iterate_while, iterate_until, not, r32, t32,
-- r64, t64, and the module functions not, num_bits, epsilon, recip, to_i64, from_fraction.
-- ==
-- input { [1,2,3,4] }
-- output { [0,1,3,6] [9,0,7,9,9] [1,2,3,4] [1,2,3,4] 16 7 false 3.0f32 2i32 8i64 3.0f64 -2 32 64 0.25f32 2i64 2.5f64 [[0,0],[1,2],[4,6]] 10 5 true 8 empty([0]i32) }
entry main (xs: []i32) =
  ( exscan (+) 0 xs
  , spread 5 9 [1, 2, -1, 10] [0, 7, 8, 8]
  , manifest xs
  , trace (break xs)
  , iterate 4 (*2) 1
  , iterate_until (> 5) (+3) 1
  , not true
  , r32 3
  , t32 2.7f32
  , t64 8.9
  , r64 3
  , i32.not 1
  , i32.num_bits
  , f64.num_bits
  , f32.recip 4
  , f32.to_i64 2.9f32
  , f64.from_fraction 5 2
  , exscan (map2 (+)) [0, 0] [[1,2],[3,4],[5,6]]
  , iterate_while (\(a, b) -> a < 10) (\(a, b) -> (a + b, b + 1)) (0, 1)
  , f32.epsilon == 1.1920929e-7f32, u8.num_bits
  , exscan (+) 0 (filter (> 10) xs)
  )

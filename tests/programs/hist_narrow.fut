-- Histograms of 8- and 16-bit integers and of bools under builtin operators (Futhark's tests/hist/i8.fut,
-- and16.fut, lor.fut): computed on 32 bits, each kept by truncation, and narrowed back; sums wrap.
-- ==
-- input { [0i64, 1i64, 0i64, 2i64, 1i64] [100i8, 100i8, 100i8, -7i8, 3i8] [-1i16, 12i16, 10i16, 3i16, 6i16]
--         [false, true, false, false, false] [200u8, 100u8, 5u8, 255u8, 1u8] }
-- output { [-56i8, 103i8, -7i8] [10i16, 4i16, 3i16] [false, true, false] [5u8, 1u8, 255u8] [100i8, 100i8, -7i8] }

entry main [n] (is: [n]i64) (a: [n]i8) (b: [n]i16) (c: [n]bool) (d: [n]u8) =
  ( hist (+) 0i8 3 is a
  , hist (i16.&) (-1) 3 is b
  , hist (||) false 3 is c
  , hist u8.min 255u8 3 is d
  , reduce_by_index (replicate 3 (-7i8)) i8.max (-128i8) is a
  )

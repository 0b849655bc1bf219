-- Loops over ranges (`for x in a..<b`) compute their element from the loop counter rather than building the
-- range: at the host level and inside kernels, in every stride, direction and integer type, and the range is
-- still checked.
-- ==
-- input { 10i64 [1i32, 2i32, 3i32] } output { 45i64 30i32 -35i64 [15i32, 30i32, 45i32] 20u8 }
-- input { 0i64 empty([0]i32) } output { 0i64 30i32 0i64 empty([0]i32) 20u8 }
-- input { -1i64 [1i32] } error: Range 0..<-1 is invalid

entry main (n: i64) (xs: []i32) =
  let a = loop acc = 0 for i in 0..<n do acc + i
  let b = loop acc = 0i32 for i in 10..8...0 do acc + i
  let c = loop acc = 0 for i in n..>0 do acc - i + 2
  let d = map (\x -> loop acc = 0 for j in 1...5 do acc + x * j) xs
  let e = loop acc = 0u8 for k in 2u8..4u8..<9u8 do acc + k
  in (a, b, c, d, e)

-- Ranges: a..<b, a..>b, a...b, and with a second element giving the stride (a..s..<b, a..s..>b, a..s...b),
-- of any integer type. An exclusive range whose end is its start is empty; a zero stride, a stride away
-- from the end, or an end on the wrong side of the start is a run-time error naming the range's position.
-- ==
-- entry: main
-- input { 3i64 2i32 5i32 }
-- output { [0i64, 1i64, 2i64] [2i32, 3i32, 4i32] [2i32, 3i32, 4i32, 5i32] [2i32, 4i32] [5i32] [5i32] }
-- input { 0i64 4i32 4i32 }
-- output { empty([0]i64) empty([0]i32) [4i32] empty([0]i32) [7i32, 6i32, 5i32, 4i32] [7i32, 5i32] }
-- input { 3i64 5i32 2i32 }
-- error: ranges.fut:44:14: .*Range 5\.\.<2 is invalid
-- input { -1i64 2i32 5i32 }
-- error: ranges.fut:43:13: .*Range 0\.\.<-1 is invalid

-- ==
-- entry: strides
-- input { 0i64 10i64 3i64 }
-- output { [0i64, 3i64, 6i64, 9i64] [10i64, 7i64, 4i64, 1i64] [0i64, 3i64, 6i64, 9i64] [10i64, 7i64, 4i64, 1i64] }
-- input { 0i64 9i64 3i64 }
-- output { [0i64, 3i64, 6i64, 9i64] [9i64, 6i64, 3i64, 0i64] [0i64, 3i64, 6i64, 9i64] [9i64, 6i64, 3i64, 0i64] }
-- input { 0i64 10i64 0i64 }
-- error: ranges.fut:49:12: .*Range 0\.\.0\.\.<11 is invalid
-- input { 0i64 10i64 -2i64 }
-- error: ranges.fut:49:12: .*Range 0\.\.-2\.\.<11 is invalid

-- ==
-- entry: unsigned
-- input { 250u8 253u8 }
-- output { [250u8, 251u8, 252u8] [253u8, 252u8, 251u8] [250u8, 252u8] }
-- input { 3u8 1u8 }
-- error: Range 3\.\.<1 is invalid

-- ==
-- entry: in_kernels
-- input { [1i64, 2i64, 3i64] 4i64 }
-- output { [6i64, 12i64, 18i64] [[3i64, 2i64], [4i64, 3i64], [5i64, 4i64]] }
-- input { [1i64, 2i64] -1i64 }
-- error: ranges.fut:60:36: .*(Range 0\.\.<-1 is invalid|Negative size -1)
-- input { empty([0]i64) -1i64 }
-- output { empty([0]i64) empty([0][2]i64) }

entry main (n: i64) (a: i32) (b: i32) =
  let zs = 0..<n
  let ups = a..<b
  in (zs, ups, a...b, a..a+2..<b, (a + 3)..>(b - 1), (a + 3)..(a + 1)...b)

-- the stride comes from the second element; `b..(b-s)..>a` counts down
entry strides (a: i64) (b: i64) (s: i64) =
  (a..(a+s)..<(b+1),
   b..(b-s)..>(a-1),
   a..(a+s)...b,
   b..(b-s)...a)

entry unsigned (a: u8) (b: u8) = (a..<b, b..>a, a..(a+2)...b)

-- ranges of invariant bounds inside maps (kernels): the validity check runs there. The version that first makes
-- every row's range as an [n][k] array fails when it allocates that array, at the same position, as a negative
-- size (a map over no rows allocates nothing and succeeds, as Futhark's does).
entry in_kernels [n] (xs: [n]i64) (k: i64): ([n]i64, [n][2]i64) =
  (map (\x -> i64.sum (map (* x) (0..<k))) xs,
   map (\x -> map (+ x) ((2i64..>0) :> [2]i64)) xs)

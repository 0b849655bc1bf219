-- A linear congruential generator per element: u32 arithmetic that relies on wrap-around, in a loop in a map.
-- ==
-- input { [0u32, 1u32, 42u32, 4294967295u32] 1i32 }
-- output { [12345u32, 1103527590u32, 3397979675u32, 3191464396u32] }
-- input { [0u32, 1u32, 42u32, 4294967295u32] 10i32 }
-- output { [551188310u32, 267834847u32, 1535244752u32, 834541773u32] }

entry main [n] (seeds: [n]u32) (steps: i32): [n]u32 =
  map (\s -> loop x = s for _i < steps do x * 1103515245 + 12345) seeds

-- Names shadowed by let, by lambda parameters and by loop parameters.
-- ==
-- input { [1i32, 2i32] 5i32 }
-- output { 12i32 [101i32, 102i32] 15i32 }

entry main [n] (xs: [n]i32) (x: i32): (i32, [n]i32, i32) =
  let x = x + 1
  let x = x * 2
  let ys = map (\x -> x + 100) xs
  let z = loop x = x for i < 3 do x + i32.i64 i
  in (x, ys, z)

-- Anonymous sizes in the parameter types of local functions and lambdas are inferred from their uses, as in
-- Futhark; where a use's size is known only at run time, it is checked there.
-- ==
-- input { [1f32, 2f32, 3f32] [[1f32, 0f32, 0f32], [0f32, 2f32, 0f32]] [4f32, 5f32, 6f32] }
-- output { 12f32 6f32 [1f32, 2f32] 30f32 10f32 15f32 }
-- input { [1f32, 2f32, 3f32] [[1f32, 0f32, 0f32], [0f32, 2f32, 0f32]] [4f32, 5f32] }
-- error: .

def sum3 (x: [3]f32): f32 = x[0] + x[1] + x[2]

def minimise [k] (start: [k]f32) (objective: [k]f32 -> f32): f32 =
  objective (map (* 2) start)

entry main (xs: [3]f32) (rows: [][3]f32) (ys: []f32) =
  let objective (x: []f32): f32 = sum3 x
  let sum_any (x: []f32) (y: []f32): f32 = f32.sum (map2 (+) x y)
  in (minimise xs objective,
      objective xs,
      map (\(r: []f32) -> sum3 r) rows,
      sum_any ys ys,
      sum_any [1, 2] [3, 4],
      objective ys)

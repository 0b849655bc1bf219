-- The pipeline operators |> and <|.
-- ==
-- input { [1.0f32, -2.0f32, 3.5f32, 0.0f32] }
-- output { 5.0f32 [0.0f32, 3.0f32, 2.5f32, 1.0f32] }

entry main [n] (xs: [n]f32): (f32, [n]f32) =
  let total = xs |> map (* 2) |> reduce (+) 0
  let ys = map f32.abs <| map (\x -> x - 1) xs
  in (total, ys)

-- Option-pricing-like: a map over options, in each a loop over time steps, in each a reduction over paths
-- (the mean payoff max(0, s * growth - k)), averaged over the steps.
-- ==
-- input { [0.5f32, 1.0f32, 1.5f32, 3.0f32] [0.8f32, 1.2f32, 1.0f32, 2.0f32, 0.5f32] 4i32 }
-- output { [0.6165f32, 0.2526f32, 0.10599999f32, 0.0f32] }
-- input { [0.5f32, 1.0f32, 1.5f32, 3.0f32] [0.8f32, 1.2f32, 1.0f32, 2.0f32, 0.5f32] 1i32 }
-- output { [0.6f32, 0.24000001f32, 0.1f32, 0.0f32] }
-- random input { [50]f32 [200]f32 10i32 }
-- auto output

entry main [n][p] (strikes: [n]f32) (paths: [p]f32) (steps: i32): [n]f32 =
  map (\k ->
         let price = loop acc = 0f32 for t < steps do
                       let growth = 1 + 0.01 * f32.i32 t
                       let payoff = reduce (+) 0 (map (\s -> f32.max 0 (s * growth - k)) paths)
                       in acc + payoff / f32.i64 p
         in price / f32.i32 steps)
      strikes

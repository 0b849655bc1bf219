-- A one-dimensional Jacobi stencil in a loop, with clamped borders.
-- ==
-- input { [0.0f32, 0.0f32, 9.0f32, 0.0f32, 0.0f32, 3.0f32] 0i32 }
-- output { [0.0f32, 0.0f32, 9.0f32, 0.0f32, 0.0f32, 3.0f32] }
-- input { [0.0f32, 0.0f32, 9.0f32, 0.0f32, 0.0f32, 3.0f32] 1i32 }
-- output { [0.0f32, 3.0f32, 3.0f32, 3.0f32, 1.0f32, 2.0f32] }
-- input { [0.0f32, 0.0f32, 9.0f32, 0.0f32, 0.0f32, 3.0f32] 3i32 }
-- output { [1.3333334f32, 2.0f32, 2.4444444f32, 2.4444444f32, 1.9999999f32, 1.7777777f32] }
-- input { [0.0f32, 0.0f32, 9.0f32, 0.0f32, 0.0f32, 3.0f32] 10i32 }
-- output { [1.9021491f32, 1.9474673f32, 2.006808f32, 2.0452168f32, 2.052533f32, 2.0458262f32] }

entry main [n] (xs: [n]f32) (iters: i32): [n]f32 =
  loop cur = xs for _it < iters do
    map (\i -> let l = cur[i64.max 0 (i - 1)]
               let r = cur[i64.min (n - 1) (i + 1)]
               in (l + cur[i] + r) / 3)
        (iota n)

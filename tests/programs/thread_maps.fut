-- A thread's cheap map results recomputed where their elements are read (the inline_thread_maps stage). As
-- in LocVolCalib's implicit steps, one map builds the rows of a tridiagonal system from a thread's row and
-- a shared table, and the scans that solve it read them element by element. A result read inside a nested
-- loop, one that is returned, and one whose input is updated in place afterwards stay in their maps.
-- ==
-- input { [[0.5f32, -1.0f32, 2.0f32, 0.25f32], [1.5f32, 0.0f32, -0.5f32, 3.0f32], [2.0f32, 2.5f32, -3.0f32, 1.0f32]]
--         [[0.1f32, 0.2f32, 0.3f32], [0.4f32, 0.5f32, 0.6f32], [0.7f32, 0.8f32, 0.9f32], [1.0f32, 1.1f32, 1.2f32]]
--         0.75f32 }
-- output { [[0.06648313f32, -0.106477104f32, 0.12023919f32, 0.037953664f32],
--           [0.13863659f32, -0.0060551027f32, -0.045413267f32, 0.10899182f32],
--           [0.14410692f32, 0.13495307f32, -0.13146f32, 0.08319275f32]]
--          [21.25f32, 46.0f32, 81.0f32]
--          [[1.5f32, 0.0f32, 3.0f32, 1.25f32], [2.5f32, 1.0f32, 0.5f32, 4.0f32], [3.0f32, 3.5f32, -2.0f32, 2.0f32]]
--          [4.0f32, 6.0f32, 7.0f32] }
-- input { [[4.0f32]] [[1.0f32, 2.0f32, 3.0f32]] 2.0f32 }
-- output { [[0.08695652f32]] [16.0f32] [[5.0f32]] [11.0f32] }

def tridag [n] (a: [n]f32) (b: [n]f32) (c: [n]f32) (y: [n]f32): [n]f32 =
  let mats = map (\i -> if i > 0 then (b[i], 0 - a[i] * c[i - 1], 1, 0) else (1, 0, 0, 1)) (iota n)
  let scmt = scan (\(a0, a1, a2, a3) (b0, b1, b2, b3) ->
                     let v = 1 / (a0 * b0)
                     in ((b0 * a0 + b1 * a2) * v, (b0 * a1 + b1 * a3) * v,
                         (b2 * a0 + b3 * a2) * v, (b2 * a1 + b3 * a3) * v))
                  (1, 0, 0, 1) mats
  let bp = map (\(t0, t1, t2, t3) -> (t0 * b[0] + t1) / (t2 * b[0] + t3)) scmt
  let lfuns = map (\i -> if i > 0 then (y[i], 0 - a[i] / bp[i - 1]) else (0, 1)) (iota n)
  let cfuns = scan (\(a0, a1) (b0, b1) -> (b0 + b1 * a0, a1 * b1)) (0, 1) lfuns
  let yp = map (\(t0, t1) -> t0 + t1 * y[0]) cfuns
  let yn = yp[n - 1] / bp[n - 1]
  let lbuns = map (\k -> let i = n - k - 1
                         in if k > 0 then (yp[i] / bp[i], 0 - c[i] / bp[i]) else (0, 1)) (iota n)
  let cbuns = scan (\(a0, a1) (b0, b1) -> (b0 + b1 * a0, a1 * b1)) (0, 1) lbuns
  let xr = map (\(t0, t1) -> t0 + t1 * yn) cbuns
  in map (\i -> xr[n - i - 1]) (iota n)

entry main [m][n] (us: [m][n]f32) (ds: [n][3]f32) (mu: f32): ([m][n]f32, [m]f32, [m][n]f32, [m]f32) =
  unzip4 (map (\u ->
                 let sq = map (\v -> v * v) u
                 let (a, b, c) = unzip3 (map2 (\x d -> (0 - mu * d[0] * x, 3 + mu * d[1] + x * x, 0 - mu * d[2])) u ds)
                 let x = tridag a b c (map (\v -> v * 0.5) u)
                 let s = loop acc = 0f32 for i < n do loop acc for j < n do acc + sq[(i + j) % n]
                 let r = map (\v -> v + 1) u
                 let w = map (\v -> v - 1) u
                 let t = map (\v -> v * 2) w
                 let w[0] = 5
                 in (x, s, r, t[0] + w[0]))
              us)

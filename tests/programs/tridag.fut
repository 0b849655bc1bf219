-- A batch of tridiagonal solvers as in LocVolCalib (tridagPar): the forward sweep is a scan over 2x2
-- matrices, the forward and backward substitutions are scans over linear functions. Row i of a x = y is
-- a[i] x[i-1] + b[i] x[i] + c[i] x[i+1] = y[i].
-- ==
-- input { [[0.64f32, 0.25f32, -0.48f32, 0.64f32, -0.74f32, 0.52f32], [-0.34f32, -0.4f32, -0.77f32, -0.71f32,
--   0.9f32, 0.67f32], [0.25f32, 0.2f32, -0.89f32, -0.9f32, -0.03f32, -0.4f32]] [[4.24f32, 5.0f32, 3.75f32,
--   3.66f32, 3.25f32, 4.12f32], [4.29f32, 3.92f32, 3.05f32, 4.24f32, 3.6f32, 4.61f32], [3.2f32, 3.38f32,
--   4.79f32, 3.32f32, 4.44f32, 4.07f32]] [[0.55f32, 0.05f32, -0.54f32, -0.06f32, -0.99f32, -0.5f32],
--   [0.85f32, 0.81f32, -0.48f32, -0.64f32, 0.39f32, 0.23f32], [-0.66f32, 0.47f32, 0.75f32, -0.66f32, 0.8f32,
--   -0.79f32]] [[-3.89f32, -3.38f32, -2.52f32, 4.01f32, -3.35f32, -4.02f32], [2.07f32, -4.46f32, -2.0f32,
--   -1.86f32, -1.78f32, 3.81f32], [-1.19f32, 3.15f32, -1.15f32, -2.9f32, -2.63f32, -4.48f32]] }
-- output { [[-0.8359415f32, -0.6283789f32, -0.58240455f32, 1.1807495f32, -1.0199306f32, -0.84699905f32],
--   [0.654593f32, -0.86847526f32, -0.97992563f32, -0.66676486f32, -0.42396203f32, 0.8880812f32],
--   [-0.17972325f32, 0.9316449f32, 0.07869103f32, -0.9303547f32, -0.39333236f32, -1.1393938f32]] }
-- input { [[0.0f32, 0.0f32, 0.0f32]] [[2.0f32, 2.0f32, 2.0f32]] [[0.0f32, 0.0f32, 0.0f32]] [[2.0f32, 4.0f32,
--   6.0f32]] }
-- output { [[1.0f32, 2.0f32, 3.0f32]] }

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

entry main [m][n] (am: [m][n]f32) (bm: [m][n]f32) (cm: [m][n]f32) (ym: [m][n]f32): [m][n]f32 =
  map4 tridag am bm cm ym

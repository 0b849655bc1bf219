-- LocVolCalib's structure (PPoPP'19, Figure 6): a map over options of a loop over time steps of a map
-- over grid rows, each row solving a tridiagonal system with three scans (tridagPar). Incremental
-- flattening gives the outer map with everything sequential, and, with the loop interchanged outwards
-- (G7), the rows' tridag sequential per thread, in a workgroup (its scans at workgroup level), or fully
-- flattened into segmented scans.
-- ==
-- "small" random input { [2][4][8]f32 [8]f32 3i64 } auto output
-- "wide" random input { [1][2][300]f32 [300]f32 2i64 } auto output
-- "many" random input { [16][32][16]f32 [16]f32 2i64 } auto output

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
  let ufuns = map (\k -> if k > 0 then (yp[n - k - 1] / bp[n - k - 1], 0 - c[n - k - 1] / bp[n - k - 1])
                         else (0, 1)) (iota n)
  let cufuns = scan (\(a0, a1) (b0, b1) -> (b0 + b1 * a0, a1 * b1)) (0, 1) ufuns
  let xs = map (\(t0, t1) -> t0 + t1 * yn) cufuns
  in map (\k -> xs[n - k - 1]) (iota n)

entry main [outer][numX][numY] (grid: [outer][numX][numY]f32) (coef: [numY]f32) (numT: i64)
  : [outer][numX][numY]f32 =
  map (\rows ->
         loop rows for t < numT do
           let dt = 1 / f32.i64 (t + 1)
           in map (\row -> let a = map (\c -> 0 - 0.25 * dt * c) coef
                           let b = map (\c -> 2 + dt * c * c) coef
                           in tridag a b a row) rows)
      grid

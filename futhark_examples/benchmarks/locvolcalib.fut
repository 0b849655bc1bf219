-- FinPar's LocVolCalib: the price, under a local-volatility model, of one option per strike, by an
-- alternating-direction implicit finite-difference scheme over a numX x numY grid, stepping backwards through
-- numT time points. Each step updates the variance, applies the explicit operators in x and in y (stencils of
-- three points), and then solves implicitly, first along x (a tridiagonal system per grid row) and then along y
-- (one per column). The tridiagonal solver is written with scans (a scan of 2 x 2 matrices and two scans of
-- linear functions), so that a workgroup can solve a row together: the outer map over strikes holds the time
-- loop, which holds maps over rows holding the scans. The PPoPP'19 paper found the intra-group version of the
-- solves best on the small and medium datasets and the outer one on the large.
--
-- Generate the data files first: python futhark_examples/gen_data.py locvolcalib
-- ==
-- entry: main
-- "ci" ci input @ data/locvolcalib-ci.in output @ data/locvolcalib-ci.out
-- "ci-odd" ci input @ data/locvolcalib-ci-odd.in output @ data/locvolcalib-ci-odd.out
-- "train-small" train input @ data/locvolcalib-train-small.in output @ data/locvolcalib-train-small.out
-- "train-medium" train input @ data/locvolcalib-train-medium.in output @ data/locvolcalib-train-medium.out
-- "train-large" train input @ data/locvolcalib-train-large.in output @ data/locvolcalib-train-large.out
-- "small" paper notune input @ data/locvolcalib-small.in output @ data/locvolcalib-small.out
-- "medium" paper notune input @ data/locvolcalib-medium.in output @ data/locvolcalib-medium.out
-- "large" paper notune input @ data/locvolcalib-large.in output @ data/locvolcalib-large.out

-- Solves the tridiagonal system with sub-diagonal a, diagonal b, super-diagonal c and right-hand side y. The
-- forward elimination's pivots are a continued fraction (a scan of 2 x 2 matrices, normalised as it goes);
-- the forward and backward substitutions are linear recurrences (scans of composed linear functions).
def tridag [n] (a: [n]f32) (b: [n]f32) (c: [n]f32) (y: [n]f32): [n]f32 =
  let mats = map (\i -> if i > 0 then (b[i], 0 - a[i] * c[i - 1], 1, 0) else (1, 0, 0, 1)) (iota n)
  let products = scan (\(a0, a1, a2, a3) (b0, b1, b2, b3) ->
                         let v = 1 / (a0 * b0)
                         in ((b0 * a0 + b1 * a2) * v, (b0 * a1 + b1 * a3) * v,
                             (b2 * a0 + b3 * a2) * v, (b2 * a1 + b3 * a3) * v))
                      (1, 0, 0, 1) mats
  let pivots = map (\(t0, t1, t2, t3) -> (t0 * b[0] + t1) / (t2 * b[0] + t3)) products
  let forward = scan (\(a0, a1) (b0, b1) -> (b0 + b1 * a0, a1 * b1)) (0, 1)
                     (map (\i -> if i > 0 then (y[i], 0 - a[i] / pivots[i - 1]) else (0, 1)) (iota n))
  let ys = map (\(t0, t1) -> t0 + t1 * y[0]) forward
  let last = ys[n - 1] / pivots[n - 1]
  let backward = scan (\(a0, a1) (b0, b1) -> (b0 + b1 * a0, a1 * b1)) (0, 1)
                      (map (\k -> if k > 0 then (ys[n - k - 1] / pivots[n - k - 1], 0 - c[n - k - 1] / pivots[n - k - 1])
                                  else (0, 1)) (iota n))
  let xs = map (\(t0, t1) -> t0 + t1 * last) backward
  in map (\k -> xs[n - k - 1]) (iota n)

-- The coefficients of the first and second derivatives at each grid point, over its two neighbours (one-sided
-- at the ends): (lower, middle, upper) for each.
def derivatives [n] (xs: [n]f32): (([n]f32, [n]f32, [n]f32), ([n]f32, [n]f32, [n]f32)) =
  let (d, dd) =
    unzip (map (\i -> if i == 0 then let up = xs[1] - xs[0] in ((0, -1 / up, 1 / up), (0, 0, 0))
                      else if i == n - 1 then let low = xs[n - 1] - xs[n - 2] in ((-1 / low, 1 / low, 0), (0, 0, 0))
                      else let low = xs[i] - xs[i - 1]
                           let up = xs[i + 1] - xs[i]
                           let span = low + up
                           in ((-up / low / span, (up / low - low / up) / span, low / up / span),
                               (2 / low / span, -2 * (1 / low + 1 / up) / span, 2 / up / span)))
               (iota n))
  in (unzip3 d, unzip3 dd)

-- (d, dd) applied to the rows of `values` with drift `mu` and variance `var`: the explicit operator.
def explicit [rows][n] (d: ([n]f32, [n]f32, [n]f32)) (dd: ([n]f32, [n]f32, [n]f32))
                       (mu: [rows][n]f32) (var: [rows][n]f32) (values: [rows][n]f32): [rows][n]f32 =
  map3 (\mu_row var_row row ->
          map (\j -> let coef k dk ddk = (mu_row[j] * dk[j] + 0.5 * var_row[j] * ddk[j]) * row[k]
                     let lower = if j > 0 then coef (j - 1) d.0 dd.0 else 0
                     let upper = if j < n - 1 then coef (j + 1) d.2 dd.2 else 0
                     in lower + coef j d.1 dd.1 + upper) (iota n))
       mu var values

-- The implicit step along the rows of `values`: one tridiagonal solve per row.
def implicit [rows][n] (d: ([n]f32, [n]f32, [n]f32)) (dd: ([n]f32, [n]f32, [n]f32)) (dt_inv: f32)
                       (mu: [rows][n]f32) (var: [rows][n]f32) (values: [rows][n]f32): [rows][n]f32 =
  map3 (\mu_row var_row row ->
          let a = map3 (\m v j -> 0 - 0.5 * (m * d.0[j] + 0.5 * v * dd.0[j])) mu_row var_row (iota n)
          let b = map3 (\m v j -> dt_inv - 0.5 * (m * d.1[j] + 0.5 * v * dd.1[j])) mu_row var_row (iota n)
          let c = map3 (\m v j -> 0 - 0.5 * (m * d.2[j] + 0.5 * v * dd.2[j])) mu_row var_row (iota n)
          in tridag a b c row)
       mu var values

def price (num_x: i64) (num_y: i64) (num_t: i64) (s0: f32) (strike: f32) (t: f32) (alpha: f32) (nu: f32)
          (beta: f32): f32 =
  let times = map (\i -> t * f32.i64 i / (f32.i64 num_t - 1)) (iota num_t)
  let dx = 20 * alpha * s0 * f32.sqrt t / f32.i64 num_x
  let dy = 10 * nu * f32.sqrt t / f32.i64 num_y
  let x_index = i64.f32 (s0 / dx)
  let y_index = num_y / 2
  let xs = map (\i -> f32.i64 (i - x_index) * dx + s0) (iota num_x)
  let ys = map (\i -> f32.i64 (i - y_index) * dy + f32.log alpha) (iota num_y)
  let (dx_coefs, dxx_coefs) = derivatives xs
  let (dy_coefs, dyy_coefs) = derivatives ys
  let payoff = replicate num_y (map (\x -> f32.max (x - strike) 0) xs)
  let result =
    loop result = payoff for k < num_t - 1 do
      let t_now = times[num_t - 2 - k]
      let dt_inv = 1 / (times[num_t - 1 - k] - t_now)
      let mu_x = replicate num_y (replicate num_x 0)
      let var_x = map (\y -> map (\x -> f32.exp (2 * (beta * f32.log x + y - 0.5 * nu * nu * t_now))) xs) ys
      let mu_y = replicate num_x (replicate num_y 0)
      let var_y = replicate num_x (replicate num_y (nu * nu))
      let u = map2 (map2 (\e r -> dt_inv * r + 0.5 * e)) (explicit dx_coefs dxx_coefs mu_x var_x result) result
      let v = explicit dy_coefs dyy_coefs mu_y var_y (transpose result)
      let u = map2 (map2 (+)) u (transpose v)
      let u = implicit dx_coefs dxx_coefs dt_inv mu_x var_x u
      let w = map2 (map2 (\ue ve -> dt_inv * ue - 0.5 * ve)) (transpose u) v
      in transpose (implicit dy_coefs dyy_coefs dt_inv mu_y var_y w)
  in result[y_index, x_index]

entry main (outer: i32) (num_x: i32) (num_y: i32) (num_t: i32) (s0: f32) (t: f32) (alpha: f32) (nu: f32)
           (beta: f32): []f32 =
  map (\i -> price (i64.i32 num_x) (i64.i32 num_y) (i64.i32 num_t) s0 (0.001 * f32.i64 i) t alpha nu beta)
      (iota (i64.i32 outer))
